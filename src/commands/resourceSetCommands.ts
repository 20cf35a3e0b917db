import type { RequestMeta } from './requestMeta';
import type { FolderDoc, ItemDoc } from '../ports/readModel';
import { type Viewer } from '../domain/access';
import { ValidationError } from '../domain/errors';
import { refuseTakenSiblingName } from '../domain/folder';
import type { LoadedParent, LoadedResources } from '../queries/models';
import { updateFolder } from './folderCommands';
import { copyFolder, deleteFolder } from './folderSubtreeCommands';
import { copyItem, deleteItem, updateItem } from './itemCommands';
import { deleteCollection } from './collectionCommands';
import type { BlobDeps } from './writeDeps';

/**
 * Requests that name many resources (`PUT /resource/move`, `POST /resource/copy`, `DELETE /resource`) are decided
 * whole (issue 27, rule 4): every resource is loaded with the level its operation needs (the route's declared
 * resource set), and every check that does not need a write is made, before the first write. A refusal (403, 400) thus leaves everything as it was; Girder
 * acts resource by resource and can refuse after some have moved, been copied or deleted.
 *
 * Each `plan…` function makes the checks and returns the writes, which run in the request's order, each its own
 * atomic append (a folder copy or delete is one event for the whole subtree). What the checks cannot foresee is a
 * concurrent write between them and the writes (another request deleting or renaming one of the resources): the write
 * it affects fails as it would alone, and the writes before it stay done.
 */
/** The checked writes of a request: run them once every check has passed. */
export type Writes = () => Promise<void>;

/** `PUT /resource/move` (WRITE on every folder and item): folders not underneath themselves nor onto a taken name. */
export async function planMove(
  deps: BlobDeps,
  resources: LoadedResources,
  parent: LoadedParent,
  meta: RequestMeta,
): Promise<Writes> {
  const folders = resources.folder.filter((f) => f.parentCollection !== parent.type || f.parentId !== parent.doc._id);
  const items = resources.item
    .map(({ item }) => item)
    .filter((item) => parent.type === 'folder' && item.folderId !== parent.doc._id);
  await checkFolderMoves(deps, folders, parent);
  // Loaded at WRITE once: the destination is every moved item's new folder.
  const destination = parent.type === 'folder' ? parent.doc : null;
  return async () => {
    for (const folder of folders) {
      await updateFolder(deps, { folderId: folder._id, move: parent }, meta);
    }
    // An item takes a free name in its new folder (`name (1)`), so items need no name check.
    for (const item of items) if (destination) await updateItem(deps, { itemId: item._id, folder: destination }, meta);
  };
}

/** The move's own refusals, for all the folders at once: underneath itself, or a name the destination holds. */
async function checkFolderMoves(deps: BlobDeps, folders: FolderDoc[], parent: LoadedParent): Promise<void> {
  if (folders.length === 0) return;
  const targetPath =
    parent.type === 'folder' ? [...(await deps.readModel.folders.ancestorIds(parent.doc._id)), parent.doc._id] : [];
  const names = new Set<string>();
  for (const folder of folders) {
    if (targetPath.includes(folder._id)) throw new ValidationError('You may not move a folder underneath itself.');
    // Two folders of the set with one name would collide with each other once the first has moved.
    if (names.has(folder.name)) refuseTakenSiblingName('folder');
    names.add(folder.name);
    refuseTakenSiblingName(await deps.readModel.folders.siblingNamed(parent.type, parent.doc._id, folder.name));
  }
}

/**
 * `POST /resource/copy` (READ on every item and folder named). A folder's copy takes the subfolders the copier reads,
 * as `POST /folder/:id/copy` does (Girder's copyFolder): an unreadable subfolder is left out, never copied.
 */
export function planCopy(
  deps: BlobDeps,
  resources: LoadedResources,
  parent: LoadedParent,
  copier: Viewer,
  meta: RequestMeta,
): Writes {
  const items = resources.item.map(({ item }) => item);
  const folders = resources.folder;
  const destination = parent.type === 'folder' ? parent.doc : null;
  return async () => {
    for (const item of items)
      if (destination) await copyItem(deps, { sourceId: item._id, folder: destination, creatorId: copier.id }, meta);
    for (const folder of folders) await copyFolder(deps, { sourceId: folder._id, parent, copier }, meta);
  };
}

/**
 * `DELETE /resource` (ADMIN on every collection, folder and item named). A resource inside another one the request
 * deletes goes with it (its own delete would find it gone and answer 400 half-way).
 */
export async function planDelete(deps: BlobDeps, resources: LoadedResources, meta: RequestMeta): Promise<Writes> {
  const collections = resources.collection.map((c) => c._id);
  const folders = resources.folder;
  const items = resources.item.map(({ item }) => item);

  const removedRoots = new Set(collections);
  const removedFolders = new Set(folders.map((f) => f._id));
  const inRemoved = (folderIds: string[], baseParentId: string) =>
    removedRoots.has(baseParentId) || folderIds.some((id) => removedFolders.has(id));
  const keptFolders: FolderDoc[] = [];
  for (const folder of folders)
    if (!inRemoved(await deps.readModel.folders.ancestorIds(folder._id), folder.baseParentId)) keptFolders.push(folder);
  const keptItems: ItemDoc[] = [];
  for (const item of items) {
    const path = [...(await deps.readModel.folders.ancestorIds(item.folderId)), item.folderId];
    if (!inRemoved(path, item.baseParentId)) keptItems.push(item);
  }

  return async () => {
    for (const kind of resources.order) {
      if (kind === 'collection') for (const id of collections) await deleteCollection(deps, id, meta);
      if (kind === 'folder') for (const folder of keptFolders) await deleteFolder(deps, folder._id, meta);
      if (kind === 'item') for (const item of keptItems) await deleteItem(deps, item._id, meta);
    }
  };
}
