import { z } from 'zod';
import type { DomainEvent } from './decider';
import { SHA512_HEX } from './contentHashes';

/*
 * The item and file events as subscribers read them: each event type's zod schema (checked before every append) and
 * the data type it gives. This is the published contract (docs/events.md); the decider that makes these events is in
 * item.ts.
 */

const metadataSchema = z.record(z.string(), z.unknown());

/** An item came into being in a folder (its name already made unique among the folder's children). */
const ItemCreatedSchema = z.object({
  itemId: z.string(),
  folderId: z.string(),
  name: z.string(),
  description: z.string(),
  creatorId: z.string().nullable(),
  created: z.string(),
  meta: metadataSchema,
  /** The item this one is a copy of. */
  copyOfItem: z.string().optional(),
});

/** Name and/or description replaced (when given); `updated` always advances. */
const ItemUpdatedSchema = z.object({
  itemId: z.string(),
  name: z.string().optional(),
  description: z.string().optional(),
  updated: z.string(),
});

/** The item now lives in another folder, under `name` (renamed when the name was taken there). */
const ItemMovedSchema = z.object({
  itemId: z.string(),
  fromFolderId: z.string(),
  folderId: z.string(),
  name: z.string(),
  updated: z.string(),
});

/** The item's metadata after a change: the complete resulting object. */
const ItemMetadataChangedSchema = z.object({ itemId: z.string(), meta: metadataSchema, updated: z.string() });

/** A copy of the item was made (recorded on the source so that a concurrent delete of the source conflicts with it). */
const ItemCopiedSchema = z.object({ itemId: z.string(), copyItemId: z.string() });

/** The item and all its files are gone; `files` names the blobs they referenced. */
const ItemDeletedSchema = z.object({
  itemId: z.string(),
  folderId: z.string(),
  name: z.string(),
  files: z.array(z.object({ fileId: z.string(), blobId: z.string(), size: z.number().int().nonnegative() })),
});

/** SHA-512 of a file's bytes, lower-case hex (Girder's `sha512` on file documents). */
const sha512Schema = z.string().regex(SHA512_HEX);

const fileRecordSchema = z.object({
  fileId: z.string(),
  name: z.string(),
  mimeType: z.string(),
  size: z.number().int().nonnegative(),
  /** SHA-256 of the bytes: the BlobStore id. */
  blobId: z.string(),
  creatorId: z.string().nullable(),
  created: z.string(),
  /** Lower-cased extensions after the first dot of the name (`a.tar.gz` → `["tar", "gz"]`). */
  exts: z.array(z.string()),
  /** SHA-512 of the bytes, taken while they were stored; absent on files recorded before it was kept. */
  sha512: sha512Schema.optional(),
  /** Set on copies: the copied file and who copied it, when. */
  copyOfFile: z.string().optional(),
  copierId: z.string().optional(),
  copied: z.string().optional(),
});
export type FileRecord = z.infer<typeof fileRecordSchema>;

/** A file was added to the item (a finished upload or a copy). */
const FileCreatedSchema = fileRecordSchema.extend({ itemId: z.string() });

/** A file's bytes were replaced by a finished upload (`PUT /file/:id/contents`). */
const FileContentsReplacedSchema = z.object({
  itemId: z.string(),
  fileId: z.string(),
  blobId: z.string(),
  size: z.number().int().nonnegative(),
  previousBlobId: z.string(),
  previousSize: z.number().int().nonnegative(),
  creatorId: z.string().nullable(),
  created: z.string(),
  /** SHA-512 of the new bytes (absent in events recorded before it was kept: the file then has none). */
  sha512: sha512Schema.optional(),
});

/**
 * The SHA-512 of a file recorded before it was kept, computed from its stored bytes (`POST /file/:id/hashsum`).
 * `blobId` names the bytes that were hashed.
 */
const FileHashComputedSchema = z.object({
  itemId: z.string(),
  fileId: z.string(),
  blobId: z.string(),
  sha512: sha512Schema,
});

/**
 * A file's bytes were copied to another assetstore (`PUT /file/:id/move`): the same bytes, now under `blobId`;
 * `previousBlobId` is released under the retention rules. `sha512` is the hash taken while the bytes were copied.
 */
const FileMovedSchema = z.object({
  itemId: z.string(),
  fileId: z.string(),
  blobId: z.string(),
  previousBlobId: z.string(),
  sha512: sha512Schema.optional(),
});

