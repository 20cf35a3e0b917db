import { z } from 'zod';
import type { DomainEvent } from './decider';
import { accessListSchema } from './access';
import { PARENT_TYPES } from './parents';

/*
 * The folder events as subscribers read them: each event type's zod schema (checked before every append) and the data
 * type it gives. This is the published contract (docs/events.md); the decider that makes these events is in folder.ts.
 */

/**
 * Every folder move appends one event to this stream with its expected revision, so moves are serialised: a move
 * checks "the new parent is not underneath me" against a read model that reflects every earlier move (it waits for
 * this stream's last position first), and two concurrent moves cannot both pass that check and form a cycle.
 */
export const FOLDER_TREE_STREAM = 'foldertree-moves';

const parentTypeSchema = z.enum(PARENT_TYPES);
const metadataSchema = z.record(z.string(), z.unknown());

/** A folder came into being under a parent, with its ACL (already inherited) and its initial metadata. */
const FolderCreatedSchema = z.object({
  folderId: z.string(),
  name: z.string(),
  description: z.string(),
  parentType: parentTypeSchema,
  parentId: z.string(),
  creatorId: z.string().nullable(),
  created: z.string(),
  /** Absent for a folder created under a user without an explicit `public` (Girder stores no field then). */
  public: z.boolean().optional(),
  access: accessListSchema,
  meta: metadataSchema,
});

/** `PUT /folder/:id`: name and/or description replaced (when given); `updated` always advances. */
const FolderUpdatedSchema = z.object({
  folderId: z.string(),
  name: z.string().optional(),
  description: z.string().optional(),
  updated: z.string(),
});

/** The folder's metadata after a change (set, merge or key removal): the complete resulting object. */
const FolderMetadataChangedSchema = z.object({
  folderId: z.string(),
  meta: metadataSchema,
  updated: z.string(),
});

/** `PUT /resource/:id/timestamp` (site administrators): the created and/or updated time replaced, as given. */
const FolderTimestampsSetSchema = z.object({
  folderId: z.string(),
  created: z.string().optional(),
  updated: z.string().optional(),
});

/** The folder (with its whole subtree) now lives under another parent. */
const FolderMovedSchema = z.object({
  folderId: z.string(),
  fromParentType: parentTypeSchema,
  fromParentId: z.string(),
  parentType: parentTypeSchema,
  parentId: z.string(),
  updated: z.string(),
});

/** Who acted, as far as access rules go (recorded so that applying an event never depends on later state). */
const actorSchema = z.object({ id: z.string(), admin: z.boolean(), groups: z.array(z.string()) });

/**
 * The folder's ACL was replaced; `public`/`publicFlags` are present when they were set too. `updated` is unchanged.
 * With `recurse`, the same policy also applies to every descendant folder reachable through folders on which `actor`
 * holds ADMIN (others and their subtrees are skipped), as the read model stands when the event is applied.
 */
const FolderAccessChangedSchema = z.object({
  folderId: z.string(),
  access: accessListSchema,
  public: z.boolean().optional(),
  publicFlags: z.array(z.string()).optional(),
  recurse: z.literal(true).optional(),
  actor: actorSchema.optional(),
});

/**
 * `DELETE /folder/:id`: the folder and its whole subtree (every descendant folder, not permission filtered, with their
 * items and files) are gone. One event for the whole subtree: the projection removes it set-wise in one read-model
 * transaction (docs/subtree-operations.md). `opId` names the operation (history index, logs).
 */
const FolderDeletedSchema = z.object({
  folderId: z.string(),
  parentType: parentTypeSchema,
  parentId: z.string(),
  name: z.string(),
  opId: z.string(),
});

/**
 * `DELETE /folder/:id/contents`: every item and subfolder under the folder is gone (set-wise, as for a delete); the
 * folder stays, with size 0 and its `updated` unchanged.
 */
const FolderContentsClearedSchema = z.object({
  folderId: z.string(),
  opId: z.string(),
});

/**
 * `POST /folder/:id/copy`, on the stream of the **new** folder: everything the new root folder is (its name already
 * made unique among its new siblings, ACL inherited from the new parent plus the copier's ADMIN, the source's metadata
 * and publicFlags). The projection copies the rest set-wise in the same transaction, judged on the read model as it
 * stands when the event is applied: every item of each copied folder (files reference the same blobs), and the
 * subfolders `copier` may READ, recursively; each copied subfolder inherits `public ?? false` and `access` from the new
 * root. Ids of the copies are derived from `opId` and the source ids, so a rebuild produces the same ids.
 */
