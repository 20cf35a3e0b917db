import { Readable, Transform, pipeline } from 'node:stream';
import type { Services } from '../services';
import type { StreamAppend } from '../ports/eventStore';
import type { FileDoc, FolderDoc, ItemDoc } from '../ports/readModel';
import type { RequestMeta } from './requestMeta';
import { toNewEvents } from './commandRunner';
import { reclaimBlobs } from './blobReclaim';
import { loadItemStream, newItemAppends } from './itemCommands';
import { decideOn } from '../domain/decider';
import { checkItemName, extensionsOf, itemDecider, itemStream, type FileRecord } from '../domain/item';
import {
  checkChunk,
  remainingBytes,
  uploadDecider,
  uploadStateFor,
  uploadStream,
  type UploadEvent,
  type UploadStartedData,
  type UploadState,
} from '../domain/upload';
import { RestError, ValidationError } from '../domain/errors';
import { newId } from '../domain/ids';
import { DEFAULT_ASSETSTORE_ID } from '../domain/assetstoreBlobRef';
import { ownValue } from '../domain/ownMap';
import { girderTime } from '../domain/time';
import { TooManyBytesError, type StoredBlob } from '../ports/blobStore';
import { ProjectionLagError } from '../projections/projector';

/**
 * Uploads and file writes. Bytes are streamed (request → hash → disk), never buffered whole:
 *  - a body carrying the whole file goes straight into the BlobStore;
 *  - chunked uploads append to DATA_DIR/uploads/<uploadId> (see PartialUploads) and, on the last chunk, the
 *    partial file is streamed into the BlobStore.
 * A file record exists only once all its bytes are durable: the file's events (and the item's, for a folder parent)
 * are appended together with the upload's completion, after the blob is stored and while it is held. A failed
 * commit leaves no file record, and its blob is reclaimed when nothing references it.
 */

/** Where a new file goes. */
export type UploadParent = { type: 'folder'; folder: FolderDoc } | { type: 'item'; item: ItemDoc };

