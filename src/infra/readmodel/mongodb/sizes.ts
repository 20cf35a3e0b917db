import type { CollectionName } from './mongoCollections';
import type { WriteScope } from './writes';
import { positionStamp } from './writes';
import type { RootType } from '../../../domain/parents';

/**
 * Size bookkeeping (Girder §0), as in the SQLite adapter: a folder's `size` is the sum of the items directly in it,
 * an item's the sum of its files, a root user's or collection's the sum of everything under it. Sizes travel as
 * `$inc` deltas, each guarded by the operation's stamp like every other write.
 */
function rootCollection(type: RootType): CollectionName {
  return type === 'user' ? 'users' : 'collections';
}

/**
 * Records that this event changed a folder's size by `delta` (an operation may record each folder once): the size
 * history behind point-in-time reads.
 */
export function recordSizeChange(w: WriteScope, folderId: string, delta: number): void {
  if (delta === 0) return;
  const at = positionStamp(w.position);
  w.accumulate('folderSizes', `${folderId}|${at}`, { folderId, position: at }, { delta });
}

/** Adds `delta` to a folder's size (its direct items), and records the change for the history. */
export function addFolderSize(w: WriteScope, id: string, delta: number): void {
  if (delta === 0) return;
  w.increment('folders', id, 'size', delta);
  recordSizeChange(w, id, delta);
}

/** Adds `delta` to a root user's or collection's size. */
export function addRootSize(w: WriteScope, type: RootType, id: string, delta: number): void {
  w.increment(rootCollection(type), id, 'size', delta);
}

/**
 * Moves `delta` of size from one (folder, root) position to another, writing each document once: nothing when the
 * positions are the same, one write per changed container otherwise.
 */
export function moveSize(
  w: WriteScope,
  from: { folderId: string; rootType: RootType; rootId: string },
  to: { folderId: string; rootType: RootType; rootId: string },
  delta: number,
): void {
  if (delta === 0) return;
  if (from.folderId !== to.folderId) {
    addFolderSize(w, from.folderId, -delta);
    addFolderSize(w, to.folderId, delta);
  }
  if (from.rootType !== to.rootType || from.rootId !== to.rootId) {
    addRootSize(w, from.rootType, from.rootId, -delta);
    addRootSize(w, to.rootType, to.rootId, delta);
  }
}
