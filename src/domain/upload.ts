import { z } from 'zod';
import { type Decider, type DomainEvent, unknownEvent } from './decider';
import { AccessDeniedError, RestError, ValidationError } from './errors';

/**
 * Upload sessions are event-sourced on `upload-<id>` rather than kept in a side table: the session is shared state
 * that every API process must see (scaled out, chunks of one upload may reach different processes), the stream's
 * expected revision serialises chunks (two chunks sent at the same offset cannot both be accepted), and the log says
 * who uploaded what, when. The bytes themselves never enter the log: a session's partial bytes live in
 * DATA_DIR/uploads/<uploadId> and the finished bytes in the BlobStore. Finishing appends UploadCompleted in the same
 * atomic write as the file's own events, so a file exists exactly when its upload completed.
 */
export const uploadStream = (id: string): string => `upload-${id}`;

const UploadStartedSchema = z.object({
  uploadId: z.string(),
  userId: z.string(),
  name: z.string(),
  size: z.number().int().nonnegative(),
  mimeType: z.string(),
  created: z.string(),
  /** A new file: where it goes (a folder: an item named after the file is created there). */
  parentType: z.enum(['folder', 'item']).optional(),
  parentId: z.string().optional(),
  /** Replacing an existing file's contents. */
  fileId: z.string().optional(),
  reference: z.string().optional(),
  /** The assetstore the bytes go to (the current one when the upload started); absent: the default store. */
  assetstoreId: z.string().optional(),
  /** The multipart upload in the assetstore that takes the chunks as parts (S3); absent: a partial file. */
  storeUpload: z.object({ key: z.string(), uploadId: z.string() }).optional(),
  /**
   * Offered the direct path (Girder's `behavior: "s3"`): the client may send the bytes straight into the store's
   * object `key` (in one PUT, or as a multipart upload when `chunked`) and finish with `POST /file/completion`.
   */
  direct: z.object({ key: z.string(), chunked: z.boolean() }).optional(),
});

/** The client started the multipart upload of a direct upload (its id, as S3 gave it, came with a part's signing). */
const UploadDirectMultipartStartedSchema = z.object({ uploadId: z.string(), s3UploadId: z.string() });

/** `length` bytes arrived at `offset` (they are durable in the partial file). */
const UploadChunkReceivedSchema = z.object({
  uploadId: z.string(),
  offset: z.number().int().nonnegative(),
  length: z.number().int().nonnegative(),
  updated: z.string(),
  /** The part of the store's multipart upload that holds the chunk (with `storeUpload`). */
  part: z.object({ number: z.number().int().positive(), etag: z.string() }).optional(),
});

const UploadCompletedSchema = z.object({
  uploadId: z.string(),
  fileId: z.string(),
  itemId: z.string(),
  blobId: z.string(),
});
const UploadCancelledSchema = z.object({ uploadId: z.string() });

export const uploadEventSchemas = {
  UploadStarted: UploadStartedSchema,
  UploadChunkReceived: UploadChunkReceivedSchema,
  UploadDirectMultipartStarted: UploadDirectMultipartStartedSchema,
  UploadCompleted: UploadCompletedSchema,
  UploadCancelled: UploadCancelledSchema,
} as const;

export type UploadStartedData = z.infer<typeof UploadStartedSchema>;
export type UploadEvent =
  | DomainEvent<'UploadStarted', UploadStartedData>
  | DomainEvent<'UploadChunkReceived', z.infer<typeof UploadChunkReceivedSchema>>
  | DomainEvent<'UploadDirectMultipartStarted', z.infer<typeof UploadDirectMultipartStartedSchema>>
  | DomainEvent<'UploadCompleted', z.infer<typeof UploadCompletedSchema>>
  | DomainEvent<'UploadCancelled', z.infer<typeof UploadCancelledSchema>>;

export interface UploadState {
  status: 'none' | 'active' | 'completed' | 'cancelled';
  uploadId: string;
  started: UploadStartedData | null;
  received: number;
  updated: string;
  /** The parts of the store's multipart upload so far, in order. */
  parts: { number: number; etag: string }[];
  /** The client's own multipart upload of a direct upload, once it said which. */
  s3UploadId?: string;
}

const initialState = (): UploadState => ({
  status: 'none',
  uploadId: '',
  started: null,
  received: 0,
  updated: '',
  parts: [],
});
export const uploadStateFor = (uploadId: string): UploadState => ({ ...initialState(), uploadId });