const FolderCopiedSchema = z.object({
  opId: z.string(),
  sourceId: z.string(),
  folderId: z.string(),
  parentType: parentTypeSchema,
  parentId: z.string(),
  name: z.string(),
  description: z.string(),
  /** Absent when the copy lands under a user with no explicit `public` and the source has none. */
  public: z.boolean().optional(),
  publicFlags: z.array(z.string()).optional(),
  access: accessListSchema,
  creatorId: z.string(),
  created: z.string(),
  meta: metadataSchema,
  copier: actorSchema,
});

/**
 * `POST /folder/:id/restore`: a folder removed by a subtree operation (its own FolderDeleted, a delete of an ancestor
 * or the clearing of an ancestor, recorded at log position `deletedPosition`) is back, with everything that operation
 * removed below it, under `parentType/parentId` and named `name` (renamed `name (n)` on a collision there). The rest
 * is the folder as it was when it was removed, so that the event alone restores the decider state. The projection
 * moves the removed rows back set-wise from where it kept them (docs/events.md).
 */
const FolderRestoredSchema = z.object({
  folderId: z.string(),
  opId: z.string(),
  /** Log position (decimal) of the operation that removed the folder. */
  deletedPosition: z.string().regex(/^\d+$/),
  parentType: parentTypeSchema,
  parentId: z.string(),
  name: z.string(),
  description: z.string(),
  public: z.boolean().optional(),
  publicFlags: z.array(z.string()).optional(),
  access: accessListSchema,
  meta: metadataSchema,
  creatorId: z.string().nullable(),
  created: z.string(),
  updated: z.string(),
});

/** The marker appended to {@link FOLDER_TREE_STREAM} by every move. */
export const FolderTreeChangedSchema = z.object({
  folderId: z.string(),
  parentType: parentTypeSchema,
  parentId: z.string(),
});

export const folderEventSchemas = {
  FolderCreated: FolderCreatedSchema,
  FolderUpdated: FolderUpdatedSchema,
  FolderMetadataChanged: FolderMetadataChangedSchema,
  FolderMoved: FolderMovedSchema,
  FolderAccessChanged: FolderAccessChangedSchema,
  FolderDeleted: FolderDeletedSchema,
  FolderContentsCleared: FolderContentsClearedSchema,
  FolderCopied: FolderCopiedSchema,
  FolderRestored: FolderRestoredSchema,
  FolderTimestampsSet: FolderTimestampsSetSchema,
} as const;

export type FolderCreatedData = z.infer<typeof FolderCreatedSchema>;
type FolderUpdatedData = z.infer<typeof FolderUpdatedSchema>;
type FolderMetadataChangedData = z.infer<typeof FolderMetadataChangedSchema>;
type FolderMovedData = z.infer<typeof FolderMovedSchema>;
export type FolderAccessChangedData = z.infer<typeof FolderAccessChangedSchema>;
export type FolderDeletedData = z.infer<typeof FolderDeletedSchema>;
export type FolderContentsClearedData = z.infer<typeof FolderContentsClearedSchema>;
export type FolderCopiedData = z.infer<typeof FolderCopiedSchema>;
export type FolderRestoredData = z.infer<typeof FolderRestoredSchema>;
type FolderTimestampsSetData = z.infer<typeof FolderTimestampsSetSchema>;

export type FolderEvent =
  | DomainEvent<'FolderCreated', FolderCreatedData>
  | DomainEvent<'FolderUpdated', FolderUpdatedData>
  | DomainEvent<'FolderMetadataChanged', FolderMetadataChangedData>
  | DomainEvent<'FolderMoved', FolderMovedData>
  | DomainEvent<'FolderAccessChanged', FolderAccessChangedData>
  | DomainEvent<'FolderDeleted', FolderDeletedData>
  | DomainEvent<'FolderContentsCleared', FolderContentsClearedData>
  | DomainEvent<'FolderCopied', FolderCopiedData>
  | DomainEvent<'FolderRestored', FolderRestoredData>
  | DomainEvent<'FolderTimestampsSet', FolderTimestampsSetData>;
