import { DEFAULT_ASSETSTORE_ID, parseBlobRef } from '../domain/assetstoreBlobRef';
import type { ReadModelDeps } from './readDeps';
import type { FileDoc, FolderDoc, ItemDoc } from '../ports/readModel';
import type { UploadState } from '../domain/upload';
import { type Viewer } from '../domain/access';
import { RestError } from '../domain/errors';
import type { Paging } from '../domain/paging';

/** What these reads touch (src/queries/readDeps.ts). */
type Deps = ReadModelDeps<'items'>;

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
 * Girder's File filter: `_id, name, mimeType, size, itemId, creatorId, created, exts`, `sha512` when the file has
 * it (the field the `hashsum_download` plugin exposes at READ level), and `assetstoreId` for site administrators
 * (exposed at SITE_ADMIN level).
 */
export function fileView(file: FileDoc, viewer: Viewer | null): View {
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
    ...(viewer?.admin ? { assetstoreId: parseBlobRef(file.blobId).assetstoreId } : {}),
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

export interface FindItemsInput {
  /** The folder, loaded at READ by the route, when `folderId` was given. */
  folder?: FolderDoc;
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
  deps: Deps,
  viewer: Viewer | null,
  input: FindItemsInput,
): Promise<{ rows: View[]; total: number }> {
  const paging = { ...input.paging, sort: itemSortField(input.paging.sort) };
  if (input.folder) {
    const page = await deps.readModel.items.listInFolder({
      folderId: input.folder._id,
      ...(input.name ? { name: input.name } : {}),
      ...(input.text ? { text: input.text } : {}),
      paging,
    });
    return { rows: page.rows.map(itemView), total: page.total };
  }
  if (input.text !== undefined) {
    const page = await deps.readModel.items.search({ text: input.text, viewer, paging });
    return { rows: page.rows.map(itemView), total: page.total };
  }
  throw new RestError('Invalid search mode.');
}

/** The item as the read model now shows it after a write (a concurrent delete may have removed it since). */
export async function currentItemView(deps: Deps, id: string): Promise<View> {
  const doc = await deps.readModel.items.get(id);
  if (!doc) throw new RestError(`Invalid item id (${id}).`);
  return itemView(doc);
}