/** Chunks of one upload are handled one at a time in this process (they write the same partial file). */
class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();
  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let done!: () => void;
    const tail = new Promise<void>((resolve) => (done = resolve));
    this.tails.set(key, tail);
    await previous;
    try {
      return await work();
    } finally {
      done();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
const uploadLocks = new KeyedLock();

export async function loadUpload(services: Services, uploadId: string) {
  const loaded = await services.commands.load(uploadStream(uploadId), uploadDecider);
  return { ...loaded, state: loaded.exists ? loaded.state : uploadStateFor(uploadId) };
}

/** The name checks of the finalisation, made before any byte is accepted (Girder runs them only at the end). */
function checkUploadName(parent: UploadParent, name: string): void {
  if (parent.type === 'folder') checkItemName(name);
  else if (!name) throw new ValidationError('File name must not be empty.', 'name');
}

function checkSize(size: number): void {
  if (size < 0) throw new ValidationError('File size must not be negative.');
}

/** `source` through a byte limit (TooManyBytesError past `max`); a failure of `source` fails the result too. */
function limited(source: Readable, max: number): Readable {
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

const tooMany = (error: unknown): never => {
  if (error instanceof TooManyBytesError) throw new ValidationError('Received too many bytes.');
  throw error;
};

/**
 * Stores bytes in the BlobStore and runs `commit` while the blob is held; reclaims the blob if the commit fails
 * before appending. When it was appended but not yet projected in time (ProjectionLagError) the file will reference
 * the blob: it is kept, and the sweep's grace period keeps it until the projection shows the reference.
 */
async function withStoredBlob<T>(
  services: Services,
  source: Readable,
  commit: (blob: StoredBlob) => Promise<T>,
  assetstoreId?: string,
): Promise<T> {
  // Bytes go to the store their upload started in, or (sent in one request) to the current one.
  const stored = assetstoreId === undefined ? services.blobs.put(source) : services.blobs.putInto(assetstoreId, source);
  const blob = await stored.catch(tooMany);
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

interface NewFileSpec {
  parent: UploadParent;
  name: string;
  mimeType: string;
  userId: string;
  blob: StoredBlob;
  /** The upload this completes (its stream gets UploadChunkReceived and UploadCompleted in the same append). */
  upload?: { uploadId: string; lastChunk: { offset: number; length: number } | null };
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
async function commitNewFile(services: Services, spec: NewFileSpec, meta: RequestMeta): Promise<string> {
  return services.commands.run(async () => {
    const fileId = newId();
    const now = girderTime();
    const file: FileRecord = {
      fileId,
      name: spec.name,
      mimeType: spec.mimeType,
      size: spec.blob.size,
      blobId: spec.blob.blobId,
      sha512: spec.blob.sha512,
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
    return { appends, result: fileId };
  });
}

/** Replaces a file's bytes with a stored blob; resolves with the blob the file no longer uses. */
async function commitNewContents(
  services: Services,
  fileId: string,
  userId: string,
  blob: StoredBlob,
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
    return { appends, result: previous };
  });
}

export interface StartUploadInput {
  parent: UploadParent;
  name: string;
  size: number;
  mimeType: string;
  reference?: string;
  userId: string;
}

/** What an upload request answers: the upload record while bytes are missing, else the finished file's id. */
export type UploadOutcome = { kind: 'upload'; state: UploadState } | { kind: 'file'; fileId: string };

/**
 * `POST /file`. A size-0 file is created at once. With `body` (a raw request body) of exactly `size` bytes the file is
 * created from it directly; a shorter body (or one of unknown length) becomes the first chunk of a new upload.
 * Otherwise a new upload is started and the client sends `POST /file/chunk`.
 */
export async function startUpload(
  services: Services,
  input: StartUploadInput,
  body: { stream: Readable; length: number | undefined } | undefined,
  meta: RequestMeta,
): Promise<UploadOutcome> {
  checkSize(input.size);
  checkUploadName(input.parent, input.name);
  const spec = { parent: input.parent, name: input.name, mimeType: input.mimeType, userId: input.userId };
  if (input.size === 0) {
    const fileId = await withStoredBlob(services, Readable.from([]), (blob) =>
      commitNewFile(services, { ...spec, blob }, meta),
    );
    return { kind: 'file', fileId };
  }
  if (body?.length !== undefined && body.length > input.size) throw new ValidationError('Received too many bytes.');
  if (body?.length === input.size) {
    const fileId = await withStoredBlob(services, limited(body.stream, input.size), (blob) => {
      if (blob.size !== input.size)
        throw new RestError(`Server has received ${blob.size} bytes, but the file should be ${input.size} bytes.`);
      return commitNewFile(services, { ...spec, blob }, meta);
    });
    return { kind: 'file', fileId };
  }
  const uploadId = await recordUploadStart(
    services,
    {
      ...(input.parent.type === 'folder'
        ? { parentType: 'folder', parentId: input.parent.folder._id }
        : { parentType: 'item', parentId: input.parent.item._id }),
      name: input.name,
      size: input.size,
      mimeType: input.mimeType,
      userId: input.userId,
      ...(input.reference !== undefined ? { reference: input.reference } : {}),
    },
    meta,
  );
  if (body) return receiveChunk(services, { uploadId, offset: 0, userId: input.userId }, body, meta);
  return { kind: 'upload', state: (await loadUpload(services, uploadId)).state };
}

async function recordUploadStart(
  services: Services,
  data: {
    parentType?: 'folder' | 'item';
    parentId?: string;
    fileId?: string;
    name: string;
    size: number;
    mimeType: string;
    userId: string;
    reference?: string;
  },
  meta: RequestMeta,
): Promise<string> {
  const uploadId = newId();
  const assetstoreId = await services.blobs.currentId();
  const { events } = decideOn(uploadDecider, uploadStateFor(uploadId), {
    type: 'StartUpload',
    data: { uploadId, created: girderTime(), assetstoreId, ...data },
  });
  await services.commands.run(async () => ({
    appends: [{ streamId: uploadStream(uploadId), expectedState: 'no_stream', events: toNewEvents(events, meta) }],
    result: undefined,
  }));
  return uploadId;
}

/**
 * `PUT /file/:id/contents?size=`: an upload whose completion replaces the file's bytes (size 0: replaced at once).
 */
export async function startContentsUpload(
  services: Services,
  input: { file: FileDoc; size: number; reference?: string; userId: string },
  meta: RequestMeta,
): Promise<UploadOutcome> {
  checkSize(input.size);
  if (input.size === 0) {
    const previous = await withStoredBlob(services, Readable.from([]), (blob) =>
      commitNewContents(services, input.file._id, input.userId, blob, undefined, meta),
    );
    await reclaimBlobs(services, [previous]);
    return { kind: 'file', fileId: input.file._id };
  }
  const uploadId = await recordUploadStart(
    services,
    {
      fileId: input.file._id,
      name: input.file.name,
      size: input.size,
      mimeType: input.file.mimeType,
      userId: input.userId,
      ...(input.reference !== undefined ? { reference: input.reference } : {}),
    },
    meta,
  );
  return { kind: 'upload', state: (await loadUpload(services, uploadId)).state };
}

/** The parent of a new file named by an upload record, as it is now. */
async function uploadParent(services: Services, started: UploadStartedData): Promise<UploadParent> {
  // A new file's upload names both (initUpload); a replacement's names neither and never comes here.
  const { parentType, parentId = '' } = started;
  if (parentType === 'folder') {
    const folder = await services.readModel.folders.get(parentId);
    if (!folder) throw new ValidationError(`No such folder: ${parentId}`, 'id');
    return { type: 'folder', folder };
  }
  const item = await services.readModel.items.get(parentId);
  if (!item) throw new ValidationError(`No such item: ${parentId}`, 'id');
  return { type: 'item', item };
}

/**
 * `POST /file/chunk`: Girder's checks (the upload exists, the caller initiated it, `offset` equals what was received,
 * the chunk does not overflow), then the bytes are streamed to the partial file and recorded. The last chunk
 * finishes the upload: the bytes move into the BlobStore and the file is recorded in the same append as the chunk.
 * When finishing fails for good (the parent is gone), the upload is cancelled and its bytes removed.
 */
export async function receiveChunk(
  services: Services,
  input: { uploadId: string; offset: number; userId: string },
  body: { stream: Readable; length: number | undefined },
  meta: RequestMeta,
): Promise<UploadOutcome> {
  return uploadLocks.run(input.uploadId, async () => {
    const { state } = await loadUpload(services, input.uploadId);
    const started = checkChunk(state, input.userId, input.offset);
    if (body.length !== undefined && body.length > remainingBytes(state))
      throw new ValidationError('Received too many bytes.');
    const partial = services.partialUploads;
    const length = await partial.write(input.uploadId, input.offset, body.stream, remainingBytes(state)).catch(tooMany);
    const lastChunk = { offset: input.offset, length };
    if (state.received + length < started.size) {
      await services.commands.run(async () => {
        const loaded = await loadUpload(services, input.uploadId);
        const { events } = decideOn(uploadDecider, loaded.state, {
          type: 'ReceiveChunk',
          data: { userId: input.userId, ...lastChunk, now: girderTime() },
        });
        return {
          appends: [
            {
              streamId: uploadStream(input.uploadId),
              expectedState: loaded.expected,
              events: toNewEvents(events, meta),
            },
          ],
          result: undefined,
        };
      });
      return { kind: 'upload', state: (await loadUpload(services, input.uploadId)).state };
    }
    const upload = { uploadId: input.uploadId, lastChunk };
    const store = started.assetstoreId ?? DEFAULT_ASSETSTORE_ID;
    try {
      let fileId: string;
      const replacing = started.fileId;
      if (replacing !== undefined) {
        const previous = await withStoredBlob(
          services,
          partial.read(input.uploadId),
          (blob) => commitNewContents(services, replacing, input.userId, blob, upload, meta),
          store,
        );
        await reclaimBlobs(services, [previous]);
        fileId = replacing;
      } else {
        const parent = await uploadParent(services, started);
        fileId = await withStoredBlob(
          services,
          partial.read(input.uploadId),
          (blob) =>
            commitNewFile(
              services,
              { parent, name: started.name, mimeType: started.mimeType, userId: input.userId, blob, upload },
              meta,
            ),
          store,
        );
      }
      await partial.remove(input.uploadId);
      return { kind: 'file', fileId };
    } catch (error) {
      if (error instanceof RestError || error instanceof ValidationError)
        await cancelQuietly(services, input.uploadId, meta);
      throw error;
    }
  });
}

async function cancelQuietly(services: Services, uploadId: string, meta: RequestMeta): Promise<void> {
  try {
    await services.commands.run(async () => {
      const loaded = await loadUpload(services, uploadId);
      if (loaded.state.status !== 'active') return { appends: [], result: undefined };
      return {
        appends: [
          {
            streamId: uploadStream(uploadId),
            expectedState: loaded.expected,
            events: toNewEvents([{ type: 'UploadCancelled', data: { uploadId } }], meta),
          },
        ],
        result: undefined,
      };
    });
    await services.partialUploads.remove(uploadId);
  } catch (error) {
    services.logger.warn({ err: error, uploadId }, 'could not cancel a failed upload');
  }
}

/** `DELETE /file/upload/:id`: only its initiator (or a site admin) may cancel; the partial bytes are removed. */
export async function cancelUpload(
  services: Services,
  input: { uploadId: string; userId: string; admin: boolean },
  meta: RequestMeta,
): Promise<void> {
  await uploadLocks.run(input.uploadId, async () => {
    await services.commands.run(async () => {
      const loaded = await loadUpload(services, input.uploadId);
      const { events } = decideOn(uploadDecider, loaded.state, {
        type: 'CancelUpload',
        data: { userId: input.userId, admin: input.admin },
      });
      return {
        appends: [
          { streamId: uploadStream(input.uploadId), expectedState: loaded.expected, events: toNewEvents(events, meta) },
        ],
        result: undefined,
      };
    });
    await services.partialUploads.remove(input.uploadId);
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
