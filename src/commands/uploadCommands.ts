import { Readable } from 'node:stream';
import type { FileDoc } from '../ports/readModel';
import type { RequestMeta } from './requestMeta';
import { reclaimBlobs } from './blobReclaim';
import { KeyedLock } from './keyedLock';
import { admitUpload } from './quotaCommands';
import {
  abortStoreUpload,
  beginStoreUpload,
  directOffer,
  finishStoreUpload,
  sendChunkToStore,
} from './storeUploadChunks';
import { finishedUploadHashes, hashingChunk } from './runningUploadHashes';
import {
  checkSize,
  checkUploadName,
  commitNewContents,
  commitNewFile,
  limited,
  openUpload,
  tooMany,
  withBlob,
  withStoredBlob,
  type FileBytes,
  type NewFileSpec,
  type UploadParent,
} from './fileCommands';
import {
  checkChunk,
  remainingBytes,
  uploadDecider,
  uploadStateFor,
  uploadStream,
  type UploadStartedData,
  type UploadState,
} from '../domain/upload';
import { RestError, ValidationError } from '../domain/errors';
import { newId } from '../domain/ids';
import { DEFAULT_ASSETSTORE_ID } from '../domain/assetstoreBlobRef';
import { girderTime } from '../domain/time';
import type { UploadDeps } from './writeDeps';
import { uploadNow } from '../queries/uploadQueries';

/**
 * The upload lifecycle (Girder's upload routes): a new file or new contents sent in one request, or an upload
 * started, fed chunk by chunk into the partial upload store and finished by its last chunk, or cancelled. The file
 * records themselves are made by src/commands/fileCommands.ts once the bytes are stored.
 */

/** A chunk written to the partial upload file: where it went and how long it is. */
interface ChunkReceived {
  offset: number;
  length: number;
  part?: undefined;
}

