import { Readable, Transform, pipeline } from 'node:stream';
import type { FileDoc, FolderDoc, ItemDoc } from '../ports/readModel';
import type { RequestMeta } from './requestMeta';
import type { AnyDecidedStream, CommandAttempt } from './streamHandle';
import { reclaimBlobs } from './blobReclaim';
import { quotaCharge } from './quotaCommands';
import { loadItemStream, newItemStreams } from './itemCommands';
import { checkItemName, extensionsOf, type FileRecord } from '../domain/item';
import { uploadDecider, uploadStateFor, uploadStream } from '../domain/upload';
import { RestError, ValidationError } from '../domain/errors';
import { newId } from '../domain/ids';
import { ownValue } from '../domain/ownMap';
import { girderTime } from '../domain/time';
import { TooManyBytesError, type StoredBlob } from '../ports/blobStore';
import { ProjectionLagError } from '../projections/projector';
import type { BlobDeps } from './writeDeps';

/**
 * File records of stored bytes (the upload lifecycle: src/commands/uploadCommands.ts). Bytes are streamed
 * (request → hash → disk), never buffered whole:
 *  - a body carrying the whole file goes straight into the BlobStore;
 *  - chunked uploads append to DATA_DIR/uploads/<uploadId> (see PartialUploads) and, on the last chunk, the
 *    partial file is streamed into the BlobStore.
 * A file record exists only once all its bytes are durable: the file's events (and the item's, for a folder parent)
 * are appended together with the upload's completion, after the blob is stored and while it is held. A failed
 * commit leaves no file record, and its blob is reclaimed when nothing references it.
 */

/** The bytes a file record names: a stored blob, or a direct upload's object (no `sha512`: the service never saw it). */
export type FileBytes = Omit<StoredBlob, 'sha512'> & { sha512?: string };

/** Where a new file goes. */
export type UploadParent = { type: 'folder'; folder: FolderDoc } | { type: 'item'; item: ItemDoc };

/** An upload's stream in a command's attempt (a read of its state is `uploadNow`, src/queries/uploadQueries.ts). */
export async function openUpload(attempt: CommandAttempt, uploadId: string) {
  const upload = await attempt.load(uploadStream(uploadId), uploadDecider);
  if (!upload.exists) upload.startFrom(uploadStateFor(uploadId));
  return upload;
}

/** The name checks of the finalisation, made before any byte is accepted (Girder runs them only at the end). */
export function checkUploadName(parent: UploadParent, name: string): void {
  if (parent.type === 'folder') checkItemName(name);
  else if (!name) throw new ValidationError('File name must not be empty.', 'name');
}

export function checkSize(size: number): void {
  if (size < 0) throw new ValidationError('File size must not be negative.');
}

/** `source` through a byte limit (TooManyBytesError past `max`); a failure of `source` fails the result too. */
export function limited(source: Readable, max: number): Readable {
  let seen = 0;
  const limiter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > max) callback(new TooManyBytesError());
      else callback(null, chunk);
    },
  });
  return pipeline(source, limiter, () => undefined);
}

export const tooMany = (error: unknown): never => {
  if (error instanceof TooManyBytesError) throw new ValidationError('Received too many bytes.');
  throw error;
};

/**
 * Stores bytes in the BlobStore and runs `commit` while the blob is held; reclaims the blob if the commit fails
 * before appending. When it was appended but not yet projected in time (ProjectionLagError) the file will reference
 * the blob: it is kept, and the sweep's grace period keeps it until the projection shows the reference.
 */
export async function withStoredBlob<T>(
  deps: BlobDeps,
  source: Readable,
  commit: (blob: StoredBlob) => Promise<T>,
  assetstoreId?: string,
): Promise<T> {
  // Bytes go to the store their upload started in, or (sent in one request) to the current one.
  return withBlob(
    deps,
    () => (assetstoreId === undefined ? deps.blobs.put(source) : deps.blobs.putInto(assetstoreId, source)),
    commit,
  );
}

/** {@link withStoredBlob} for a blob that `store` stores and holds (a completed multipart upload, for one). */
export async function withBlob<T, B extends FileBytes>(
  deps: BlobDeps,
  store: () => Promise<B>,
  commit: (blob: B) => Promise<T>,
): Promise<T> {
  const blob = await store().catch(tooMany);
  let outcome: 'committed' | 'failed' | 'maybe appended' = 'failed';
  try {
    const result = await commit(blob);
    outcome = 'committed';
    return result;
  } catch (error) {
    if (error instanceof ProjectionLagError) outcome = 'maybe appended';
    throw error;
  } finally {
    deps.blobs.release(blob.blobId);
    if (outcome === 'failed') await reclaimBlobs(deps, [blob.blobId]);
  }
}

export interface NewFileSpec {
  parent: UploadParent;
  name: string;
  mimeType: string;
  userId: string;
  blob: FileBytes;
  /** The upload this completes (its stream gets UploadChunkReceived and UploadCompleted in the same append). */
  upload?: {
    uploadId: string;
    lastChunk: { offset: number; length: number; part?: { number: number; etag: string } } | null;
  };
}

