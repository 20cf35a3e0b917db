import type { AccessList, Viewer } from '../domain/access';
import type { Paging } from '../domain/paging';
import type { ParentType, RootType } from '../domain/parents';

/**
 * The ReadModel port: documents shaped like Girder's Mongo documents plus what the queries need, the queries the
 * routes call, and the write side used by projections. Projection writes are synchronous calls on a transaction
 * object and never read: each adapter applies one event's writes and the projection checkpoint atomically
 * (SQLite: one transaction; MongoDB: one bulk write with per-document revision guards), which is what makes
 * replaying an event a no-op.
 */

export interface UserDoc {
  _id: string;
  login: string;
  email: string;
  firstName: string;
  lastName: string;
  admin: boolean;
  public: boolean;
  created: string;
  size: number;
  groups: string[];
  groupInvites: { groupId: string; level: number }[];
  status: 'enabled' | 'disabled' | 'pending';
  emailVerified: boolean;
  access: AccessList;
  /** `scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>`; never leaves the service. */
  passwordHash: string;
}

/**
 * A group (Girder's group document). Membership lives in the group's membership rows, not here; `members`,
 * `invites` and `requests` are filled from them when the group is read.
 */
export interface GroupDoc {
  _id: string;
  name: string;
  description: string;
  public: boolean;
  addAllowed: 'default' | 'no' | 'yesmod' | 'yesadmin';
  creatorId: string;
  created: string;
  updated: string;
  members: { id: string; level: 0 | 1 | 2 }[];
  invites: { id: string; level: 0 | 1 | 2 }[];
  requests: string[];
}

/** One user's relation to one group: a member (at `level`), invited (joins at `level`), or asking to join. */
export interface GroupMembership {
  groupId: string;
  userId: string;
  kind: 'member' | 'invite' | 'request';
  level: 0 | 1 | 2;
}

export interface TokenDoc {
  /** SHA-256 of the token: the token itself is never stored. */
  hash: string;
  userId: string;
  scope: string[];
  created: string;
  expires: string;
  apiKeyId?: string;
}

export interface ApiKeyDoc {
  _id: string;
  userId: string;
  name: string;
  key: string;
  scope: string[] | null;
  tokenDuration: number | null;
  active: boolean;
  created: string;
  lastUse: string | null;
}

export interface CollectionDoc {
  _id: string;
  name: string;
  description: string;
  public: boolean;
  publicFlags?: string[];
  access: AccessList;
  created: string;
  updated: string;
  size: number;
  meta: Record<string, unknown>;
  creatorId: string | null;
}

export interface FolderDoc {
  _id: string;
  name: string;
  lowerName: string;
  description: string;
  parentCollection: ParentType;
  parentId: string;
  baseParentType: RootType;
  baseParentId: string;
  creatorId: string | null;
  created: string;
  updated: string;
  size: number;
  public?: boolean;
  publicFlags?: string[];
  access: AccessList;
  meta: Record<string, unknown>;
}

/** An item: Girder's item document (its ACL is its folder's). */
export interface ItemDoc {
  _id: string;
  name: string;
  lowerName: string;
  description: string;
  folderId: string;
  baseParentType: RootType;
  baseParentId: string;
  creatorId: string | null;
  created: string;
  updated: string;
  /** Sum of the sizes of the item's files. */
  size: number;
  meta: Record<string, unknown>;
  copyOfItem?: string;
}

/** A file of an item; its bytes are the BlobStore blob `blobId` (shared by every file with identical bytes). */
export interface FileDoc {
  _id: string;
  itemId: string;
  name: string;
  mimeType: string;
  size: number;
  blobId: string;
  creatorId: string | null;
  created: string;
  exts: string[];
  copyOfFile?: string;
  copierId?: string;
  copied?: string;
}

export interface Page<T> {
  rows: T[];
  total: number;
}

