import { itemPosition } from '../../queries/listingPosition';
import { deleteMetadataParams, setMetadataParams } from '../metadataParams';
import type { Resource } from '../routeTable';
import { route } from '../routeTable';
import { pagingOf, pagingParams, param } from '../params';
import { FILE_SORT, ITEM_SORT } from '../../queries/sortableFields';
import { type Metadata } from '../../domain/metadata';
import {
  copyItem,
  createItem,
  deleteItem,
  deleteItemMetadata,
  setItemMetadata,
  updateItem,
} from '../../commands/itemCommands';
import { currentItemView, findItems, itemView } from '../../queries/itemQueries';
import { itemFiles } from '../../queries/fileQueries';
import { model } from '../modelParams';
import { itemHistoryRoutes } from './itemHistory';
import { itemDownloadRoutes } from './itemDownload';
import { folderRootPath } from '../../queries/folderQueries';
import { folderView } from '../../queries/views';
import { Scope } from '../../domain/scopes';
import { AccessLevel } from '../../domain/access';
import { signedInUser } from '../principal';

const metadataParam = () =>
  param.json('metadata', { shape: 'object', description: 'A JSON object containing the metadata keys to add' });

/** The folder of an item listing or search: `No such folder` for a miss, an empty id counts as absent (Girder). */
const listingFolder = () =>
  model.optionalParam('folder', 'folderId', AccessLevel.READ, { missing: 'no-such', emptyMeansAbsent: true });

/** What selects and orders an item listing: the listing itself and an item's position in it take the same. */
const itemListingParams = [
  param.string('folderId', { description: 'Pass this to list all items in a folder.' }),
  param.string('text', { description: 'Pass this to perform a full text search for items.' }),
  param.string('name', {
    description: 'Pass to lookup an item by exact name match. Must pass folderId as well when using this.',
  }),
  ...pagingParams(ITEM_SORT),
] as const;

/**
 * Items (Girder's api/v1/item.py): leaves of the hierarchy holding files and metadata. Access is the folder's: READ
 * on the item's folder to see it, WRITE to change it; `folderId` parameters are loaded as model parameters
 * (`Invalid folder id (<id>).`). Responses carry `metadata` (Girder's `meta`) and no `_accessLevel`.
 */
