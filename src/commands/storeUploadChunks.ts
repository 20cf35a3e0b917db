import type { Readable } from 'node:stream';
import type { Services } from '../services';
import {
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

/**
 * Chunked uploads into a store that takes them itself (S3 multipart uploads, src/ports/blobStore.ts): each chunk is
 * streamed straight to the store as the next part, so nothing of the upload lives on this host's disk and the next
 * chunk may go to any process (the parts are recorded with the upload's events). The hashes are taken as the chunks
 * stream through (./runningUploadHashes.ts).
 */

/** The store of an upload's bytes, when it takes chunks itself. */
async function multipartStoreOf(services: Services, assetstoreId: string): Promise<MultipartBlobStore | null> {
  const adapter = await services.blobs.adapterOf(assetstoreId);
  return takesMultipartUploads(adapter) ? adapter : null;
}

/** Starts the store's multipart upload for a new upload into `assetstoreId`, when that store takes chunks itself. */
export async function beginStoreUpload(services: Services, assetstoreId: string): Promise<StoreUpload | undefined> {
  const store = await multipartStoreOf(services, assetstoreId);
  return store ? store.beginUpload() : undefined;
}

/**
 * Streams one chunk to the store as the upload's next part (Girder's minimum chunk size applies to every chunk but
 * the last). Resolves with what the chunk event records.
 */
export async function sendChunkToStore(
  services: Services,
  state: UploadState,
  started: UploadStartedData & { storeUpload: StoreUpload },
  offset: number,
  body: { stream: Readable; length: number | undefined },
): Promise<{ offset: number; length: number; part: UploadedPart }> {
  const store = await multipartStoreOf(services, started.assetstoreId ?? DEFAULT_ASSETSTORE_ID);
  if (!store) throw new ValidationError('The assetstore of this upload no longer takes chunks.');
  if (body.length === undefined)
    throw new ValidationError('A chunk of an upload to this assetstore needs a Content-Length.');
  const last = state.received + body.length === started.size;
  if (!last && body.length < store.minimumPartBytes)
    throw new ValidationError('Chunk is smaller than the minimum size.');
  const length = body.length;
  return hashingChunk(services, state.uploadId, offset, async (hasher) => {
    const part = await store.uploadPart(started.storeUpload, state.parts.length + 1, body.stream, length, hasher);
    return { offset, length, part };
  });
}

/** Completes the store's multipart upload: the blob (held), with the hashes taken here when they cover every byte. */
export async function finishStoreUpload(
  services: Services,
  started: UploadStartedData & { storeUpload: StoreUpload },
  parts: UploadedPart[],
  uploadId: string,
): Promise<StoredBlob> {
  const assetstoreId = started.assetstoreId ?? DEFAULT_ASSETSTORE_ID;
  const store = await multipartStoreOf(services, assetstoreId);
  if (!store) throw new ValidationError('The assetstore of this upload no longer takes chunks.');
  const hashes = await finishedUploadHashes(services, uploadId, started.size);
  return services.blobs.adopt(assetstoreId, await store.finishUpload(started.storeUpload, parts, hashes));
}

/** Drops the store's multipart upload of a cancelled upload (nothing to drop for a partial file). */
export async function abortStoreUpload(services: Services, started: UploadStartedData | null): Promise<void> {
  forgetUploadHashes(services, started?.uploadId ?? '');
  if (!started?.storeUpload) return;
  const store = await multipartStoreOf(services, started.assetstoreId ?? DEFAULT_ASSETSTORE_ID).catch(() => null);
  await store?.abortUpload(started.storeUpload);
}