function evolve(state: UploadState, event: UploadEvent): UploadState {
  switch (event.type) {
    case 'UploadStarted':
      return {
        status: 'active',
        uploadId: event.data.uploadId,
        started: event.data,
        received: 0,
        updated: event.data.created,
        parts: [],
      };
    case 'UploadChunkReceived':
      return {
        ...state,
        received: event.data.offset + event.data.length,
        updated: event.data.updated,
        parts: event.data.part ? [...state.parts, event.data.part] : state.parts,
      };
    case 'UploadDirectMultipartStarted':
      return { ...state, s3UploadId: event.data.s3UploadId };
    case 'UploadCompleted':
      return { ...state, status: 'completed' };
    case 'UploadCancelled':
      return { ...state, status: 'cancelled' };
    default:
      return unknownEvent(event, state);
  }
}

export type UploadCommand =
  | { type: 'StartUpload'; data: UploadStartedData }
  | {
      type: 'ReceiveChunk';
      data: { userId: string; offset: number; length: number; now: string; part?: { number: number; etag: string } };
    }
  | { type: 'RecordDirectMultipart'; data: { userId: string; s3UploadId: string } }
  | { type: 'CompleteUpload'; data: { fileId: string; itemId: string; blobId: string } }
  | { type: 'CancelUpload'; data: { userId: string; admin: boolean } }
  /** The service gives up an upload whose finishing failed for good (its parent is gone): nothing when not active. */
  | { type: 'AbandonUpload' };

/** A finished or cancelled upload is gone, as Girder deletes its upload document. */
function requireActive(state: UploadState): UploadStartedData {
  if (state.status !== 'active' || !state.started) throw new RestError(`Invalid upload id (${state.uploadId}).`);
  return state.started;
}

/**
 * Girder's readChunk checks, in its order: the upload exists, the caller initiated it, the offset is what the server
 * has received. Run before any byte of the chunk is read, and again (by `decide`) when recording it.
 */
export function checkChunk(state: UploadState, userId: string, offset: number): UploadStartedData {
  const started = requireActive(state);
  if (started.userId !== userId) throw new AccessDeniedError('You did not initiate this upload.');
  if (state.received !== offset)
    throw new RestError(`Server has received ${state.received} bytes, but client sent offset ${offset}.`);
  return started;
}

/** Bytes the upload may still take. */
export const remainingBytes = (state: UploadState): number => (state.started ? state.started.size - state.received : 0);

function decide(command: UploadCommand, state: UploadState): UploadEvent[] {
  switch (command.type) {
    case 'StartUpload': {
      if (state.status !== 'none') throw new RestError(`Upload ${command.data.uploadId} already exists.`, 409);
      if (command.data.size < 0) throw new ValidationError('File size must not be negative.');
      return [{ type: 'UploadStarted', data: command.data }];
    }
    case 'ReceiveChunk': {
      const d = command.data;
      const started = checkChunk(state, d.userId, d.offset);
      if (state.received + d.length > started.size) throw new ValidationError('Received too many bytes.');
      return [
        {
          type: 'UploadChunkReceived',
          data: {
            uploadId: state.uploadId,
            offset: d.offset,
            length: d.length,
            updated: d.now,
            ...(d.part ? { part: d.part } : {}),
          },
        },
      ];
    }
    case 'RecordDirectMultipart': {
      const started = checkChunk(state, command.data.userId, 0);
      if (!started.direct?.chunked) throw new ValidationError('This upload is not a direct multipart upload.');
      if (state.s3UploadId === command.data.s3UploadId) return [];
      return [
        {
          type: 'UploadDirectMultipartStarted',
          data: { uploadId: state.uploadId, s3UploadId: command.data.s3UploadId },
        },
      ];
    }
    case 'CompleteUpload': {
      const started = requireActive(state);
      // A direct upload's bytes went to the store without passing here: none were received.
      if (state.received !== started.size && !(started.direct && state.received === 0))
        throw new RestError(`Upload ${state.uploadId} is not complete.`);
      return [{ type: 'UploadCompleted', data: { uploadId: state.uploadId, ...command.data } }];
    }
    case 'CancelUpload': {
      const started = requireActive(state);
      if (started.userId !== command.data.userId && !command.data.admin)
        throw new AccessDeniedError('You did not initiate this upload.');
      return [{ type: 'UploadCancelled', data: { uploadId: state.uploadId } }];
    }
    case 'AbandonUpload':
      return state.status === 'active' ? [{ type: 'UploadCancelled', data: { uploadId: state.uploadId } }] : [];
  }
}

export const uploadDecider: Decider<UploadState, UploadCommand, UploadEvent> = {
  initialState,
  evolve,
  decide,
  eventSchemas: uploadEventSchemas,
};
