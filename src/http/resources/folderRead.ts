import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { pagingOf, pagingParams, param } from '../params';
import { FOLDER_SORT } from '../../queries/sortableFields';
import { findFolders, folderAccessList, folderDetails, folderRootPath, getFolder } from '../../queries/folderQueries';
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
    async handler({ params, services, principal, setTotalCount }) {
      if (params.at !== undefined) {
        if (!params.parentType || !params.parentId)
          throw new RestError('The at parameter needs parentType and parentId.');
        if (params.text) throw new RestError('The at parameter cannot be combined with text.');
        const past = await listFoldersAt(services, principal.viewer, {
          parentType: params.parentType,
          parentId: params.parentId,
          at: params.at,
          ...(params.name ? { name: params.name } : {}),
          paging: pagingOf(params),
        });
        setTotalCount(past.total);
        return past.rows;
      }
      const page = await findFolders(services, principal.viewer, {
        parentType: params.parentType,
        parentId: params.parentId,
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
    handler: ({ path, params, services, principal }) =>
      params.at !== undefined
        ? getFolderAt(services, principal.viewer, path.id, params.at)
        : getFolder(services, principal.viewer, path.id),
  }),
  route({
    method: 'GET',
    path: ':id/position',
    summary: 'Report the offset of a folder in a list or search.',
    access: 'public',
    scope: [Scope.DATA_READ],
    params: [...folderListingParams],
    handler: ({ path, params, services, principal }) =>
      folderPosition(services, principal.viewer, path.id, {
        parentType: params.parentType,
        parentId: params.parentId,
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
    handler: ({ path, services, principal }) => folderDetails(services, principal.viewer, path.id),
  }),
  route({
    method: 'GET',
    path: ':id/rootpath',
    summary: "Get the path to the root of the folder's hierarchy.",
    access: 'public',
    scope: [Scope.DATA_READ],
    params: [],
    handler: ({ path, services, principal }) => folderRootPath(services, principal.viewer, path.id),
  }),
  route({
    method: 'GET',
    path: ':id/access',
    summary: 'Get the access control list for a folder.',
    access: 'user',
    scope: [Scope.DATA_OWN],
    params: [],
    handler: ({ path, services, principal }) => folderAccessList(services, principal.viewer, path.id),
  }),
];
