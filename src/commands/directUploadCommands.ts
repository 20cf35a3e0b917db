import type { UploadDeps } from './writeDeps';
import type { RequestMeta } from './requestMeta';
import { openUpload } from './fileCommands';
import { abortStoreUpload } from './storeUploadChunks';
import { finishUpload, type UploadOutcome } from './uploadCommands';
import { takesDirectUploads, type ClientRequest, type DirectBlobStore } from '../ports/blobStore';
import { checkChunk, type UploadStartedData, type UploadState } from '../domain/upload';
import { AccessDeniedError, RestError, ValidationError } from '../domain/errors';
import { DEFAULT_ASSETSTORE_ID, blobRef } from '../domain/assetstoreBlobRef';
import { uploadNow } from '../queries/uploadQueries';

/**
 * Direct-to-S3 uploads (Girder's `s3` upload behaviour, which its web client follows): an upload into a store that
 * clients may reach (an S3 store with `redirect` on) is offered an object key; the client sends the bytes there with
 * presigned requests (in one PUT, or as a multipart upload whose parts it has signed through `POST /file/chunk` with
 * a `chunk` parameter) and finishes with `POST /file/completion`. Clients that send chunks through the service
 * (girder_client) ignore the offer, as they do with Girder.
 *
 * The file's bytes: an object sent in one PUT is there at completion, so it is read back once (its SHA-256 and
 * SHA-512) and becomes a blob like any other (content-addressed, shared with identical bytes). A multipart upload is
 * completed by the service at `POST /file/completion` from the parts the bucket holds (Girder 5's protocol, which the
 * web client served here follows; Girder 3's client completed it itself with `s3FinalizeRequest`); its bytes never
 * pass through the service, so the file references the object by its key and has no `sha512` until asked for
 * (src/domain/assetstoreBlobRef.ts `objectLocalId`).
 */

/** The store of a direct upload; a 400 when it no longer takes direct uploads (its `redirect` was turned off). */
async function directStoreOf(deps: Pick<UploadDeps, 'blobs'>, started: UploadStartedData): Promise<DirectBlobStore> {
  const store = await deps.blobs.adapterOf(started.assetstoreId ?? DEFAULT_ASSETSTORE_ID);
  if (!takesDirectUploads(store))
    throw new ValidationError('The assetstore of this upload no longer takes direct uploads.');
  return store;
}

/** The part of Girder's chunk parameter that a direct multipart upload sends to have a part signed. */
interface PartAsked {
  s3UploadId: string;
  partNumber: number;
  contentLength?: number;
}

function partAsked(chunk: string): PartAsked {
  let parsed: unknown;
  try {
    parsed = JSON.parse(chunk);
  } catch {
    throw new ValidationError('The chunk parameter must be a JSON object.', 'chunk');
  }
  const { s3UploadId, partNumber, contentLength } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof s3UploadId !== 'string' || !s3UploadId)
    throw new ValidationError('The chunk parameter needs an s3UploadId.', 'chunk');
  const number = Number(partNumber);
  if (!Number.isSafeInteger(number) || number < 1 || number > 10_000)
    throw new ValidationError('The chunk parameter needs a partNumber from 1 to 10000.', 'chunk');
  if (contentLength !== undefined && !Number.isSafeInteger(Number(contentLength)))
    throw new ValidationError('The contentLength of the chunk parameter must be an integer.', 'chunk');
  return {
    s3UploadId,
    partNumber: number,
    ...(contentLength !== undefined ? { contentLength: Number(contentLength) } : {}),
  };
}

/**
 * `POST /file/chunk` with `chunk` (Girder's `_clientUploadChunk`): signs the upload of one part of the client's
 * multipart upload and records which multipart upload that is. Resolves with the upload and the signed request.
 */