/** Chunks of one upload are handled one at a time in this process (they write the same partial file). */
const uploadLocks = new KeyedLock();

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
  deps: UploadDeps,
  input: StartUploadInput,
  body: { stream: Readable; length: number | undefined } | undefined,
  meta: RequestMeta,
): Promise<UploadOutcome> {
  checkSize(input.size);
  checkUploadName(input.parent, input.name);
  const parentDoc = input.parent.type === 'folder' ? input.parent.folder : input.parent.item;
  const root = { type: parentDoc.baseParentType, id: parentDoc.baseParentId };
  const assetstoreId = await admitUpload(deps, root, input.size);
  const spec = { parent: input.parent, name: input.name, mimeType: input.mimeType, userId: input.userId };
  if (input.size === 0) {
    const fileId = await withStoredBlob(
      deps,
      Readable.from([]),
      (blob) => commitNewFile(deps, { ...spec, blob }, meta),
      assetstoreId,
    );
    return { kind: 'file', fileId };
  }
  if (body?.length !== undefined && body.length > input.size) throw new ValidationError('Received too many bytes.');
  if (body?.length === input.size) {
    const fileId = await withStoredBlob(
      deps,
      limited(body.stream, input.size),
      (blob) => {
        if (blob.size !== input.size)
          throw new RestError(`Server has received ${blob.size} bytes, but the file should be ${input.size} bytes.`);
        return commitNewFile(deps, { ...spec, blob }, meta);
      },
      assetstoreId,
    );
    return { kind: 'file', fileId };
  }
  const uploadId = await recordUploadStart(
    deps,
    assetstoreId,
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
  if (body) return receiveChunk(deps, { uploadId, offset: 0, userId: input.userId }, body, meta);
  return { kind: 'upload', state: await uploadNow(deps, uploadId) };
}

async function recordUploadStart(
  deps: UploadDeps,
  assetstoreId: string,
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
  const storeUpload = await beginStoreUpload(deps, assetstoreId);
  const direct = await directOffer(deps, assetstoreId, uploadId, data.size);
  const startedData = {
    uploadId,
    created: girderTime(),
    assetstoreId,
    ...(storeUpload ? { storeUpload } : {}),
    ...(direct ? { direct } : {}),
    ...data,
  };
  try {
    await deps.commands.handleGroup(meta, async (attempt) => {
      const upload = attempt.create(uploadStream(uploadId), uploadDecider, uploadStateFor(uploadId));
      upload.decide({ type: 'StartUpload', data: startedData });
      return { append: [upload], result: undefined };
    });
  } catch (error) {
    await abortStoreUpload(deps, startedData).catch(() => undefined);
    throw error;
  }
  return uploadId;
}

/**
 * `PUT /file/:id/contents?size=`: an upload whose completion replaces the file's bytes (size 0: replaced at once).
 */
export async function startContentsUpload(
  deps: UploadDeps,
  input: { file: FileDoc; size: number; reference?: string; userId: string },
  meta: RequestMeta,
): Promise<UploadOutcome> {
  checkSize(input.size);
  const item = await deps.readModel.items.get(input.file.itemId);
  if (!item) throw new RestError(`Invalid item id (${input.file.itemId}).`);
  const root = { type: item.baseParentType, id: item.baseParentId };
  const assetstoreId = await admitUpload(deps, root, input.size, input.file.size);
  if (input.size === 0) {
    const previous = await withStoredBlob(
      deps,
      Readable.from([]),
      (blob) => commitNewContents(deps, input.file._id, input.userId, blob, undefined, meta),
      assetstoreId,
    );
    await reclaimBlobs(deps, [previous]);
    return { kind: 'file', fileId: input.file._id };
  }
  const uploadId = await recordUploadStart(
    deps,
    assetstoreId,
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
  return { kind: 'upload', state: await uploadNow(deps, uploadId) };
}

/** The parent of a new file named by an upload record, as it is now. */
async function uploadParent(deps: UploadDeps, started: UploadStartedData): Promise<UploadParent> {
  // A new file's upload names both (initUpload); a replacement's names neither and never comes here.
  const { parentType, parentId = '' } = started;
  if (parentType === 'folder') {
    const folder = await deps.readModel.folders.get(parentId);
    if (!folder) throw new ValidationError(`No such folder: ${parentId}`, 'id');
    return { type: 'folder', folder };
  }
  const item = await deps.readModel.items.get(parentId);
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
  deps: UploadDeps,
  input: { uploadId: string; offset: number; userId: string },
  body: { stream: Readable; length: number | undefined },
  meta: RequestMeta,
): Promise<UploadOutcome> {
  return uploadLocks.run(input.uploadId, async () => {
    const state = await uploadNow(deps, input.uploadId);
    const started = checkChunk(state, input.userId, input.offset);
    if (body.length !== undefined && body.length > remainingBytes(state))
      throw new ValidationError('Received too many bytes.');
    const partial = deps.partialUploads;
    const { storeUpload } = started;
    const lastChunk = storeUpload
      ? await sendChunkToStore(deps, state, { ...started, storeUpload }, input.offset, body)
      : await hashingChunk(deps, input.uploadId, input.offset, async (hasher): Promise<ChunkReceived> => ({
          offset: input.offset,
          length: await partial
            .write(input.uploadId, input.offset, body.stream, remainingBytes(state), hasher)
            .catch(tooMany),
        }));
    const { length } = lastChunk;
    if (state.received + length < started.size) {
      await deps.commands.handleGroup(meta, async (attempt) => {
        const upload = await openUpload(attempt, input.uploadId);
        upload.decide({ type: 'ReceiveChunk', data: { userId: input.userId, ...lastChunk, now: girderTime() } });
        return { append: [upload], result: undefined };
      });
      return { kind: 'upload', state: await uploadNow(deps, input.uploadId) };
    }
    const store = started.assetstoreId ?? DEFAULT_ASSETSTORE_ID;
    // The bytes: the store's multipart upload completed, or the partial file (hashed as its chunks came in) linked
    // into the store without a second pass over its bytes.
    const storing = async () =>
      storeUpload
        ? finishStoreUpload(
            deps,
            { ...started, storeUpload },
            lastChunk.part ? [...state.parts, lastChunk.part] : state.parts,
            input.uploadId,
          )
        : deps.blobs.putFileInto(
            store,
            partial.pathOf(input.uploadId),
            await finishedUploadHashes(deps, input.uploadId, started.size),
          );
    const fileId = await finishUpload(
      deps,
      { uploadId: input.uploadId, userId: input.userId, started, lastChunk, storing },
      meta,
    );
    if (!storeUpload) await partial.remove(input.uploadId);
    return { kind: 'file', fileId };
  });
}

/**
 * The end of an upload whose bytes `storing` stores (and holds): the file is recorded (a new one, or the new contents
 * of the file the upload replaces) in the same append as the upload's completion (with its last chunk, if any).
 * When that fails for good (the parent is gone), the upload is cancelled and its bytes removed. Resolves with the
 * file's id.
 */
export async function finishUpload(
  deps: UploadDeps,
  input: {
    uploadId: string;
    userId: string;
    started: UploadStartedData;
    lastChunk: NonNullable<NewFileSpec['upload']>['lastChunk'];
    storing: () => Promise<FileBytes>;
  },
  meta: RequestMeta,
): Promise<string> {
  const { started, storing, userId } = input;
  const upload = { uploadId: input.uploadId, lastChunk: input.lastChunk };
  try {
    const replacing = started.fileId;
    if (replacing !== undefined) {
      const previous = await withBlob(deps, storing, (blob) =>
        commitNewContents(deps, replacing, userId, blob, upload, meta),
      );
      await reclaimBlobs(deps, [previous]);
      return replacing;
    }
    const parent = await uploadParent(deps, started);
    return await withBlob(deps, storing, (blob) =>
      commitNewFile(deps, { parent, name: started.name, mimeType: started.mimeType, userId, blob, upload }, meta),
    );
  } catch (error) {
    if (error instanceof RestError || error instanceof ValidationError) await cancelQuietly(deps, input.uploadId, meta);
    throw error;
  }
}

async function cancelQuietly(deps: UploadDeps, uploadId: string, meta: RequestMeta): Promise<void> {
  try {
    await deps.commands.handleGroup(meta, async (attempt) => {
      const upload = await openUpload(attempt, uploadId);
      upload.decide({ type: 'AbandonUpload' });
      return { append: [upload], result: undefined };
    });
    await deps.partialUploads.remove(uploadId);
    const state = await uploadNow(deps, uploadId);
    await abortStoreUpload(deps, state.started, state.s3UploadId);
  } catch (error) {
    deps.logger.warn({ err: error, uploadId }, 'could not cancel a failed upload');
  }
}

/** `DELETE /file/upload/:id`: only its initiator (or a site admin) may cancel; the partial bytes are removed. */
export async function cancelUpload(
  deps: UploadDeps,
  input: { uploadId: string; userId: string; admin: boolean },
  meta: RequestMeta,
): Promise<void> {
  await uploadLocks.run(input.uploadId, async () => {
    const cancelled = await deps.commands.handleGroup(meta, async (attempt) => {
      const upload = await openUpload(attempt, input.uploadId);
      const record = upload.state;
      upload.decide({ type: 'CancelUpload', data: { userId: input.userId, admin: input.admin } });
      return { append: [upload], result: record };
    });
    await deps.partialUploads.remove(input.uploadId);
    await abortStoreUpload(deps, cancelled.started, cancelled.s3UploadId);
  });
}
