import type { AccessList, Viewer } from '../../domain/access';
import type { ParentType, RootType } from '../../domain/parents';
import type {
  ApiKeyDoc,
  CollectionDoc,
  FileDoc,
  FolderDoc,
  GroupDoc,
  GroupMembership,
  ItemDoc,
  SubtreeOperation,
  TokenDoc,
  UserDoc,
  UserFields,
} from './documents';
import type { HistoryWrites } from './history';
import type { CollectionQueries, FolderQueries, UserQueries } from './queries';

/**
 * The projection-writes role: what projection handlers (src/projections/) write, through a transaction object whose
 * methods are synchronous and never read (SQLite runs them in the event's transaction; MongoDB records them and runs
 * them with per-document revision guards, src/infra/readmodel/mongodb/writes.ts), and the few set-wise reads a
 * handler's PLAN may make first ({@link ProjectionReads}).
 */

/**
 * What a projection handler's plan may read before its writes run (src/projections/projection.ts, `planned`): the
 * projector asks only once every earlier event is applied (it applies a pending batch first), and it is the single,
 * fenced writer of the read model, so nothing changes between the plan and its writes. Reads go to the state writes
 * go to (on MongoDB, the generation a rebuild is filling).
 */
export interface ProjectionReads {
  folders: Pick<FolderQueries, 'get' | 'idsUnder'>;
  collections: Pick<CollectionQueries, 'get'>;
  users: Pick<UserQueries, 'get'>;
}

/** What the projection of FolderCopied hands to the adapter (the event's data). */
export interface FolderCopyWrite {
  opId: string;
  sourceId: string;
  folderId: string;
  parentType: ParentType;
  parentId: string;
  name: string;
  description: string;
  public?: boolean;
  publicFlags?: string[];
  access: AccessList;
  creatorId: string;
  created: string;
  meta: Record<string, unknown>;
  copier: Viewer;
}

/**
 * Subtree operations, each applied set-wise inside the event's read-model transaction (docs/subtree-operations.md),
 * each recording its history index rows at `position`. Whether one still applies (its folder, or a copy's source and
 * destination, not deleted earlier in log order) is the projection's plan (src/projections/lateEvents.ts): a delete
 * or clear of a folder that is gone removes nothing; a copy whose source or destination is gone is an error.
 */
export interface SubtreeWrites {
  /**
   * Removes the folder, every descendant folder, their items and files, ACL, ancestry and search rows; the root
   * user's/collection's size loses the subtree's recursive size (the parent folder's size is unchanged).
   */
  deleteFolder(folderId: string, position: bigint): void;
  /**
   * Removes everything under the folder as `deleteFolder` does; the folder stays with size 0 and `updated` unchanged.
   */
  clearContents(folderId: string, position: bigint): void;
  /**
   * Removes everything under a root user or collection that is going away (`DELETE /collection/:id`): every folder
   * whose base parent it is, their items and files, ACL, ancestry and search rows, as `deleteFolder` does for a
   * folder, and records `deleted` history rows (root `rootId`) for the folders it removed. The root's own row is the
   * caller's to remove.
   */
  deleteUnderRoot(rootType: RootType, rootId: string, position: bigint): void;
  /**
   * Inserts the new root folder and copies, with ids `derive_id(opId, sourceId)`: every item (and file, referencing
   * the same blob) of each copied folder, and the subfolders `copier` may READ, recursively, as the read model stands
   * before this write (so a copy landing inside its source is never copied again). Sizes follow.
   */
  copyFolder(copy: FolderCopyWrite, position: bigint): void;
  /** Records history index rows for folders another write changed (e.g. a recursive access update). */
  recordOps(folderIds: string[], position: bigint, operation: SubtreeOperation, rootId: string): void;
}

export interface UserWrites {
  put(doc: UserDoc): void;
  setPasswordHash(id: string, passwordHash: string): void;
  /** Replaces the given fields (a name change keeps the list's sort key in step). */
  update(id: string, fields: UserFields): void;
  /** Removes the user, its ACL rows and its group memberships, invitations and requests. */
  delete(id: string): void;
  /** Adds `delta` to the user's `size` (the recursive size of everything under the user). */
  addSize(id: string, delta: number): void;
}
export interface GroupWrites {
  /** Inserts or replaces the group's own fields (membership rows stay). */
  put(doc: Omit<GroupDoc, 'members' | 'invites' | 'requests'>): void;
  update(id: string, fields: Partial<Omit<GroupDoc, '_id' | 'members' | 'invites' | 'requests'>>): void;
  /** Removes the group and every membership, invitation and request of it. */
  delete(id: string): void;
  /** Sets the user's one relation to the group (replacing an earlier one). */
  setMembership(membership: GroupMembership): void;
  removeMembership(groupId: string, userId: string): void;
}