export async function signDirectPart(
  deps: UploadDeps,
  input: { uploadId: string; userId: string; offset: number; chunk: string },
  meta: RequestMeta,
): Promise<{ state: UploadState; request: ClientRequest; part: { s3UploadId: string; partNumber: number } }> {
  const state = await uploadNow(deps, input.uploadId);
  const started = checkChunk(state, input.userId, input.offset);
  const direct = started.direct;
  if (!direct?.chunked)
    throw new ValidationError('Only a direct multipart upload to an S3 assetstore takes the chunk parameter.', 'chunk');
  const asked = partAsked(input.chunk);
  const store = await directStoreOf(deps, started);
  const chunkLength = store.directChunkBytes;
  const length = Math.min(chunkLength, started.size - (asked.partNumber - 1) * chunkLength);
  // Girder's checks, the length first: a part past the end is refused as such, whatever length it announced.
  if (length <= 0) throw new ValidationError(`Invalid chunk length ${length}.`);
  if (asked.contentLength !== undefined && asked.contentLength !== length)
    throw new ValidationError(`Expected chunk size ${length}, but got ${asked.contentLength}.`);
  await deps.commands.handleGroup(meta, async (attempt) => {
    const upload = await openUpload(attempt, input.uploadId);
    upload.decide({ type: 'RecordDirectMultipart', data: { userId: input.userId, s3UploadId: asked.s3UploadId } });
    return { append: [upload], result: undefined };
  });
  const request = await store.signDirectPart(direct.key, { ...asked, length });
  return {
    state: await uploadNow(deps, input.uploadId),
    request,
    part: { s3UploadId: asked.s3UploadId, partNumber: asked.partNumber },
  };
}

/**
 * `POST /file/completion` (Girder's finalizeUpload): the file of a direct upload is recorded. An upload that was not
 * offered the direct path, or whose chunks went through the service, has nothing to finish this way (Girder's
 * message: it is not complete). Resolves with the file (and the upload's `reference`, for `data.process`).
 */
export async function completeDirectUpload(
  deps: UploadDeps,
  input: { uploadId: string; userId: string },
  meta: RequestMeta,
): Promise<{ outcome: UploadOutcome & { kind: 'file' }; reference?: string }> {
  const state = await uploadNow(deps, input.uploadId);
  const started = state.status === 'active' ? state.started : null;
  if (!started) throw new RestError(`Invalid upload id (${input.uploadId}).`);
  if (started.userId !== input.userId) throw new AccessDeniedError('You did not initiate this upload.');
  const direct = started.direct;
  if (!direct || state.received !== 0)
    throw new RestError(
      `Server has only received ${state.received} bytes, but the file should be ${started.size} bytes.`,
    );
  const store = await directStoreOf(deps, started);
  const assetstoreId = started.assetstoreId ?? DEFAULT_ASSETSTORE_ID;
  let storing: () => Promise<{ blobId: string; size: number; sha512?: string }>;
  if (direct.chunked) {
    const s3UploadId = state.s3UploadId;
    if (s3UploadId === undefined)
      throw new RestError(`Server has only received 0 bytes, but the file should be ${started.size} bytes.`);
    const ref = blobRef(assetstoreId, store.directObjectId(direct.key));
    // The service completes the client's multipart upload (Girder 5's protocol, which the web client served here
    // follows: it sends no completion of its own) before the file is recorded: parts that do not add up refuse the
    // completion and leave the upload open for the part still to come.
    await store.completeDirect(direct.key, s3UploadId, started.size);
    storing = async () => {
      await deps.blobs.hold(ref);
      return { blobId: ref, size: started.size };
    };
  } else {
    // Checked (and hashed) before the upload is finished: a PUT that has not arrived yet may still be sent.
    const blob = deps.blobs.adopt(assetstoreId, await store.adoptDirect(direct.key, started.size));
    storing = () => Promise.resolve(blob);
  }
  const fileId = await finishUpload(
    deps,
    { uploadId: input.uploadId, userId: input.userId, started, lastChunk: null, storing },
    meta,
  );
  // The multipart upload begun for chunks sent through the service was not used.
  await abortStoreUpload(deps, { ...started, direct: undefined });
  return {
    outcome: { kind: 'file', fileId },
    ...(started.reference !== undefined ? { reference: started.reference } : {}),
  };
}