export interface UserQueries {
  get(id: string): Promise<UserDoc | null>;
  getByLogin(login: string): Promise<UserDoc | null>;
  getByEmail(email: string): Promise<UserDoc | null>;
  /** Users whose login, name or email contains `text`; with `prefix`, whose login, first or last name starts with it (any case). */
  list(options: { text?: string; prefix?: boolean; paging: Paging }): Promise<Page<UserDoc>>;
  count(): Promise<number>;
}

export interface GroupQueries {
  get(id: string): Promise<GroupDoc | null>;
  /**
   * Groups by name: `exact` = that exact (case-sensitive) name, `prefix` = name starting with `text` (any case),
   * `text` = name or description containing it (any case), else all. `visibleTo`: only public groups and these group ids (null: every group, for site admins).
   */
  list(options: { text?: string; exact?: boolean; prefix?: boolean; visibleTo: string[] | null; paging: Paging }): Promise<Page<GroupDoc>>;
  /** Members (`kind` member) or invitees of a group, as user documents, sorted and paged like a user listing. */
  listUsers(groupId: string, kind: 'member' | 'invite', paging: Paging): Promise<Page<UserDoc>>;
}

export interface TokenQueries {
  get(hash: string): Promise<TokenDoc | null>;
}

export interface ApiKeyQueries {
  get(id: string): Promise<ApiKeyDoc | null>;
  getByKey(key: string): Promise<ApiKeyDoc | null>;
  listForUser(userId: string, paging: Paging): Promise<Page<ApiKeyDoc>>;
}

export interface CollectionQueries {
  get(id: string): Promise<CollectionDoc | null>;
  getByName(name: string): Promise<CollectionDoc | null>;
  /** Collections the viewer may READ (filter inside the query), optionally by text. */
  list(options: { viewer: Viewer | null; text?: string; paging: Paging }): Promise<Page<CollectionDoc>>;
}

export interface FolderQueries {
  get(id: string): Promise<FolderDoc | null>;
  getMany(ids: string[]): Promise<FolderDoc[]>;
  /** Child folders of a parent that the viewer may READ; optional exact name and text filter. */
  listChildren(options: {
    parentType: ParentType;
    parentId: string;
    viewer: Viewer | null;
    name?: string;
    text?: string;
    paging: Paging;
  }): Promise<Page<FolderDoc>>;
  /** Global text search over folders the viewer may READ. */
  search(options: { text: string; viewer: Viewer | null; paging: Paging }): Promise<Page<FolderDoc & { _textScore: number }>>;
  countChildren(options: { parentType: ParentType; parentId: string; viewer: Viewer | null }): Promise<number>;
  /** The child folder of a parent with exactly this (case-sensitive) name, not permission filtered (sibling-name checks, reuseExisting). */
  childNamed(parentType: ParentType, parentId: string, name: string): Promise<FolderDoc | null>;
  /**
   * Items directly in a folder, not permission filtered (`nItems` of GET /folder/:id/details). 0 while the read
   * model holds no items (no `rm_items` table yet); the items read model extends this.
   */
  itemCount(folderId: string): Promise<number>;
  /** Ancestor folder ids of a folder, root-most first, ending with its parent when the parent is a folder. */
  ancestorIds(id: string): Promise<string[]>;
  /** Whether `candidateId` is `folderId` itself or lies underneath it. */
  isSelfOrDescendant(folderId: string, candidateId: string): Promise<boolean>;
  /**
   * How many folders a recursive access update of `folderId` by `actor` reaches: the folder itself plus every
   * descendant reachable through folders on which the actor holds ADMIN (Girder's ADMIN-filtered subtreeCount).
   */
  countAccessTargets(folderId: string, actor: Viewer): Promise<number>;
}

export interface ItemQueries {
  get(id: string): Promise<ItemDoc | null>;
  /** Items directly in a folder (no permission filter beyond the folder's); optional exact name and text filter. */
  listInFolder(options: { folderId: string; name?: string; text?: string; paging: Paging }): Promise<Page<ItemDoc>>;
  /** Global text search over items whose folder the viewer may READ (filter inside the query). */
  search(options: { text: string; viewer: Viewer | null; paging: Paging }): Promise<Page<ItemDoc>>;
  countInFolder(folderId: string): Promise<number>;
}

