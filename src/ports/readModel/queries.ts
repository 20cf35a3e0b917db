import type { AssetstoreRefs } from '../../domain/assetstoreBlobRef';
import type { Level, Viewer } from '../../domain/access';
import type { Paging } from '../../domain/paging';
import type { ParentType } from '../../domain/parents';
import type {
  ApiKeyDoc,
  CollectionDoc,
  FileDoc,
  FolderDoc,
  GroupDoc,
  ItemDoc,
  Page,
  SubtreeOp,
  TokenDoc,
  UserDoc,
} from './documents';
import type { HistoryQueries } from './history';

/**
 * The queries role: what routes, queries and commands read. Every method is asynchronous and reads committed state.
 */

/** What a user listing searches for (see {@link UserQueries.list}). */
export interface UserSearch {
  text?: string;
  prefix?: boolean;
  matchEmail?: boolean;
  paging: Paging;
}

export interface UserQueries {
  get(id: string): Promise<UserDoc | null>;
  /** The site administrators (Girder's `getAdmins`: few, so not paged), for the notices they are sent. */
  admins(): Promise<UserDoc[]>;
  getByLogin(login: string): Promise<UserDoc | null>;
  getByEmail(email: string): Promise<UserDoc | null>;
  /**
   * Users whose login or name (or, with `matchEmail`, email) contains `text`; with `prefix`, whose login, first or
   * last name starts with it (any case). `matchEmail` only for callers shown every user's email (site admins): a
   * search is a filter, and a filter on a hidden field reads it (issue 27, rule 3).
   */
  list(options: UserSearch): Promise<Page<UserDoc>>;
  count(): Promise<number>;
}

