import type { FolderDoc, ItemDoc } from './documents';
import type { ParentType, RootType } from '../../domain/parents';

/**
 * The history role (audit, point-in-time reads, restore; docs/events.md): what a delete or clear removed, where a
 * folder sat and how big it was at a log position, and the writes that keep and restore removed rows. Every read model
 * keeps it (both adapters do): it is required, not optional.
 */

export interface RemovedFolder {
  /** The folder as it was when removed. */
  doc: FolderDoc;
  /** Log position of the removing operation, the folder in whose request it happened, which operation, and when. */
  position: bigint;
  rootId: string;
  operation: 'deleted' | 'cleared';
  at: string;
}

export interface RemovedItem {
  doc: ItemDoc;
  position: bigint;
  at: string;
}

/** Where a folder sat in the tree during [from, to) (to null: still there). */
export interface FolderPlacement {
  folderId: string;
  parentType: ParentType;
  parentId: string;
  baseParentType: RootType;
  baseParentId: string;
  from: bigint;
  to: bigint | null;
}

export interface HistoryQueries {
  /** The latest removal of a folder that is not in the read model now, or null. */
  removedFolder(id: string): Promise<RemovedFolder | null>;
  /** The latest removal (by a folder delete or clear) of an item that is not in the read model now, or null. */
  removedItem(id: string): Promise<RemovedItem | null>;
  /**
   * What restoring `folderId` from its removal at `position` brings back: the folders, and the blobs of their files.
   */
  restorable(folderId: string, position: bigint): Promise<{ folderIds: string[]; blobIds: string[] }>;
  /** Whether a file removed by a folder delete or clear at or after `since` (ISO time) has these bytes. */
  isBlobRetained(blobId: string, since: string): Promise<boolean>;
  /** Blob ids of files removed by folder deletes or clears in [from, to) (ISO times). */
  blobIdsRemovedBetween(from: string, to: string): Promise<string[]>;
  /** Where the folder was once the event at `position` had been applied; null when it did not exist then. */
  placementAt(folderId: string, position: bigint): Promise<FolderPlacement | null>;
  /** Ids of the folders directly under the parent once the event at `position` had been applied. */
  childrenAt(parentType: ParentType, parentId: string, position: bigint): Promise<string[]>;
  /** The folder's size (items directly in it) once the event at `position` had been applied. */
  sizeAt(folderId: string, position: bigint): Promise<number>;
}

export interface FolderRestoreWrite {
  folderId: string;
  /** Position of the operation that removed it (which kept rows to restore). */
  deletedPosition: bigint;
  parentType: ParentType;
  parentId: string;
  name: string;
}

export interface HistoryWrites {
  /**
   * Before a folder delete (`keepRoot` false) or clear (`keepRoot` true) removes a subtree: keeps the rows it is about
   * to remove (folders, their ancestry inside the subtree, items and files), stamped with the operation's position
   * and time, so that the folders can be restored and the bytes kept for the retention period.
   */
  keepRemoved(folderId: string, keepRoot: boolean, position: bigint, at: string): void;
  /**
   * Moves the kept rows of the folder and everything removed with it below it back, under the new parent and name;
   * records `restored` history rows. Skipped when nothing is kept or the folder is live; the parent must be in the
   * read model (the projection guards the write: src/projections/lateEvents.ts).
   */
  restoreFolder(restore: FolderRestoreWrite, position: bigint): void;
}