export interface FileQueries {
  get(id: string): Promise<FileDoc | null>;
  listForItem(itemId: string, paging: Paging): Promise<Page<FileDoc>>;
  /** Whether any file's bytes are the blob `blobId` (blobs are deleted only when this turns false). */
  isBlobReferenced(blobId: string): Promise<boolean>;
  /** Blob ids of the files of every item directly in the given folders (to reclaim after deleting them). */
  blobIdsInFolders(folderIds: string[]): Promise<string[]>;
  /** Blob ids of the files under a root user or collection (to reclaim after deleting it). */
  blobIdsUnderRoot(rootId: string): Promise<string[]>;
}

/**
 * What a subtree operation did to a folder (the history index): `deleted` (removed by a delete of itself or of an
 * ancestor, or by emptying an ancestor), `cleared` (the folder that was emptied), `copied` (a folder created by a copy),
 * `copiedFrom` (a folder that was copied), `accessChanged` (reached by a recursive access update).
 */
export type SubtreeOperation = 'deleted' | 'cleared' | 'copied' | 'copiedFrom' | 'accessChanged' | 'restored';

/**
 * One row of the history index: operation `operation` recorded at log `position` on the stream of folder `rootId`
 * (of collection `rootId` for the folders a collection delete removed).
 */
export interface SubtreeOp {
  folderId: string;
  position: bigint;
  operation: SubtreeOperation;
  /**
   * The folder whose stream holds the event: the folder in the request (for a copy, the new root folder); for a
   * collection delete (CollectionDeleted on `collection-<id>`), the collection.
   */
  rootId: string;
}