/** `PUT /resource/:id/timestamp` (site administrators): the created and/or updated time replaced, as given. */
const ItemTimestampsSetSchema = z.object({
  itemId: z.string(),
  created: z.string().optional(),
  updated: z.string().optional(),
});

/** `PUT /resource/:id/timestamp?type=file`: a file's created time replaced (files have no updated time). */
const FileTimestampsSetSchema = z.object({ itemId: z.string(), fileId: z.string(), created: z.string() });

/** A file's name and/or MIME type were changed (`PUT /file/:id`); `exts` follow the name. */
const FileUpdatedSchema = z.object({
  itemId: z.string(),
  fileId: z.string(),
  name: z.string().optional(),
  mimeType: z.string().optional(),
});

/**
 * A copy of the file was made into item `toItemId` (`POST /file/:id/copy`): recorded on the source's item so that a
 * concurrent delete of the source conflicts with it; the copy's own FileCreated carries the record.
 */
const FileCopiedSchema = z.object({
  itemId: z.string(),
  fileId: z.string(),
  copyFileId: z.string(),
  toItemId: z.string(),
});

const FileDeletedSchema = z.object({
  itemId: z.string(),
  fileId: z.string(),
  blobId: z.string(),
  size: z.number().int().nonnegative(),
});

export const itemEventSchemas = {
  ItemCreated: ItemCreatedSchema,
  ItemUpdated: ItemUpdatedSchema,
  ItemMoved: ItemMovedSchema,
  ItemMetadataChanged: ItemMetadataChangedSchema,
  ItemCopied: ItemCopiedSchema,
  ItemDeleted: ItemDeletedSchema,
  FileCreated: FileCreatedSchema,
  FileContentsReplaced: FileContentsReplacedSchema,
  FileHashComputed: FileHashComputedSchema,
  FileMoved: FileMovedSchema,
  FileUpdated: FileUpdatedSchema,
  ItemTimestampsSet: ItemTimestampsSetSchema,
  FileTimestampsSet: FileTimestampsSetSchema,
  FileCopied: FileCopiedSchema,
  FileDeleted: FileDeletedSchema,
} as const;

type ItemCreatedData = z.infer<typeof ItemCreatedSchema>;
type ItemUpdatedData = z.infer<typeof ItemUpdatedSchema>;
type ItemMovedData = z.infer<typeof ItemMovedSchema>;
type ItemMetadataChangedData = z.infer<typeof ItemMetadataChangedSchema>;
type ItemCopiedData = z.infer<typeof ItemCopiedSchema>;
type ItemDeletedData = z.infer<typeof ItemDeletedSchema>;
type FileCreatedData = z.infer<typeof FileCreatedSchema>;
type FileContentsReplacedData = z.infer<typeof FileContentsReplacedSchema>;
type FileHashComputedData = z.infer<typeof FileHashComputedSchema>;
type FileMovedData = z.infer<typeof FileMovedSchema>;
type FileUpdatedData = z.infer<typeof FileUpdatedSchema>;
type ItemTimestampsSetData = z.infer<typeof ItemTimestampsSetSchema>;
type FileTimestampsSetData = z.infer<typeof FileTimestampsSetSchema>;
type FileCopiedData = z.infer<typeof FileCopiedSchema>;
type FileDeletedData = z.infer<typeof FileDeletedSchema>;

export type ItemEvent =
  | DomainEvent<'ItemCreated', ItemCreatedData>
  | DomainEvent<'ItemUpdated', ItemUpdatedData>
  | DomainEvent<'ItemMoved', ItemMovedData>
  | DomainEvent<'ItemMetadataChanged', ItemMetadataChangedData>
  | DomainEvent<'ItemCopied', ItemCopiedData>
  | DomainEvent<'ItemDeleted', ItemDeletedData>
  | DomainEvent<'FileCreated', FileCreatedData>
  | DomainEvent<'FileContentsReplaced', FileContentsReplacedData>
  | DomainEvent<'FileHashComputed', FileHashComputedData>
  | DomainEvent<'FileMoved', FileMovedData>
  | DomainEvent<'FileUpdated', FileUpdatedData>
  | DomainEvent<'ItemTimestampsSet', ItemTimestampsSetData>
  | DomainEvent<'FileTimestampsSet', FileTimestampsSetData>
  | DomainEvent<'FileCopied', FileCopiedData>
  | DomainEvent<'FileDeleted', FileDeletedData>;
