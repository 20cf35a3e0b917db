import type { Readable } from 'node:stream';
import type { AssetstoreCommand, AssetstoreEvent, AssetstoreSettings, AssetstoreState } from '../domain/assetstore';
import type { Decider } from '../domain/decider';
import type { ContentHashes, RunningHash } from '../domain/contentHashes';

/**
 * The BlobStore port: immutable, content-addressed byte blobs. A blob's id is the SHA-256 of its bytes (64 lower-case
 * hex digits), so identical bytes are stored once however many files use them. Which files reference a blob is
 * recorded by the read model (`FileQueries.isBlobReferenced`), not here: a blob is deleted only after the last file
 * using it is gone (see src/commands/blobReclaim.ts), and a startup sweep removes what nothing references.
 *
 * Deleting a blob races with storing the same bytes again (a new upload, a copy). The store closes that race with
 * holds and deletion tickets in process:
 *  - `put` (and `hold`) hold a blob until `release`: a held blob is never deleted;
 *  - `deletionTicket(id)` is taken *before* the caller checks the read model for references; `delete(id, ticket)`
 *    refuses when the blob was put or held again after the ticket was issued, since that writer's reference may not be
 *    visible to the check the caller just made;
 * and across processes sharing the store with "stored, not yet referenced" claims (src/infra/blobs/claims.ts): a
 * put or hold in any process keeps the blob from being deleted by any other until it is released, and the sweep
 * spares blobs stored (or stored again) within its grace period.
 */
export interface StoredBlob {
  /**
   * The store's id of the bytes: their SHA-256, hex, for a content-addressed blob; an object named by its key
   * (src/domain/assetstoreBlobRef.ts `objectLocalId`) for a chunked upload into S3, which stays where it was uploaded.
   */
  blobId: string;
  size: number;
  /** SHA-512 of the bytes, hex: taken in the same pass as the id (a file's `sha512`, src/domain/contentHashes.ts). */
  sha512: string;
}

/** A byte range: `start` inclusive, `end` exclusive (`end` ≤ size). */
export interface ByteRange {
  start: number;
  end: number;
}

export type DeletionTicket = number;

export interface SweepReport {
  /** Blobs removed because no file referenced them. */
  removedBlobs: number;
  /** Leftovers of interrupted puts (temporary files). */
  removedTemporary: number;
  /** Assetstores that could not be opened and were not swept (their turn comes at the next startup). */
  skippedStores?: string[];
}

export interface BlobStore {
  /**
   * Stores the bytes of `source` (streamed, never buffered whole) and resolves once they are durable. Identical bytes
   * already stored are not stored twice. The blob is held until `release(blobId)`. When `source` fails (a client
   * disconnect, a size limit) nothing is left behind and the promise rejects with that error.
   */
  put(source: Readable): Promise<StoredBlob>;
  /**
   * Holds an existing blob (e.g. while a copy that references it is being committed), in this process at once and in
   * every process sharing the store once the promise resolves: await it before committing.
   */
  hold(blobId: string): Promise<void>;
  /** Ends one hold taken by `put` or `hold`. */
  release(blobId: string): void;
  /** A read stream of the blob's bytes, or of `range`. Rejects when the blob does not exist. */
  get(blobId: string, range?: ByteRange): Promise<Readable>;
  exists(blobId: string): Promise<boolean>;
  deletionTicket(blobId: string): DeletionTicket;
  /**
   * Deletes the blob unless it is held or (with a ticket) was put or held since the ticket was issued. Resolves true
   * when the blob is gone afterwards because of this call.
   */
  delete(blobId: string, ticket?: DeletionTicket): Promise<boolean>;
  /**
   * Removes leftovers of interrupted puts and every blob for which `isReferenced` resolves false, except blobs held
   * or claimed by any process and blobs stored (or stored again) within the grace period. Meant for startup, after
   * the read models have caught up and before requests are served.
   */
  sweep(isReferenced: (blobId: string) => Promise<boolean>): Promise<SweepReport>;
  /**
   * Stores the bytes of a finished file (a chunked upload's, hashed as they came in) without reading or copying them:
   * the store links the file in under its id (the file stays where it is; whoever owns it removes it). Resolves null
   * when it cannot (another filesystem); a store without this method is given the bytes by `put`.
   */
  linkFile?(file: string, hashes: ContentHashes): Promise<StoredBlob | null>;
}

/** A multipart upload in a store (S3's key and upload id), recorded with the upload so any process can go on with it. */
export interface StoreUpload {
  key: string;
  uploadId: string;
}

/**
 * A multipart upload a store holds, as the store lists it (whether or not any upload in progress records it): S3's
 * multipart uploads in progress under the store's own keys, GridFS's sets of parts.
 */
