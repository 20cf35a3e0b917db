import type { Readable } from 'node:stream';
import {
  keepsDirectUploads,
  takesDirectUploads,
  takesMultipartUploads,
  type MultipartBlobStore,
  type StoreUpload,
  type StoredBlob,
  type UploadedPart,
} from '../ports/blobStore';
import type { UploadStartedData, UploadState } from '../domain/upload';
import { ContentHasher } from '../domain/contentHashes';
import { DEFAULT_ASSETSTORE_ID } from '../domain/assetstoreBlobRef';
import { ValidationError } from '../domain/errors';
import type { BlobDeps } from './writeDeps';

/**
 * Chunked uploads into a store that takes them itself (S3 multipart uploads, src/ports/blobStore.ts): each chunk is
 * streamed straight to the store as the next part, so nothing of the upload lives on this host's disk and the next
 * chunk may go to any process (the parts are recorded with the upload's events).
 *
 * The hashes are taken as the chunks stream through. A process keeps the hash of an upload whose every chunk it has
 * seen, in order; when the last chunk completes the upload there, the bytes are never read again. When the chunks
 * were spread over processes (or a chunk failed midway), the completed bytes are read back once to hash them.
 */

type RunningHashes = Map<string, { hasher: ContentHasher; through: number }>;
/**
 * Running hashes by upload id, with how many bytes they cover, per service instance (keyed by its blob stores: two
 * instances in one process, as tests run them, are two processes here); bounded (a dropped one costs a read).
 */
const hashesByInstance = new WeakMap<object, RunningHashes>();
const MAX_RUNNING_HASHES = 1000;

function runningHashesOf(deps: Pick<BlobDeps, 'blobs'>): RunningHashes {
  let hashes = hashesByInstance.get(deps.blobs);
  if (!hashes) {
    hashes = new Map();
    hashesByInstance.set(deps.blobs, hashes);
  }
  return hashes;
}

/** The hasher to feed with the chunk at `offset` of an upload, if this process has seen everything before it. */
function hasherAt(runningHashes: RunningHashes, uploadId: string, offset: number): ContentHasher | undefined {
  const running = runningHashes.get(uploadId);
  if (offset === 0) {
    if (runningHashes.size >= MAX_RUNNING_HASHES && !running) {
      const oldest = runningHashes.keys().next();
      if (!oldest.done) runningHashes.delete(oldest.value);
    }
    const hasher = new ContentHasher();
    runningHashes.set(uploadId, { hasher, through: 0 });
    return hasher;
  }
  if (running?.through === offset) return running.hasher;
  runningHashes.delete(uploadId);
  return undefined;
}

/** The store of an upload's bytes, when it takes chunks itself. */
async function multipartStoreOf(
  deps: Pick<BlobDeps, 'blobs'>,
  assetstoreId: string,
): Promise<MultipartBlobStore | null> {
  const adapter = await deps.blobs.adapterOf(assetstoreId);
  return takesMultipartUploads(adapter) ? adapter : null;
}

/** Starts the store's multipart upload for a new upload into `assetstoreId`, when that store takes chunks itself. */
export async function beginStoreUpload(
  deps: Pick<BlobDeps, 'blobs'>,
  assetstoreId: string,
): Promise<StoreUpload | undefined> {
  const store = await multipartStoreOf(deps, assetstoreId);
  return store ? store.beginUpload() : undefined;
}

/**
 * Streams one chunk to the store as the upload's next part (Girder's minimum chunk size applies to every chunk but
 * the last). Resolves with what the chunk event records.
 */
export async function sendChunkToStore(
  deps: Pick<BlobDeps, 'blobs'>,
  state: UploadState,
  started: UploadStartedData & { storeUpload: StoreUpload },
  offset: number,
  body: { stream: Readable; length: number | undefined },
): Promise<{ offset: number; length: number; part: UploadedPart }> {
  const store = await multipartStoreOf(deps, started.assetstoreId ?? DEFAULT_ASSETSTORE_ID);
  if (!store) throw new ValidationError('The assetstore of this upload no longer takes chunks.');
  if (body.length === undefined)
    throw new ValidationError('A chunk of an upload to this assetstore needs a Content-Length.');
  const last = state.received + body.length === started.size;
  if (!last && body.length < store.minimumPartBytes)
    throw new ValidationError('Chunk is smaller than the minimum size.');
  const runningHashes = runningHashesOf(deps);
  const hasher = hasherAt(runningHashes, state.uploadId, offset);
  try {
    const part = await store.uploadPart(started.storeUpload, state.parts.length + 1, body.stream, body.length, hasher);
    const running = runningHashes.get(state.uploadId);
    if (running && hasher) running.through = offset + body.length;
    return { offset, length: body.length, part };
  } catch (error) {
    // Some of the chunk's bytes may have gone into the hash: the upload's bytes are hashed from the store at the end.
    runningHashes.delete(state.uploadId);
    throw error;
  }
}

/** Completes the store's multipart upload: the blob (held), with the hashes taken here when they cover every byte. */
export async function finishStoreUpload(
  deps: Pick<BlobDeps, 'blobs'>,
  started: UploadStartedData & { storeUpload: StoreUpload },
  parts: UploadedPart[],
  uploadId: string,
): Promise<StoredBlob> {
  const assetstoreId = started.assetstoreId ?? DEFAULT_ASSETSTORE_ID;
  const store = await multipartStoreOf(deps, assetstoreId);
  if (!store) throw new ValidationError('The assetstore of this upload no longer takes chunks.');
  const runningHashes = runningHashesOf(deps);
  const running = runningHashes.get(uploadId);
  runningHashes.delete(uploadId);
  const hashes = running?.through === started.size ? running.hasher.digests() : null;
  return deps.blobs.adopt(assetstoreId, await store.finishUpload(started.storeUpload, parts, hashes));
}

/**
 * Drops what a cancelled upload left in its store: the multipart upload begun for chunks sent through the service,
 * and a direct upload's object and the client's multipart upload (`s3UploadId`, once it said which). Nothing to drop
 * for a partial file.
 */
export async function abortStoreUpload(
  deps: Pick<BlobDeps, 'blobs'>,
  started: UploadStartedData | null,
  s3UploadId?: string,
): Promise<void> {
  runningHashesOf(deps).delete(started?.uploadId ?? '');
  if (!started?.storeUpload && !started?.direct) return;
  const store = await deps.blobs.adapterOf(started.assetstoreId ?? DEFAULT_ASSETSTORE_ID).catch(() => null);
  if (!store) return;
  if (started.storeUpload && takesMultipartUploads(store)) await store.abortUpload(started.storeUpload);
  if (started.direct && keepsDirectUploads(store)) await store.abortDirect(started.direct.key, s3UploadId);
}

/** What a new upload into `assetstoreId` records of the direct path, when its store offers one. */
export async function directOffer(
  deps: Pick<BlobDeps, 'blobs'>,
  assetstoreId: string,
  uploadId: string,
  size: number,
): Promise<UploadStartedData['direct']> {
  const store = await deps.blobs.adapterOf(assetstoreId);
  if (size <= 0 || !takesDirectUploads(store)) return undefined;
  return { key: store.directKey(uploadId), chunked: size > store.directChunkBytes };
}
