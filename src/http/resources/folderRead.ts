import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { pagingOf, pagingParams, param } from '../params';
import { FOLDER_SORT } from '../../queries/sortableFields';
import { findFolders, folderAccessList, folderDetails, folderRootPath } from '../../queries/folderQueries';
import { folderView } from '../../queries/views';
import { AccessLevel } from '../../domain/access';
import { model } from '../modelParams';
import { getFolderAt, listFoldersAt } from '../../queries/pointInTime';
import { RestError } from '../../domain/errors';
import { Scope } from '../../domain/scopes';
import { folderPosition } from '../../queries/listingPosition';

const atParam = () =>
  param.timeText('at', {
    description: 'Read as it was then: an ISO 8601 time or a log position (ADMIN on the folder or parent now).',
  });

const PARENT_TYPES = ['folder', 'user', 'collection'] as const;

/** What selects and orders a folder listing: the listing itself and a folder's position in it take the same. */
const folderListingParams = [
  param.enum('parentType', PARENT_TYPES, { description: "Type of the folder's parent" }),
  param.string('parentId', { description: "The ID of the folder's parent." }),
  param.string('text', { description: 'Pass to perform a text search.' }),
  param.string('name', {
    description:
      'Pass to lookup a folder by exact name match. Must pass parentType and parentId as well when using this.',
  }),
  ...pagingParams(FOLDER_SORT),
] as const;

/** The folder routes that only read: listing and search, one folder, its details, root path and access list. */
export const folderReadRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '',
    summary: 'Search for folders by certain properties.',
    access: 'public',
    scope: [Scope.DATA_READ],
    params: [...folderListingParams, atParam()],
    validate(params) {
      if (params.at === undefined) return;
      if (!params.parentType || !params.parentId)
        throw new RestError('The at parameter needs parentType and parentId.');
      if (params.text) throw new RestError('The at parameter cannot be combined with text.');
    },
    models: {
      parent: model.optionalParent(AccessLevel.READ, { unless: 'at' }),
      parentThen: model.optionalParent(AccessLevel.ADMIN, { onlyWith: 'at' }),
    },
    async handler({ params, models, services, principal, setTotalCount }) {
      if (params.at !== undefined && models.parentThen) {
        const past = await listFoldersAt(services, principal.viewer, {
          parent: models.parentThen,
          at: params.at,
          ...(params.name ? { name: params.name } : {}),
          paging: pagingOf(params),
        });
        setTotalCount(past.total);
        return past.rows;
      }
      const page = await findFolders(services, principal.viewer, {
        ...(models.parent ? { parent: models.parent } : {}),
        text: params.text,
        name: params.name,
        paging: pagingOf(params),
      });
      setTotalCount(page.total);
      return page.rows;
    },
  }),
  route({
    method: 'GET',
    path: ':id',
    summary: 'Get a folder by ID.',
    access: 'public',
    scope: [Scope.DATA_READ],
    params: [atParam()],
    models: {
      folder: model.path('folder', AccessLevel.READ, {
        unless: 'at',
        note: 'with at: ADMIN on the folder now (a deleted folder: site administrators), checked by the read',
      }),
    },
    handler({ path, params, models: { folder }, services, principal }) {
      if (folder) return folderView(folder, principal.viewer);
      // Not loaded: `at` was given (the declaration's `unless`), and the point-in-time read checks its own rule.
      return getFolderAt(services, principal.viewer, path.id, String(params.at));
    },
  }),
  route({
    method: 'GET',
    path: ':id/position',
    summary: 'Report the offset of a folder in a list or search.',
    access: 'public',
    scope: [Scope.DATA_READ],
    params: [...folderListingParams],
    models: { folder: model.path('folder', AccessLevel.READ), parent: model.optionalParent(AccessLevel.READ) },
    handler: ({ params, models: { folder, parent }, services, principal }) =>
      folderPosition(services, principal.viewer, folder, {
        ...(parent ? { parent } : {}),
        text: params.text,
        name: params.name,
        paging: pagingOf(params),
      }),
  }),
  route({
    method: 'GET',
    path: ':id/details',
    summary: 'Get detailed information about a folder.',
    access: 'public',
    scope: [Scope.DATA_READ],
    params: [],
    models: { folder: model.path('folder', AccessLevel.READ) },
    handler: ({ models: { folder }, services, principal }) => folderDetails(services, principal.viewer, folder),
  }),
  route({
    method: 'GET',
    path: ':id/rootpath',
    summary: "Get the path to the root of the folder's hierarchy.",
    access: 'public',
    scope: [Scope.DATA_READ],
    params: [],
    models: { folder: model.path('folder', AccessLevel.READ) },
    handler: ({ models: { folder }, services, principal }) => folderRootPath(services, principal.viewer, folder),
  }),
  route({
    method: 'GET',
    path: ':id/access',
    summary: 'Get the access control list for a folder.',
    access: 'user',
    scope: [Scope.DATA_OWN],
    params: [],
    models: { folder: model.path('folder', AccessLevel.ADMIN) },
    handler: ({ models: { folder }, services }) => folderAccessList(services, folder),
  }),
];