export const itemResource: Resource = {
  name: 'item',
  description: 'Items: the leaves of the hierarchy, holding files and metadata.',
  routes: [
    route({
      method: 'GET',
      path: '',
      summary: 'List or search for items.',
      access: 'public',
      scope: [Scope.DATA_READ],
      params: [...itemListingParams],
      models: { folder: listingFolder() },
      async handler({ params, models: { folder }, services, principal, setTotalCount }) {
        const { rows, total } = await findItems(services, principal.viewer, {
          ...(folder ? { folder } : {}),
          ...(params.text !== undefined ? { text: params.text } : {}),
          ...(params.name !== undefined ? { name: params.name } : {}),
          paging: pagingOf(params),
        });
        setTotalCount(total);
        return rows;
      },
    }),
    route({
      method: 'GET',
      path: ':id/position',
      summary: 'Report the offset of an item in a list or search.',
      access: 'public',
      scope: [Scope.DATA_READ],
      params: [...itemListingParams],
      models: { item: model.path('item', AccessLevel.READ), folder: listingFolder() },
      handler: ({ params, models: { item, folder }, services, principal }) =>
        itemPosition(services, principal.viewer, item.item, {
          ...(folder ? { folder } : {}),
          ...(params.text !== undefined ? { text: params.text } : {}),
          ...(params.name !== undefined ? { name: params.name } : {}),
          paging: pagingOf(params),
        }),
    }),
    route({
      method: 'GET',
      path: ':id',
      summary: 'Get an item by ID.',
      access: 'public',
      scope: [Scope.DATA_READ],
      params: [],
      models: { item: model.path('item', AccessLevel.READ) },
      handler: ({ models: { item } }) => itemView(item.item),
    }),
    route({
      method: 'POST',
      path: '',
      summary: 'Create a new item.',
      access: 'user',
      scope: [Scope.DATA_WRITE],
      params: [
        param.requiredString('folderId', { description: 'The ID of the parent folder.' }),
        param.requiredString('name', { strip: true, description: 'Name for the item.' }),
        param.string('description', { default: '', strip: true, description: 'Description for the item.' }),
        param.flag('reuseExisting', false, { description: 'Return existing item (by name) if it exists.' }),
        metadataParam(),
      ],
      models: { folder: model.param('folder', 'folderId', AccessLevel.WRITE) },
      async handler({ params, models: { folder }, services, principal, meta }) {
        const id = await createItem(
          services,
          {
            folder,
            name: params.name,
            description: params.description ?? '',
            reuseExisting: params.reuseExisting,
            ...(params.metadata !== undefined ? { metadata: params.metadata as Metadata } : {}),
            creatorId: signedInUser(principal)._id,
          },
          meta,
        );
        return currentItemView(services, id);
      },
    }),
    route({
      method: 'PUT',
      path: ':id',
      summary: 'Edit an item or move it to another folder.',
      access: 'user',
      scope: [Scope.DATA_WRITE],
      params: [
        param.string('name', { strip: true, description: 'Name for the item.' }),
        param.string('description', { description: 'Description for the item.' }),
        param.string('folderId', { description: 'Pass this to move the item to a new folder.' }),
        metadataParam(),
      ],
      models: {
        target: model.path('item', AccessLevel.WRITE),
        folder: model.optionalParam('folder', 'folderId', AccessLevel.WRITE, { note: 'a move into that folder' }),
      },
      async handler({ params, models: { target, folder }, services, meta }) {
        const { item } = target;
        await updateItem(
          services,
          {
            itemId: item._id,
            ...(params.name !== undefined ? { name: params.name } : {}),
            ...(params.description !== undefined ? { description: params.description } : {}),
            ...(folder ? { folder } : {}),
          },
          meta,
        );
        // Girder sets the metadata after saving the rename and the move (those stay saved if the metadata fails).
        if (params.metadata !== undefined && Object.keys(params.metadata as object).length > 0) {
          await setItemMetadata(services, item._id, params.metadata as Metadata, false, meta);
        }
        return currentItemView(services, item._id);
      },
    }),
    route({
      method: 'DELETE',
      path: ':id',
      summary: 'Delete an item by ID.',
      access: 'user',
      scope: [Scope.DATA_WRITE],
      params: [],
      models: { target: model.path('item', AccessLevel.WRITE) },
      async handler({ models: { target }, services, meta }) {
        const { item } = target;
        const name = await deleteItem(services, item._id, meta);
        return { message: `Deleted item ${name}.` };
      },
    }),
    route({
      method: 'GET',
      path: ':id/rootpath',
      summary: "Get the path to the root of the item's hierarchy.",
      access: 'public',
      scope: [Scope.DATA_READ],
      params: [],
      models: { item: model.path('item', AccessLevel.READ) },
      async handler({ models: { item }, services, principal }) {
        // Girder's parentsToRoot: the folder's own root path, then the folder itself.
        const { folder } = item;
        const above = await folderRootPath(services, principal.viewer, folder);
        return [...above, { type: 'folder', object: folderView(folder, principal.viewer) }];
      },
    }),
    route({
      method: 'GET',
      path: ':id/files',
      summary: 'Get the files within an item.',
      access: 'public',
      scope: [Scope.DATA_READ],
      // girder_client also sends `id=<itemId>` as a query parameter: undeclared parameters are ignored.
      params: [...pagingParams(FILE_SORT)],
      models: { target: model.path('item', AccessLevel.READ) },
      async handler({ params, models: { target }, services, principal, setTotalCount }) {
        const { item } = target;
        const page = await itemFiles(services, item, pagingOf(params), principal.viewer);
        setTotalCount(page.total);
        return page.rows;
      },
    }),
    route({
      method: 'PUT',
      path: ':id/metadata',
      summary: 'Set metadata fields on an item.',
      access: 'user',
      scope: [Scope.DATA_WRITE],
      params: setMetadataParams(),
      models: { target: model.path('item', AccessLevel.WRITE) },
      async handler({ params, models: { target }, services, meta }) {
        const { item } = target;
        await setItemMetadata(services, item._id, params.metadata as Metadata, params.allowNull, meta);
        return currentItemView(services, item._id);
      },
    }),
    route({
      method: 'DELETE',
      path: ':id/metadata',
      summary: 'Delete metadata fields on an item.',
      access: 'user',
      scope: [Scope.DATA_WRITE],
      params: deleteMetadataParams(),
      models: { target: model.path('item', AccessLevel.WRITE) },
      async handler({ params, models: { target }, services, meta }) {
        const { item } = target;
        await deleteItemMetadata(services, item._id, params.fields, meta);
        return currentItemView(services, item._id);
      },
    }),
    route({
      method: 'POST',
      path: ':id/copy',
      summary: 'Copy an item.',
      access: 'user',
      scope: [Scope.DATA_WRITE],
      params: [
        param.string('folderId', { description: 'The ID of the parent folder.' }),
        param.string('name', { strip: true, description: 'Name for the new item.' }),
        param.string('description', { strip: true, description: 'Description for the new item.' }),
      ],
      // Without folderId the copy lands next to the original, which needs WRITE there.
      models: {
        source: model.path('item', AccessLevel.READ),
        folder: model.folderOr('folderId', AccessLevel.WRITE, 'source'),
      },
      async handler({ params, models: { source, folder }, services, principal, meta }) {
        const { item } = source;
        const id = await copyItem(
          services,
          {
            sourceId: item._id,
            folder,
            creatorId: signedInUser(principal)._id,
            ...(params.name !== undefined ? { name: params.name } : {}),
            ...(params.description !== undefined ? { description: params.description } : {}),
          },
          meta,
        );
        return currentItemView(services, id);
      },
    }),
    ...itemHistoryRoutes,
    ...itemDownloadRoutes,
  ],
};
