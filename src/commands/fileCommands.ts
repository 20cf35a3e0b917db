import { Readable, Transform, pipeline } from 'node:stream';
import type { Services } from '../services';
import type { StreamAppend } from '../ports/eventStore';
import type { FileDoc, FolderDoc, ItemDoc } from '../ports/readModel';
import type { RequestMeta } from './requestMeta';
import { toNewEvents } from './commandRunner';
import { reclaimBlobs } from './blobReclaim';
import { quotaChargeAppend } from './quotaCommands';
import { loadItemStream, newItemAppends } from './itemCommands';
import { decideOn } from '../domain/decider';
import { checkItemName, extensionsOf, itemDecider, itemStream, type FileRecord } from '../domain/item';
import { uploadDecider, uploadStateFor, uploadStream, type UploadEvent } from '../domain/upload';
import { RestError, ValidationError } from '../domain/errors';
import { newId } from '../domain/ids';
import { ownValue } from '../domain/ownMap';
import { girderTime } from '../domain/time';
import { TooManyBytesError, type StoredBlob } from '../ports/blobStore';
import { ProjectionLagError } from '../projections/projector';

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

export async function loadUpload(services: Services, uploadId: string) {
  const loaded = await services.commands.load(uploadStream(uploadId), uploadDecider);
  return { ...loaded, state: loaded.exists ? loaded.state : uploadStateFor(uploadId) };
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
  services: Services,
  source: Readable,
  commit: (blob: StoredBlob) => Promise<T>,
  assetstoreId?: string,
): Promise<T> {
  // Bytes go to the store their upload started in, or (sent in one request) to the current one.
  return withBlob(
    services,
    () => (assetstoreId === undefined ? services.blobs.put(source) : services.blobs.putInto(assetstoreId, source)),
    commit,
  );
}

/** {@link withStoredBlob} for a blob that `store` stores and holds (a completed multipart upload, for one). */
export async function withBlob<T, B extends FileBytes>(
  services: Services,
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
    services.blobs.release(blob.blobId);
    if (outcome === 'failed') await reclaimBlobs(services, [blob.blobId]);
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

/** The append that completes an upload: the last chunk (if any) and the completion, decided on the current stream. */
async function completionAppend(
  services: Services,
  upload: NonNullable<NewFileSpec['upload']>,
  userId: string,
  fileId: string,
  itemId: string,
  blobId: string,
  meta: RequestMeta,
): Promise<StreamAppend> {
  const loaded = await loadUpload(services, upload.uploadId);
  let state = loaded.state;
  const events: UploadEvent[] = [];
  if (upload.lastChunk) {
    const chunk = decideOn(uploadDecider, state, {
      type: 'ReceiveChunk',
      data: { userId, ...upload.lastChunk, now: girderTime() },
    });
    events.push(...chunk.events);
    state = chunk.state;
  }
  events.push(...decideOn(uploadDecider, state, { type: 'CompleteUpload', data: { fileId, itemId, blobId } }).events);
  return { streamId: uploadStream(upload.uploadId), expectedState: loaded.expected, events: toNewEvents(events, meta) };
}

/** Records a new file (and its item, for a folder parent) for a stored blob. Resolves with the file id. */
export async function commitNewFile(services: Services, spec: NewFileSpec, meta: RequestMeta): Promise<string> {
  return services.commands.run(async () => {
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
    let appends: StreamAppend[];
    let itemId: string;
    if (spec.parent.type === 'folder') {
      const folderId = spec.parent.folder._id;
      if (!(await services.readModel.folders.get(folderId)))
        throw new ValidationError(`No such folder: ${folderId}`, 'id');
      itemId = newId();
      ({ appends } = await newItemAppends(
        services,
        { itemId, folderId, name: spec.name, description: '', creatorId: spec.userId, created: now },
        meta,
        () => [{ type: 'AddFile', data: { file } }],
      ));
    } else {
      itemId = spec.parent.item._id;
      const loaded = await loadItemStream(services, itemId);
      const { events } = decideOn(itemDecider, loaded.state, { type: 'AddFile', data: { file } });
      appends = [{ streamId: itemStream(itemId), expectedState: loaded.expected, events: toNewEvents(events, meta) }];
    }
    if (spec.upload)
      appends.push(await completionAppend(services, spec.upload, spec.userId, fileId, itemId, spec.blob.blobId, meta));
    const parentDoc = spec.parent.type === 'folder' ? spec.parent.folder : spec.parent.item;
    const charge = await quotaChargeAppend(
      services,
      { type: parentDoc.baseParentType, id: parentDoc.baseParentId },
      { fileId, size: spec.blob.size, previous: 0 },
      meta,
    );
    if (charge) appends.push(charge);
    return { appends, result: fileId };
  });
}

/** Replaces a file's bytes with a stored blob; resolves with the blob the file no longer uses. */
export async function commitNewContents(
  services: Services,
  fileId: string,
  userId: string,
  blob: FileBytes,
  upload: NewFileSpec['upload'],
  meta: RequestMeta,
): Promise<string> {
  const file = await services.readModel.files.get(fileId);
  if (!file) throw new RestError(`Invalid file id (${fileId}).`);
  return services.commands.run(async () => {
    const loaded = await loadItemStream(services, file.itemId);
    const previous = ownValue(loaded.state.files, fileId)?.blobId ?? '';
    const { events } = decideOn(itemDecider, loaded.state, {
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
    const appends: StreamAppend[] = [
      { streamId: itemStream(file.itemId), expectedState: loaded.expected, events: toNewEvents(events, meta) },
    ];
    if (upload) appends.push(await completionAppend(services, upload, userId, fileId, file.itemId, blob.blobId, meta));
    const item = await services.readModel.items.get(file.itemId);
    if (item) {
      const charge = await quotaChargeAppend(
        services,
        { type: item.baseParentType, id: item.baseParentId },
        { fileId, size: blob.size, previous: ownValue(loaded.state.files, fileId)?.size ?? 0 },
        meta,
      );
      if (charge) appends.push(charge);
    }
    return { appends, result: previous };
  });
}

/** `DELETE /file/:id`: the file goes (its item's, folder's and root's sizes shrink) and its blob if unreferenced. */
export async function deleteFile(services: Services, file: FileDoc, meta: RequestMeta): Promise<void> {
  const blobId = await services.commands.run(async () => {
    const loaded = await loadItemStream(services, file.itemId);
    const { events } = decideOn(itemDecider, loaded.state, { type: 'DeleteFile', data: { fileId: file._id } });
    return {
      appends: [
        { streamId: itemStream(file.itemId), expectedState: loaded.expected, events: toNewEvents(events, meta) },
      ],
      // DeleteFile refused above if the item has no such file.
      result: ownValue(loaded.state.files, file._id)?.blobId ?? '',
    };
  });
  await reclaimBlobs(services, [blobId]);
}