/** The upload's stream with its completion decided: the last chunk (if any) and the completion, on the current stream. */
async function completeUpload(
  attempt: CommandAttempt,
  upload: NonNullable<NewFileSpec['upload']>,
  userId: string,
  fileId: string,
  itemId: string,
  blobId: string,
): Promise<AnyDecidedStream> {
  const stream = await openUpload(attempt, upload.uploadId);
  if (upload.lastChunk)
    stream.decide({ type: 'ReceiveChunk', data: { userId, ...upload.lastChunk, now: girderTime() } });
  stream.decide({ type: 'CompleteUpload', data: { fileId, itemId, blobId } });
  return stream;
}

/** Records a new file (and its item, for a folder parent) for a stored blob. Resolves with the file id. */
export async function commitNewFile(deps: BlobDeps, spec: NewFileSpec, meta: RequestMeta): Promise<string> {
  return deps.commands.handleGroup(meta, async (attempt) => {
    const fileId = newId();
    const now = girderTime();
    const file: FileRecord = {
      fileId,
      name: spec.name,
      mimeType: spec.mimeType,
      size: spec.blob.size,
      blobId: spec.blob.blobId,
      ...(spec.blob.sha512 !== undefined ? { sha512: spec.blob.sha512 } : {}),
      creatorId: spec.userId,
      created: now,
      exts: extensionsOf(spec.name),
    };
    let append: AnyDecidedStream[];
    let itemId: string;
    if (spec.parent.type === 'folder') {
      const folderId = spec.parent.folder._id;
      if (!(await deps.readModel.folders.get(folderId))) throw new ValidationError(`No such folder: ${folderId}`, 'id');
      itemId = newId();
      ({ streams: append } = await newItemStreams(
        deps,
        attempt,
        { itemId, folderId, name: spec.name, description: '', creatorId: spec.userId, created: now },
        () => [{ type: 'AddFile', data: { file } }],
      ));
    } else {
      itemId = spec.parent.item._id;
      const item = await loadItemStream(deps, attempt, itemId);
      item.decide({ type: 'AddFile', data: { file } });
      append = [item];
    }
    if (spec.upload)
      append.push(await completeUpload(attempt, spec.upload, spec.userId, fileId, itemId, spec.blob.blobId));
    const parentDoc = spec.parent.type === 'folder' ? spec.parent.folder : spec.parent.item;
    const charge = await quotaCharge(
      deps,
      attempt,
      { type: parentDoc.baseParentType, id: parentDoc.baseParentId },
      { fileId, size: spec.blob.size, previous: 0 },
    );
    if (charge) append.push(charge);
    return { append, result: fileId };
  });
}

/** Replaces a file's bytes with a stored blob; resolves with the blob the file no longer uses. */
export async function commitNewContents(
  deps: BlobDeps,
  fileId: string,
  userId: string,
  blob: FileBytes,
  upload: NewFileSpec['upload'],
  meta: RequestMeta,
): Promise<string> {
  const file = await deps.readModel.files.get(fileId);
  if (!file) throw new RestError(`Invalid file id (${fileId}).`);
  return deps.commands.handleGroup(meta, async (attempt) => {
    const item = await loadItemStream(deps, attempt, file.itemId);
    const before = ownValue(item.state.files, fileId);
    item.decide({
      type: 'ReplaceFileContents',
      data: {
        fileId,
        blobId: blob.blobId,
        size: blob.size,
        sha512: blob.sha512,
        creatorId: userId,
        created: girderTime(),
      },
    });
    const append: AnyDecidedStream[] = [item];
    if (upload) append.push(await completeUpload(attempt, upload, userId, fileId, file.itemId, blob.blobId));
    const itemDoc = await deps.readModel.items.get(file.itemId);
    if (itemDoc) {
      const charge = await quotaCharge(
        deps,
        attempt,
        { type: itemDoc.baseParentType, id: itemDoc.baseParentId },
        { fileId, size: blob.size, previous: before?.size ?? 0 },
      );
      if (charge) append.push(charge);
    }
    return { append, result: before?.blobId ?? '' };
  });
}

/** `DELETE /file/:id`: the file goes (its item's, folder's and root's sizes shrink) and its blob if unreferenced. */
export async function deleteFile(deps: BlobDeps, file: FileDoc, meta: RequestMeta): Promise<void> {
  const blobId = await deps.commands.handleGroup(meta, async (attempt) => {
    const item = await loadItemStream(deps, attempt, file.itemId);
    // DeleteFile refuses an item without such a file.
    const { blobId: removed } = ownValue(item.state.files, file._id) ?? { blobId: '' };
    item.decide({ type: 'DeleteFile', data: { fileId: file._id } });
    return { append: [item], result: removed };
  });
  await reclaimBlobs(deps, [blobId]);
}