export interface GroupQueries {
  get(id: string): Promise<GroupDoc | null>;
  /**
   * Groups by name: `exact` = that exact (case-sensitive) name, `prefix` = name starting with `text` (any case),
   * `text` = name or description containing it (any case), else all. `visibleTo`: only public groups and these group
   * ids (null: every group, for site admins).
   */
  list(options: {
    text?: string;
    exact?: boolean;
    prefix?: boolean;
    visibleTo: string[] | null;
    paging: Paging;
  }): Promise<Page<GroupDoc>>;
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

/**
 * Girder's `prefix` search mode over a resource with a name (its default `prefixSearchFields`, `lowerName` and
 * `name`): documents whose `name` starts with `prefix` as typed, or whose lower-cased name does (so a lower-case
 * prefix matches any case and a prefix with capitals only that exact case), on which the viewer holds `level`, the
 * filter inside the query.
 */
export interface PrefixSearch {
  prefix: string;
  viewer: Viewer | null;
  level: Level;
  paging: Paging;
}

export interface CollectionQueries {
  get(id: string): Promise<CollectionDoc | null>;
  getByName(name: string): Promise<CollectionDoc | null>;
  /** Collections the viewer holds `level` on (READ when not given; filter inside the query), optionally by text. */
  list(options: { viewer: Viewer | null; text?: string; level?: Level; paging: Paging }): Promise<Page<CollectionDoc>>;
  /** Collections by name prefix ({@link PrefixSearch}). */
  prefixSearch(options: PrefixSearch): Promise<Page<CollectionDoc>>;
}

/** A folder listing: the child folders of a parent the viewer may READ, with an optional exact name and text. */
export interface FolderListing {
  parentType: ParentType;
  parentId: string;
  viewer: Viewer | null;
  name?: string;
  text?: string;
  paging: Paging;
}

/** An item listing: the items directly in a folder, with an optional exact name and text. */
export interface ItemListing {
  folderId: string;
  name?: string;
  text?: string;
  paging: Paging;
}

/** A listing's position query: the listing, and the document whose place in its order is asked. */
export type PositionIn<Listing> = Listing & { id: string };

export interface FolderQueries {
  get(id: string): Promise<FolderDoc | null>;
  getMany(ids: string[]): Promise<FolderDoc[]>;
  /** Child folders of a parent that the viewer may READ; optional exact name and text filter. */
  listChildren(options: FolderListing): Promise<Page<FolderDoc>>;
  /**
   * How many of that listing's folders come before folder `id` in its order, ties by id (`paging`'s limit and offset
   * play no part): Girder's `GET /folder/:id/position`.
   */
  positionInChildren(options: PositionIn<FolderListing>): Promise<number>;
  /** How many of that search's folders come before folder `id` (as {@link positionInChildren}). */
  positionInSearch(options: { text: string; viewer: Viewer | null; paging: Paging; id: string }): Promise<number>;
  /** Global text search over folders the viewer holds `level` on (READ when not given). */
  search(options: {
    text: string;
    viewer: Viewer | null;
    level?: Level;
    paging: Paging;
  }): Promise<Page<FolderDoc & { _textScore: number }>>;
  /** Folders by name prefix ({@link PrefixSearch}). */
  prefixSearch(options: PrefixSearch): Promise<Page<FolderDoc>>;
  countChildren(options: { parentType: ParentType; parentId: string; viewer: Viewer | null }): Promise<number>;
  /** The child folder of a parent with exactly this (case-sensitive) name, not permission filtered (sibling-name
   * checks, reuseExisting). */
  childNamed(parentType: ParentType, parentId: string, name: string): Promise<FolderDoc | null>;
  /**
   * What holds `name` among a parent's children (folders and items share one namespace per parent): a folder, else
   * an item other than `exceptItemId` (folder parents only), else nothing. Sibling-name checks on every create.
   */
  siblingNamed(
    parentType: ParentType,
    parentId: string,
    name: string,
    exceptItemId?: string,
  ): Promise<'folder' | 'item' | null>;
  /** Items directly in a folder, not permission filtered (`nItems` of GET /folder/:id/details). */
  itemCount(folderId: string): Promise<number>;
  /** Ancestor folder ids of a folder, root-most first, ending with its parent when the parent is a folder. */
  ancestorIds(id: string): Promise<string[]>;
  /** Whether `candidateId` is `folderId` itself or lies underneath it. */
  isSelfOrDescendant(folderId: string, candidateId: string): Promise<boolean>;
  /**
   * Ids of the folders under `ancestorId` (not itself), in no particular order; with `lacking`, only those on which the
   * viewer holds less than `level` (the permission filter of the listings, inverted); with `outside`, without those
   * folders and every folder under them. A generic set-wise step: which folders a subtree change reaches is decided
   * from it in the projection layer (src/projections/folderAccess.ts).
   */
  idsUnder(
    ancestorId: string,
    filter?: { lacking?: { viewer: Viewer; level: Level }; outside?: string[] },
  ): Promise<string[]>;
}

export interface ItemQueries {
  get(id: string): Promise<ItemDoc | null>;
  /** Items directly in a folder (no permission filter beyond the folder's); optional exact name and text filter. */
  listInFolder(options: ItemListing): Promise<Page<ItemDoc>>;
  /** How many of that search's items come before item `id` (as `FolderQueries.positionInChildren`). */
  positionInSearch(options: { text: string; viewer: Viewer | null; paging: Paging; id: string }): Promise<number>;
  /** How many of that listing's items come before item `id` (as `FolderQueries.positionInChildren`). */
  positionInFolder(options: PositionIn<ItemListing>): Promise<number>;
  /**
   * The id of the item (the first by id) directly in a folder with exactly this name, other than `except`; null when
   * none (sibling-name checks: one indexed lookup, no page and no count).
   */
  namedInFolder(folderId: string, name: string, except?: string): Promise<string | null>;
  /**
   * Global text search over items whose folder the viewer holds `level` on (READ when not given; Girder checks an
   * item's access on its folder), the filter inside the query.
   */
  search(options: { text: string; viewer: Viewer | null; level?: Level; paging: Paging }): Promise<Page<ItemDoc>>;
  /** Items by name prefix ({@link PrefixSearch}; `level` on the item's folder). */
  prefixSearch(options: PrefixSearch): Promise<Page<ItemDoc>>;
  countInFolder(folderId: string): Promise<number>;
}

export interface FileQueries {
  get(id: string): Promise<FileDoc | null>;
  listForItem(itemId: string, paging: Paging): Promise<Page<FileDoc>>;
  /** Whether any file's bytes are the blob `blobId` (blobs are deleted only when this turns false). */
  isBlobReferenced(blobId: string): Promise<boolean>;
  /**
   * Files whose bytes are in one assetstore, by their blob references (src/domain/assetstoreBlobRef.ts): those that
   * start with `refs.prefix`, and with `refs.bare` the bare references too (the default store's).
   */
  listInAssetstore(refs: AssetstoreRefs, paging: Paging): Promise<Page<FileDoc>>;
  /** Whether {@link listInAssetstore} would list any file (one row looked for, nothing counted). */
  anyInAssetstore(refs: AssetstoreRefs): Promise<boolean>;
  /** Blob ids of the files of every item directly in the given folders (to reclaim after deleting them). */
  blobIdsInFolders(folderIds: string[]): Promise<string[]>;
  /** Blob ids of the files under a root user or collection (to reclaim after deleting it). */
  blobIdsUnderRoot(rootId: string): Promise<string[]>;
  /**
   * Files whose bytes have this SHA-512 (lower-case hex) and whose item's folder the viewer may READ, the filter inside
   * the query (an index on `sha512` finds them); by id (ObjectId order: by creation time to the second; a copy's id
   * carries the copy's second); at most `limit` of them when given.
   */
  withSha512(sha512: string, viewer: Viewer | null, limit?: number): Promise<FileDoc[]>;
}

/** Reads over whole subtrees, none permission filtered. */
export interface SubtreeQueries {
  /**
   * Girder's subtreeCount: 1 + every descendant folder + every item in the folder and its descendants; 0 when unknown.
   */
  subtreeCount(folderId: string): Promise<number>;
  /** Blob ids of every file in the folder and its descendants (to reclaim after deleting or emptying it). */
  blobIdsInSubtree(folderId: string): Promise<string[]>;
  /** The history index rows of a folder, in log order. */
  subtreeOpsFor(folderId: string): Promise<SubtreeOp[]>;
}

/** Everything routes, queries and commands read (the `readModel` of src/services.ts). */
export interface ReadModelQueries {
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
  history: HistoryQueries;
  /**
   * A number that changes whenever a user, a token or a group membership changes, in any process sharing the read
   * model, read synchronously (it is asked on every request). Optional: an adapter that cannot keep one exactly
   * leaves it out, and callers then read users and tokens afresh on every request (src/queries/accountCache.ts).
   */
  accountsVersion?(): number;
}
