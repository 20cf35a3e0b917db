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
import { finishedUploadHashes, forgetUploadHashes, hashingChunk } from './runningUploadHashes';
import { DEFAULT_ASSETSTORE_ID } from '../domain/assetstoreBlobRef';
import { ValidationError } from '../domain/errors';
import type { BlobDeps } from './writeDeps';

/**
 * Chunked uploads into a store that takes them itself (S3 multipart uploads, src/ports/blobStore.ts): each chunk is
 * streamed straight to the store as the next part, so nothing of the upload lives on this host's disk and the next
 * chunk may go to any process (the parts are recorded with the upload's events). The hashes are taken as the chunks
 * stream through (./runningUploadHashes.ts).
 */

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
  const length = body.length;
  return hashingChunk(deps, state.uploadId, offset, async (hasher) => {
    const part = await store.uploadPart(started.storeUpload, state.parts.length + 1, body.stream, length, hasher);
    return { offset, length, part };
  });
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
  const hashes = await finishedUploadHashes(deps, uploadId, started.size);
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
  forgetUploadHashes(deps, started?.uploadId ?? '');
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
