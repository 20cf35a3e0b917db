/**
 * Which assetstore holds a file's bytes is part of the file's blob reference (`blobId` in its events and documents):
 *  - a blob of the default assetstore (the one a deployment starts with, src/domain/assetstore.ts) is named by its
 *    bare content address, as every file stored before assetstores existed is;
 *  - a blob of any other assetstore is `<assetstoreId>:<content address>`.
 * So everything that passes blob references around (reclaiming, restore retention, copies, zips) works across
 * assetstores unchanged, a reference count (`isBlobReferenced`) counts within one assetstore, and a copy of a file
 * references the same bytes in the same store.
 */

/** The id of the assetstore every deployment starts with (a well-formed ObjectId that no `newId` produces). */
export const DEFAULT_ASSETSTORE_ID = '000000000000000000000001';

const SEPARATOR = ':';

/** The reference to blob `localId` of assetstore `assetstoreId`. */
export function blobRef(assetstoreId: string, localId: string): string {
  return assetstoreId === DEFAULT_ASSETSTORE_ID ? localId : `${assetstoreId}${SEPARATOR}${localId}`;
}

/** The assetstore and the store's own blob id named by a reference. */
export function parseBlobRef(ref: string): { assetstoreId: string; localId: string } {
  const at = ref.indexOf(SEPARATOR);
  return at < 0
    ? { assetstoreId: DEFAULT_ASSETSTORE_ID, localId: ref }
    : { assetstoreId: ref.slice(0, at), localId: ref.slice(at + 1) };
}

/**
 * The SHA-256 a reference names its bytes by, when it does (a blob a store keeps by content address); null for
 * bytes named by a path or key (imported files, direct uploads' objects), whose content nothing vouches for.
 */
export function contentAddressOf(ref: string): string | null {
  const { localId } = parseBlobRef(ref);
  return /^[0-9a-f]{64}$/.test(localId) ? localId : null;
}

/** Marks the local id of an imported file: what follows is the path of the file itself. */
const IMPORTED = 'imported:';

/**
 * The reference to the bytes of a file imported in place (`POST /assetstore/:id/import`): the file at `filePath`
 * itself, which the service reads but never stores, copies or deletes. Always qualified by its store, whichever.
 */
export function importedRef(assetstoreId: string, filePath: string): string {
  return `${assetstoreId}${SEPARATOR}${IMPORTED}${filePath}`;
}

/** The path of an imported file's bytes, from its local id; null for a blob the store keeps. */
export function importedPathOf(localId: string): string | null {
  return localId.startsWith(IMPORTED) ? localId.slice(IMPORTED.length) : null;
}

/** Marks the local id of an object a client uploaded straight into the store: what follows is its key. */
const OBJECT = 'object:';

/**
 * The local id of an S3 object named by its key instead of a content address, which the service owns (it is deleted
 * once no file references it, nor a file removed within the retention window; the sweep removes it when nothing
 * does):
 *  - the object of a direct multipart upload (Girder's web client path to S3): the client completes the object after
 *    the service recorded the file, so the service never sees its bytes, and the file has no `sha512` until
 *    `POST /file/:id/hashsum` reads it once;
 *  - the object of a chunked upload through the service: it stays under its upload key rather than being copied to a
 *    content key (src/infra/blobs/s3/s3BlobStore.ts `finishUpload`); its file's `sha512` was taken as the chunks
 *    streamed.
 */
export const objectLocalId = (key: string): string => `${OBJECT}${key}`;

/** The key of an object named by its key, from its local id; null for any other blob. */
export function objectKeyOf(localId: string): string | null {
  return localId.startsWith(OBJECT) ? localId.slice(OBJECT.length) : null;
}

/**
 * Which references are one assetstore's (the read model's files-of-an-assetstore query): those starting with
 * `prefix`, and for the default store also the bare ones (no separator).
 */
export interface AssetstoreRefs {
  prefix: string;
  bare: boolean;
}

export function blobRefsOf(assetstoreId: string): AssetstoreRefs {
  return { prefix: `${assetstoreId}${SEPARATOR}`, bare: assetstoreId === DEFAULT_ASSETSTORE_ID };
}