export interface TokenWrites {
  put(doc: TokenDoc): void;
  delete(hash: string): void;
  deleteForApiKey(apiKeyId: string): void;
  /** Removes every token of a user (the user is being deleted). */
  deleteForUser(userId: string): void;
}
export interface ApiKeyWrites {
  put(doc: ApiKeyDoc): void;
  delete(id: string): void;
}
export interface CollectionWrites {
  put(doc: CollectionDoc): void;
  /** Replaces the given fields of a collection (the rest, e.g. `size`, stays as stored). */
  update(id: string, fields: Partial<Omit<CollectionDoc, '_id'>>): void;
  delete(id: string): void;
  /** Adds `delta` to the collection's `size` (the recursive size of everything under it). */
  addSize(id: string, delta: number): void;
}
export interface FolderWrites {
  /**
   * Inserts a folder; the adapter derives its ancestry and `baseParentType/Id` from the parent as stored now, so a
   * parent folder must be in the read model (the projection guards the write: src/projections/lateEvents.ts).
   */
  insert(doc: Omit<FolderDoc, 'baseParentType' | 'baseParentId'>): void;
  /** Replaces the mutable fields of a folder (not its position in the tree); a folder not stored is not written. */
  update(
    id: string,
    fields: Partial<Omit<FolderDoc, '_id' | 'parentId' | 'parentCollection' | 'baseParentType' | 'baseParentId'>>,
  ): void;
  /**
   * Moves a folder under a new parent; the adapter rewrites ancestry and base parent of the whole subtree. The folder,
   * and a new parent folder, must be in the read model (the projection guards the write: lateEvents.ts).
   */
  move(id: string, parentType: ParentType, parentId: string, updated: string): void;
  /**
   * Removes the folder with everything under it (descendant folders, items, files, ACL, ancestry and search rows;
   * the root's size loses their recursive size), as `SubtreeWrites.deleteFolder` does, but records no history index
   * rows: for a subtree that goes with a delete recorded before it (a move into a deleted folder, lateEvents.ts).
   */
  removeSubtree(id: string): void;
  delete(id: string): void;
  /** Removes every folder whose base parent (root user or collection) is `rootId`, with its ancestry and ACL rows. */
  deleteUnderRoot(rootId: string): void;
  /**
   * Gives each of the folders `ids` the access list, and `public`/`publicFlags` when given; `updated` is not changed;
   * ids no longer in the read model are passed over. Which folders a recursive change reaches is the projection's to
   * decide (src/projections/folderAccess.ts). On MongoDB, deepest first and the shallowest last (see writes.ts).
   */
  setAccess(ids: string[], change: { access: AccessList; public?: boolean; publicFlags?: string[] }): void;
  /** Adds `delta` to the folder's `size` (the sizes of the items directly in it); the root is not touched. */
  addSize(id: string, delta: number): void;
}

export interface ItemWrites {
  /**
   * Inserts an item; the adapter derives `baseParentType/Id` from its folder as stored now, so the folder must be in
   * the read model (the projection guards the write: src/projections/lateEvents.ts).
   */
  insert(doc: Omit<ItemDoc, 'baseParentType' | 'baseParentId' | 'size' | 'lowerName'>): void;
  /** Replaces mutable fields (name, description, meta, created, updated); an item not stored is not written. */
  update(id: string, fields: Partial<Pick<ItemDoc, 'name' | 'description' | 'meta' | 'created' | 'updated'>>): void;
  /**
   * Moves an item to another folder (renamed to `name`); its size leaves the old folder (and root) for the new ones.
   * The item and the folder must be in the read model (the projection guards the write: lateEvents.ts).
   */
  move(id: string, folderId: string, name: string, updated: string): void;
  /** Deletes an item and its files; their sizes leave the item's folder and root. */
  delete(id: string): void;
  /** Deletes every item directly in a folder, with their files, as `delete` does for each. */
  deleteInFolder(folderId: string): void;
  /** Deletes every item (and file) under a root user or collection that is going away; no sizes are adjusted. */
  deleteUnderRoot(rootId: string): void;
  /**
   * Adds `delta` to the item's size and to its folder's and root's (a file added, removed or replaced); an item not
   * stored is not written.
   */
  addSize(id: string, delta: number): void;
}

export interface FileWrites {
  /** Inserts a file row (sizes are `ItemWrites.addSize`'s job); its item is in the read model (lateEvents.ts). */
  insert(doc: FileDoc): void;
  /** Changes the given fields; a field given as `undefined` is removed (`sha512` when the bytes changed). */
  update(
    id: string,
    fields: Partial<Pick<FileDoc, 'blobId' | 'size' | 'creatorId' | 'created' | 'name' | 'mimeType' | 'sha512'>>,
  ): void;
  delete(id: string): void;
}

/** A row (document) of the read model that a late event's write depends on: the thing itself, or its parent. */
export interface RowRef {
  kind: 'folder' | 'collection' | 'item' | 'file';
  id: string;
}

export interface ReadModelTx {
  /**
   * A write conditional on a row's presence: runs `then`'s writes when `row` is in the read model at this point of
   * the event's writes (after the writes before it), else `orElse`'s. The adapter only checks presence (SQLite: a
   * lookup in the event's transaction; MongoDB: a read when the guarded operations run, once per attempt); what a
   * missing row means is the projection's rule (src/projections/lateEvents.ts).
   */
  ifPresent(row: RowRef, then: (tx: ReadModelTx) => void, orElse?: (tx: ReadModelTx) => void): void;
  users: UserWrites;
  groups: GroupWrites;
  tokens: TokenWrites;
  apiKeys: ApiKeyWrites;
  collections: CollectionWrites;
  folders: FolderWrites;
  items: ItemWrites;
  files: FileWrites;
  subtree: SubtreeWrites;
  history: HistoryWrites;
}
