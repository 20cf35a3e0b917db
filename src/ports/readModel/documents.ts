import type { AccessList } from '../../domain/access';
import type { ParentType, RootType } from '../../domain/parents';

/**
 * The documents of the read models, shaped like Girder's Mongo documents plus what the queries need. Every role of the
 * port (queries, projection writes, history, projector plumbing) speaks in them.
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
  /** Two-factor login (Girder's `otp`): the TOTP key (base32) once started, `enabled` once confirmed; never shown. */
  otp?: UserOtp | null;
}

interface UserOtp {
  enabled: boolean;
  /** The shared TOTP secret, base32 (RFC 4648) without padding. */
  key: string;
}

/** The fields of a user that change after registration (profile, verification, two-factor). */
export type UserFields = Partial<
  Pick<UserDoc, 'firstName' | 'lastName' | 'email' | 'admin' | 'status' | 'emailVerified' | 'otp'>
>;

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
  /** Absent on an anonymous session token: it identifies no user. */
  userId?: string;
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
  /** SHA-512 of the bytes (Girder's field, shown to readers); absent on files stored before it was kept. */
  sha512?: string;
  copyOfFile?: string;
  copierId?: string;
  copied?: string;
}

export interface Page<T> {
  rows: T[];
  total: number;
}

/**
 * What a subtree operation did to a folder (the history index): `deleted` (removed by a delete of itself or of an
 * ancestor, or by emptying an ancestor), `cleared` (the folder that was emptied), `copied` (a folder created by a
 * copy),
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
