import type { AccessList, Viewer } from '../domain/access';
import type { Paging } from '../http/params';

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
  groupInvites: unknown[];
  status: 'enabled' | 'disabled' | 'pending';
  emailVerified: boolean;
  access: AccessList;
  /** `scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>`; never leaves the service. */
  passwordHash: string;
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

export type ParentType = 'folder' | 'user' | 'collection';
export type RootType = 'user' | 'collection';

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

export interface Page<T> {
  rows: T[];
  total: number;
}

export interface UserQueries {
  get(id: string): Promise<UserDoc | null>;
  getByLogin(login: string): Promise<UserDoc | null>;
  getByEmail(email: string): Promise<UserDoc | null>;
  list(options: { text?: string; paging: Paging }): Promise<Page<UserDoc>>;
  count(): Promise<number>;
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
  /** Ancestor folder ids of a folder, root-most first, ending with its parent when the parent is a folder. */
  ancestorIds(id: string): Promise<string[]>;
  /** Whether `candidateId` is `folderId` itself or lies underneath it. */
  isSelfOrDescendant(folderId: string, candidateId: string): Promise<boolean>;
}

export interface UserWrites {
  put(doc: UserDoc): void;
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
  delete(id: string): void;
}
export interface FolderWrites {
  /** Inserts a folder; the adapter derives its ancestry and `baseParentType/Id` from the parent as stored now. */
  insert(doc: Omit<FolderDoc, 'baseParentType' | 'baseParentId'>): void;
  /** Replaces the mutable fields of a folder (not its position in the tree). */
  update(id: string, fields: Partial<Omit<FolderDoc, '_id' | 'parentId' | 'parentCollection' | 'baseParentType' | 'baseParentId'>>): void;
  /** Moves a folder under a new parent; the adapter rewrites ancestry and base parent of the whole subtree. */
  move(id: string, parentType: ParentType, parentId: string, updated: string): void;
  delete(id: string): void;
}

export interface ReadModelTx {
  users: UserWrites;
  tokens: TokenWrites;
  apiKeys: ApiKeyWrites;
  collections: CollectionWrites;
  folders: FolderWrites;
}

export interface ReadModel {
  users: UserQueries;
  tokens: TokenQueries;
  apiKeys: ApiKeyQueries;
  collections: CollectionQueries;
  folders: FolderQueries;
  /** Position of the last event the named projection applied (0n when none). */
  checkpoint(projection: string): Promise<bigint>;
  /**
   * Applies one event's writes and moves the projection's checkpoint to `position`, atomically. Returns false
   * (and writes nothing) when the checkpoint is already at or past `position`: replays are no-ops.
   */
  apply(projection: string, position: bigint, write: (tx: ReadModelTx) => void): Promise<boolean>;
  /** Empties every read model and checkpoint (the start of a rebuild). */
  reset(): Promise<void>;
  /** A canonical dump of every read model, for comparing a rebuild with the live state. */
  dump(): Promise<Record<string, unknown[]>>;
  dispose(): Promise<void>;
}
