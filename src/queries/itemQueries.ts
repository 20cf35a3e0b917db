import { DEFAULT_ASSETSTORE_ID } from '../domain/assetstoreBlobRef';
import type { Services } from '../services';
import type { FileDoc, FolderDoc, ItemDoc } from '../ports/readModel';
import type { UploadState } from '../domain/upload';
import { AccessLevel, accessDeniedMessage, hasAccess, type Level, type Viewer } from '../domain/access';
import { AccessDeniedError, RestError, ValidationError } from '../domain/errors';
import { isObjectId } from '../domain/ids';
import { loadParent } from './loaders';
import type { Paging } from '../domain/paging';

/**
 * Read-side functions of the item and file routes. Items and files have no ACL of their own: access is their
 * folder's (item → folderId, file → item → folder), and a refusal names the item or file (Girder's
 * AccessControlMixin: `Read access denied for item <id> (user <id>).`).
 */

type View = Record<string, unknown>;

/** `metadata` in responses is `meta` in the stored document (sorts on either name mean the same field). */
export function itemSortField(sort: string): string {
  if (sort === 'metadata') return 'meta';
  if (sort.startsWith('metadata.')) return `meta.${sort.slice('metadata.'.length)}`;
  return sort;
}

/** Girder's Item filter: `_id, name, description, folderId, baseParentType/Id, creatorId, created, updated, size,
 * meta`. */
export function itemView(item: ItemDoc): View {
  return {
    _id: item._id,
    _modelType: 'item',
    name: item.name,
    description: item.description,
    folderId: item.folderId,
    baseParentType: item.baseParentType,
    baseParentId: item.baseParentId,
    creatorId: item.creatorId,
    created: item.created,
    updated: item.updated,
    size: item.size,
    metadata: item.meta,
    ...(item.copyOfItem !== undefined ? { copyOfItem: item.copyOfItem } : {}),
  };
}

/**
 * Girder's File filter: `_id, name, mimeType, size, itemId, creatorId, created, exts`, and `sha512` when the file has
 * it (the field the `hashsum_download` plugin exposes at READ level).
 */
export function fileView(file: FileDoc): View {
  return {
    _id: file._id,
    _modelType: 'file',
    name: file.name,
    mimeType: file.mimeType,
    size: file.size,
    itemId: file.itemId,
    creatorId: file.creatorId,
    created: file.created,
    exts: file.exts,
    ...(file.sha512 !== undefined ? { sha512: file.sha512 } : {}),
  };
}

/** The upload record (Girder's raw upload document, minus its assetstore internals). */
export function uploadView(state: UploadState): View {
  const s = state.started;
  if (!s) throw new RestError(`Invalid upload id (${state.uploadId}).`);
  return {
    _id: s.uploadId,
    _modelType: 'upload',
    created: s.created,
    updated: state.updated,
    size: s.size,
    name: s.name,
    mimeType: s.mimeType,
    received: state.received,
    userId: s.userId,
    ...(s.parentType !== undefined ? { parentType: s.parentType, parentId: s.parentId } : {}),
    ...(s.fileId !== undefined ? { fileId: s.fileId } : {}),
    ...(s.reference !== undefined ? { reference: s.reference } : {}),
    assetstoreId: s.assetstoreId ?? DEFAULT_ASSETSTORE_ID,
  };
}

async function folderOf(services: Services, item: ItemDoc): Promise<FolderDoc | null> {
  return services.readModel.folders.get(item.folderId);
}

async function fetchItem(services: Services, id: string): Promise<{ item: ItemDoc; folder: FolderDoc } | null> {
  if (!isObjectId(id)) return null;
  const item = await services.readModel.items.get(id);
  const folder = item && (await folderOf(services, item));
  return item && folder ? { item, folder } : null;
}

/** `:id` of the item routes: `Invalid item id (<id>).`, then the level on the item's folder. */
export async function loadItem(
  services: Services,
  id: string,
  viewer: Viewer | null,
  level: Level,
): Promise<{ item: ItemDoc; folder: FolderDoc }> {
  const found = await fetchItem(services, id);
  if (!found) throw new RestError(`Invalid item id (${id}).`);
  if (!hasAccess(found.folder, viewer, level))
    throw new AccessDeniedError(accessDeniedMessage(level, 'item', id, viewer));
  return found;
}

/** An item named by a parameter (Girder's `load(…, exc=True)`): `No such item: <id>`. */
export async function loadParentItem(
  services: Services,
  id: string,
  viewer: Viewer | null,
  level: Level,
): Promise<{ item: ItemDoc; folder: FolderDoc }> {
  const found = await fetchItem(services, id);
  if (!found) throw new ValidationError(`No such item: ${id}`, 'id');
  if (!hasAccess(found.folder, viewer, level))
    throw new AccessDeniedError(accessDeniedMessage(level, 'item', id, viewer));
  return found;
}

/** A folder named by a model parameter (`folderId` of the item routes): `Invalid folder id (<id>).` */
export async function loadFolderParam(
  services: Services,
  id: string,
  viewer: Viewer | null,
  level: Level,
): Promise<FolderDoc> {
  const folder = isObjectId(id) ? await services.readModel.folders.get(id) : null;
  if (!folder) throw new RestError(`Invalid folder id (${id}).`);
  if (!hasAccess(folder, viewer, level)) throw new AccessDeniedError(accessDeniedMessage(level, 'folder', id, viewer));
  return folder;
}

/** `:id` of the file routes: `Invalid file id (<id>).`, then the level on the folder of the file's item. */
export async function loadFile(
  services: Services,
  id: string,
  viewer: Viewer | null,
  level: Level,
): Promise<{ file: FileDoc; item: ItemDoc; folder: FolderDoc }> {
  const file = isObjectId(id) ? await services.readModel.files.get(id) : null;
  const found = file && (await fetchItem(services, file.itemId));
  if (!file || !found) throw new RestError(`Invalid file id (${id}).`);
  if (!hasAccess(found.folder, viewer, level))
    throw new AccessDeniedError(accessDeniedMessage(level, 'file', id, viewer));
  return { file, ...found };
}

export interface FindItemsInput {
  folderId?: string;
  text?: string;
  name?: string;
  paging: Paging;
}

/**
 * `GET /item` (Girder's Item.find): with `folderId`, the items of that folder (loaded at READ, `No such folder`),
 * optionally by exact name and text; else with `text` (even empty), a global text search over items in folders the
 * caller may read; else `Invalid search mode.`.
 */
export async function findItems(
  services: Services,
  viewer: Viewer | null,
  input: FindItemsInput,
): Promise<{ rows: View[]; total: number }> {
  const paging = { ...input.paging, sort: itemSortField(input.paging.sort) };
  if (input.folderId) {
    const parent = await loadParent(services, 'folder', input.folderId, viewer, AccessLevel.READ);
    const page = await services.readModel.items.listInFolder({
      folderId: parent.doc._id,
      ...(input.name ? { name: input.name } : {}),
      ...(input.text ? { text: input.text } : {}),
      paging,
    });
    return { rows: page.rows.map(itemView), total: page.total };
  }
  if (input.text !== undefined) {
    const page = await services.readModel.items.search({ text: input.text, viewer, paging });
    return { rows: page.rows.map(itemView), total: page.total };
  }
  throw new RestError('Invalid search mode.');
}