/** Reads over whole subtrees, none permission filtered. */
export interface SubtreeQueries {
  /** Girder's subtreeCount: 1 + every descendant folder + every item in the folder and its descendants; 0 when unknown. */
  subtreeCount(folderId: string): Promise<number>;
  /** Blob ids of every file in the folder and its descendants (to reclaim after deleting or emptying it). */
  blobIdsInSubtree(folderId: string): Promise<string[]>;
  /** The history index rows of a folder, in log order. */
  subtreeOpsFor(folderId: string): Promise<SubtreeOp[]>;
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
 * each recording its history index rows at `position`. An operation whose folder (or, for a copy, whose source or
 * destination) is no longer in the read model is skipped: it was deleted earlier in log order.
 */
export interface SubtreeWrites {
  /**
   * Removes the folder, every descendant folder, their items and files, ACL, ancestry and search rows; the root
   * user's/collection's size loses the subtree's recursive size (the parent folder's size is unchanged).
   */
  deleteFolder(folderId: string, position: bigint): void;
  /** Removes everything under the folder as `deleteFolder` does; the folder stays with size 0 and `updated` unchanged. */
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

/**
 * History support (audit, point-in-time reads, restore; docs/events.md). Optional: a read model without it answers
 * those routes with a refusal instead of a guess.
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
  /** What restoring `folderId` from its removal at `position` brings back: the folders, and the blobs of their files. */
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
   * records `restored` history rows. Skipped when nothing is kept, the folder is live, or the parent is gone.
   */
  restoreFolder(restore: FolderRestoreWrite, position: bigint): void;
}

export interface UserWrites {
  put(doc: UserDoc): void;
  setPasswordHash(id: string, passwordHash: string): void;
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
   * Inserts a folder; the adapter derives its ancestry and `baseParentType/Id` from the parent as stored now. Skipped
   * when the parent folder is gone (a subtree delete removed it earlier in log order), or the parent collection (a
   * collection delete earlier in log order removed everything under it).
   */
  insert(doc: Omit<FolderDoc, 'baseParentType' | 'baseParentId'>): void;
  /** Replaces the mutable fields of a folder (not its position in the tree); skipped when the folder is gone. */
  update(id: string, fields: Partial<Omit<FolderDoc, '_id' | 'parentId' | 'parentCollection' | 'baseParentType' | 'baseParentId'>>): void;
  /**
   * Moves a folder under a new parent; the adapter rewrites ancestry and base parent of the whole subtree. Skipped when
   * the folder is gone; when the new parent folder or collection is gone the moved subtree is removed with it (as by a
   * delete).
   */
  move(id: string, parentType: ParentType, parentId: string, updated: string): void;
  delete(id: string): void;
  /** Removes every folder whose base parent (root user or collection) is `rootId`, with its ancestry and ACL rows. */
  deleteUnderRoot(rootId: string): void;
  /**
   * Recursive `PUT /folder/:id/access`: gives the folder and every descendant reachable through folders on which
   * `actor` holds ADMIN (judged on the ACLs as stored before this write) the access list, and `public`/`publicFlags`
   * when given. `updated` is not changed. Returns the ids of the folders it changed.
   */
  setAccessRecursive(id: string, change: { access: AccessList; public?: boolean; publicFlags?: string[] }, actor: Viewer): string[];
  /** Adds `delta` to the folder's `size` (the sizes of the items directly in it); the root is not touched. */
  addSize(id: string, delta: number): void;
}

export interface ItemWrites {
  /**
   * Inserts an item; the adapter derives `baseParentType/Id` from its folder as stored now (and skips the item when
   * the folder is gone: it was deleted first, in log order).
   */
  insert(doc: Omit<ItemDoc, 'baseParentType' | 'baseParentId' | 'size' | 'lowerName'>): void;
  /** Replaces mutable fields (name, description, meta, updated). */
  update(id: string, fields: Partial<Pick<ItemDoc, 'name' | 'description' | 'meta' | 'updated'>>): void;
  /** Moves an item to another folder (renamed to `name`); its size leaves the old folder (and root) for the new ones. */
  move(id: string, folderId: string, name: string, updated: string): void;
  /** Deletes an item and its files; their sizes leave the item's folder and root. */
  delete(id: string): void;
  /** Deletes every item directly in a folder, with their files, as `delete` does for each. */
  deleteInFolder(folderId: string): void;
  /** Deletes every item (and file) under a root user or collection that is going away; no sizes are adjusted. */
  deleteUnderRoot(rootId: string): void;
  /** Adds `delta` to the item's size and to its folder's and root's (a file added, removed or replaced). */
  addSize(id: string, delta: number): void;
}

export interface FileWrites {
  /** Inserts a file row (sizes are `ItemWrites.addSize`'s job); skipped when the item is gone. */
  insert(doc: FileDoc): void;
  update(id: string, fields: Partial<Pick<FileDoc, 'blobId' | 'size' | 'creatorId' | 'created' | 'name' | 'mimeType'>>): void;
  delete(id: string): void;
}

export interface ReadModelTx {
  users: UserWrites;
  groups: GroupWrites;
  tokens: TokenWrites;
  apiKeys: ApiKeyWrites;
  collections: CollectionWrites;
  folders: FolderWrites;
  items: ItemWrites;
  files: FileWrites;
  subtree: SubtreeWrites;
  /** Absent when the adapter keeps no history (see {@link HistoryQueries}). */
  history?: HistoryWrites;
}

/** Who holds a lease and until when (by the clock of whatever grants it: the SQLite host, the MongoDB server). */
export interface LeaseRecord {
  holder: string;
  expiresAt: Date;
  /**
   * The fencing token: a counter that grows by one every time the lease is taken while it was not the taker's live
   * lease (a first take, a take after a release or an expiry, a takeover from a holder known to be gone); renewals
   * keep it. Kept through a release, so it never goes back.
   */
  epoch: number;
}

/**
 * What a lease holder passes to {@link ReadModel.apply} so that the read model refuses its writes once another holder
 * has taken the lease: the write goes ahead only while lease `lease` is still at `epoch`.
 */
export interface LeaseFence {
  lease: string;
  epoch: number;
}

/** Raised by {@link ReadModel.apply} when the lease of its fence has moved to a newer epoch: nothing was written. */
export class FencedOffError extends Error {
  constructor(readonly fence: LeaseFence, readonly currentEpoch: number | null) {
    super(
      `Projection write refused: lease ${fence.lease} is at epoch ${currentEpoch ?? 'none'}, this holder's epoch is ${fence.epoch}.`,
    );
    this.name = 'FencedOffError';
  }
}

/**
 * Named leases stored next to the read models (SQLite: a row in the same file; MongoDB: a document in `rm_leases`),
 * so that every process sharing a read model agrees on who holds one. The projector lease
 * (src/projections/projector.ts) keeps a single projector per read model. Leases are not reset by `reset()`.
 */
export interface Leases {
  /**
   * Takes lease `name` for `holder` until `ttlMs` from now when it is free, expired, already `holder`'s, or held by
   * `replacing` (a holder known to be gone); resolves with whether `holder` has it now.
   */
  acquire(name: string, holder: string, ttlMs: number, replacing?: string): Promise<boolean>;
  /** Moves the expiry of `holder`'s lease to `ttlMs` from now; false when the lease is no longer `holder`'s. */
  renew(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Frees the lease if `holder` has it (a no-op otherwise). */
  release(name: string, holder: string): Promise<void>;
  /** The lease's holder, expiry and epoch, expired or not; null when nobody has taken it or it was released. */
  get(name: string): Promise<LeaseRecord | null>;
}

/** One event's writes in {@link ReadModel.applyBatch}. */
export interface BatchedWrite {
  position: bigint;
  write: (tx: ReadModelTx) => void;
}

export interface ReadModel {
  /** User documents carry `groups` (ids of the groups they are a member of) and `groupInvites`, from memberships. */
  users: UserQueries;
  groups: GroupQueries;
  tokens: TokenQueries;
  apiKeys: ApiKeyQueries;
  collections: CollectionQueries;
  folders: FolderQueries;
  items: ItemQueries;
  files: FileQueries;
  subtree: SubtreeQueries;
  /** Absent when the adapter keeps no history: history, point-in-time reads and restore are then refused. */
  history?: HistoryQueries;
  /** Leases shared by every process on this read model (the single-projector lease). */
  leases: Leases;
  /** Position of the last event the named projection applied (0n when none). */
  checkpoint(projection: string): Promise<bigint>;
  /**
   * Applies one event's writes and moves the projection's checkpoint to `position`, atomically. Returns false
   * (and writes nothing) when the checkpoint is already at or past `position`: replays are no-ops. With a `fence`,
   * the lease's epoch is checked in the same transaction (SQLite: a row check; MongoDB: a conditional update of the
   * lease document) and the call rejects with {@link FencedOffError}, writing nothing, once it has moved on.
   */
  apply(projection: string, position: bigint, write: (tx: ReadModelTx) => void, fence?: LeaseFence): Promise<boolean>;
  /**
   * Applies consecutive events (positions strictly increasing) as {@link apply} would one after the other, and as
   * one unit where the adapter can: one transaction and one checkpoint write for the whole batch. Events at or
   * before the checkpoint are skipped. Resolves with the number of events applied. On a failure the checkpoint
   * never passes an event whose writes are not all in (SQLite rolls the whole batch back; MongoDB keeps the events
   * before the failing one). The `fence` is checked as in {@link apply}, once for the batch.
   */
  applyBatch(projection: string, events: BatchedWrite[], fence?: LeaseFence): Promise<number>;
  /** Empties every read model and checkpoint (the start of a rebuild). */
  reset(): Promise<void>;
  /** A canonical dump of every read model, for comparing a rebuild with the live state. */
  dump(): Promise<Record<string, unknown[]>>;
  dispose(): Promise<void>;
}