export interface HeldUpload extends StoreUpload {
  /** When the store began it (S3's `Initiated`; GridFS: its first part), epoch ms. */
  created: number;
  /** When it last took bytes, where the store knows (GridFS: its newest part), epoch ms. */
  updated?: number;
  /** The bytes its parts hold, where the store knows without asking per upload (GridFS). */
  size?: number;
}

/** One part of a multipart upload as the store acknowledged it. */
export interface UploadedPart {
  number: number;
  etag: string;
}

/**
 * A store that takes the chunks of an upload in progress itself (S3 multipart uploads), so that nothing of it lives
 * on a host's disk and its chunks may reach any process.
 */
export interface MultipartBlobStore extends BlobStore {
  /** The smallest chunk but the last that the store accepts (S3: 5 MiB). */
  readonly minimumPartBytes: number;
  beginUpload(): Promise<StoreUpload>;
  /**
   * Streams one chunk, of exactly `length` bytes, as part `number`, feeding `hasher` (when given) as the bytes pass.
   * A failed or short chunk records nothing: the next attempt sends the same part number again.
   */
  uploadPart(
    upload: StoreUpload,
    number: number,
    source: Readable,
    length: number,
    hasher?: RunningHash,
  ): Promise<UploadedPart>;
  /**
   * Completes the upload and stores its bytes as a blob (held, as `put` holds): S3 keeps the completed object under
   * its own key, which names the blob (no copy to a content key, so no dedup). `hashes` are the bytes' hashes when
   * one process saw every chunk; without them the completed bytes are read back once to take them.
   */
  finishUpload(upload: StoreUpload, parts: UploadedPart[], hashes: ContentHashes | null): Promise<StoredBlob>;
  /** Drops an upload in progress and the parts it received. */
  abortUpload(upload: StoreUpload): Promise<void>;
  /**
   * Every multipart upload the store holds under its own keys, tracked or not (Girder's adapter `untrackedUploads`
   * lists them; which are tracked is the caller's to tell, src/queries/untrackedUploads.ts), each droppable with
   * `abortUpload`. Leaves out what a put in progress may still be writing (S3's `tmp/` uploads within the sweep's grace)
   * and what is not the service's to drop (none at all in a read-only S3 store).
   */
  heldUploads(): AsyncIterable<HeldUpload>;
}

/** A request a client makes to the store itself (Girder's `s3.request`, `s3FinalizeRequest`). */
export interface ClientRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
}

/** Girder's `s3` of an upload answer: how the client sends its bytes straight into the store. */
export interface DirectUploadStart {
  /** Sent as a multipart upload of `chunkLength`-byte parts (else in one PUT). */
  chunked: boolean;
  chunkLength: number;
  /** The object the bytes go to, and `/<bucket>/<key>`. */
  key: string;
  relpath: string;
  /** The first request: the PUT of the whole object, or the POST that starts the multipart upload. */
  request: ClientRequest & { headers: Record<string, string> };
}

/**
 * A store that clients may talk to themselves (an S3 store whose `redirect` setting is on, as Girder's S3 stores
 * always are): the web client uploads straight into it with presigned requests, and downloads are redirected there.
 */
export interface DirectBlobStore extends BlobStore {
  readonly direct: true;
  /** Uploads larger than this go as a multipart upload of parts of this size (Girder's CHUNK_LEN). */
  readonly directChunkBytes: number;
  /** The object a direct upload's bytes go to. */
  directKey(uploadId: string): string;
  startDirect(
    key: string,
    upload: { size: number; mimeType: string; contentDisposition: string; userId: string },
  ): Promise<DirectUploadStart>;
  signDirectPart(key: string, part: { s3UploadId: string; partNumber: number; length: number }): Promise<ClientRequest>;
  /**
   * Completes the client's multipart upload from the parts the store holds (as Girder 5 does: its web client leaves
   * the completion to the server): a RestError with Girder's message when they do not add up to `size` bytes.
   */
  completeDirect(key: string, s3UploadId: string, size: number): Promise<void>;
  /**
   * The object of a direct upload sent in one request, as a blob (held, as `put` holds): read back once to hash it;
   * a RestError with Girder's completion message when it is missing or not `size` bytes long.
   */
  adoptDirect(key: string, size: number): Promise<StoredBlob>;
  /** The local id of a direct multipart upload's object, which the client completes after the service saw it. */
  directObjectId(key: string): string;
  /** Drops what a cancelled direct upload left: its object and, when it was started, its multipart upload. */
  abortDirect(key: string, s3UploadId: string | undefined): Promise<void>;
  /** A presigned URL of a blob's bytes, answered with these headers. */
  downloadUrl(blobId: string, headers: { contentType: string; contentDisposition: string }): Promise<string>;
}

/** One page of a listing of a bucket under a prefix, by `/`: the objects there and the prefixes below. */
export interface ImportListingPage {
  objects: { key: string; size: number }[];
  prefixes: string[];
}

/** A store whose existing objects can be imported in place (an S3 bucket): listed by prefix, read by key. */
export interface ImportableBlobStore extends BlobStore {
  listForImport(prefix: string): AsyncIterable<ImportListingPage>;
}

export const importsObjects = (store: BlobStore): store is ImportableBlobStore =>
  'listForImport' in store && typeof store.listForImport === 'function';

export const takesDirectUploads = (store: BlobStore): store is DirectBlobStore =>
  'direct' in store && store.direct === true;

/** A store that may hold direct uploads (made while its `redirect` was on): a cancel drops what they left. */
export const keepsDirectUploads = (store: BlobStore): store is Omit<DirectBlobStore, 'direct'> & BlobStore =>
  'abortDirect' in store && typeof store.abortDirect === 'function';

export const takesMultipartUploads = (store: BlobStore): store is MultipartBlobStore =>
  'beginUpload' in store && typeof store.beginUpload === 'function';

/**
 * Every assetstore's blobs behind one BlobStore (src/infra/blobs/assetstoreBlobs.ts): its blob ids are references that
 * name the store (src/domain/assetstoreBlobRef.ts). `put` stores into the current assetstore.
 */
export interface BlobStores extends BlobStore {
  /** The assetstore new uploads go to. */
  currentId(): Promise<string>;
  /** `put` into a given assetstore (an upload finishes in the store it started in). */
  putInto(assetstoreId: string, source: Readable): Promise<StoredBlob>;
  /**
   * The bytes of a finished file (a chunked upload's) into a given assetstore, in one pass: linked in with `hashes`
   * when the store can (the fs store on the same filesystem), else hashed while read once (without `hashes`) and
   * linked, else `put` from the file. The file is left where it is.
   */
  putFileInto(assetstoreId: string, file: string, hashes: ContentHashes | null): Promise<StoredBlob>;
  /** A running hash of bytes as they stream in (the chunks of an upload): the one the stores take themselves. */
  runningHash(): RunningHash;
  /** The adapter of one assetstore (a 400 when the store does not exist). */
  adapterOf(assetstoreId: string): Promise<BlobStore>;
  /**
   * The multipart uploads one assetstore holds (its adapter's `heldUploads`; none for a store that takes none): a read
   * for the queries, which are given no adapter (a 400 when the store does not exist).
   */
  uploadsHeldIn(assetstoreId: string): Promise<HeldUpload[]>;
  /** A blob an adapter stored (and holds) itself, as a reference of its assetstore held here too until `release`. */
  adopt(assetstoreId: string, stored: StoredBlob): StoredBlob;
  /**
   * The checks of a store's settings that need I/O (Girder's validateInfo: the root can be made and written, the
   * database answers): a ValidationError with Girder's message when the store cannot be used.
   */
  probe(settings: AssetstoreSettings): Promise<void>;
  /**
   * Where a client may fetch a blob's bytes itself (a presigned URL of an S3 store with `redirect` on), answered with
   * these headers; null when the bytes are to be streamed by the service.
   */
  downloadUrl(ref: string, headers: { contentType: string; contentDisposition: string }): Promise<string | null>;
  dispose(): Promise<void>;
}

/** The assetstores' decider, whose initial state is the deployment's default store (src/domain/assetstore.ts). */
export type AssetstoreDecider = Decider<AssetstoreState, AssetstoreCommand, AssetstoreEvent>;

/** Raised by `PartialUploadStore.write` when the source carries more bytes than allowed. */
export class TooManyBytesError extends Error {
  constructor() {
    super('Received too many bytes.');
    this.name = 'TooManyBytesError';
  }
}

/**
 * The bytes of chunked uploads in progress, one growing file per upload. Only what the upload's record says was
 * received counts: `write` first cuts off anything beyond `offset` (what an interrupted chunk left), and cuts back to
 * `offset` again when the chunk fails.
 */
export interface PartialUploadStore {
  /**
   * Streams `source` in at `offset`, feeding `hasher` (when given) as the bytes pass; TooManyBytesError past
   * `maxBytes`. Resolves with the byte count once durable.
   */
  write(uploadId: string, offset: number, source: Readable, maxBytes: number, hasher?: RunningHash): Promise<number>;
  /**
   * The file of the bytes received so far (to be linked into a blob store: a later write never changes the bytes
   * seen through such a link, it writes a copy).
   */
  pathOf(uploadId: string): string;
  truncate(uploadId: string, length: number): Promise<void>;
  remove(uploadId: string): Promise<void>;
  /** Upload ids with bytes here, and `stray` entries that belong to no upload. */
  list(): Promise<{ uploads: string[]; stray: string[] }>;
  /** When an entry `list` gave (an upload id or a stray name) was last written, epoch ms; null once it is gone. */
  modifiedAt(name: string): Promise<number | null>;
  removeStray(name: string): Promise<void>;
}
