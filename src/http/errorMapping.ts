import util from 'node:util';
import { AccessDeniedError, RestError, ValidationError } from '../domain/errors';
import { MaxAppendSizeExceededError } from '../ports/eventStore';
import { StoreBusyError } from '../ports/storeBusy';
import { ReadModelBusyError } from '../ports/readModelBusy';
import { storageFaultOf } from '../ports/storageFault';
import { ProjectionLagError, ProjectionStoppedError } from '../projections/projector';
import { TooManyRequestsError } from './tooManyRequests';
import { BodyStalledError, BodyTooLargeError } from './bodyReader';

/** A store that cannot be written needs an operator: clients are asked to come back later than for a busy one. */
const STORE_READ_ONLY_RETRY_SECONDS = 30;

export interface ErrorBody {
  message: string;
  type: 'rest' | 'access' | 'validation' | 'internal';
  field?: string;
  extra?: unknown;
  trace?: string[];
  uid?: string;
}

/**
 * The one place where errors become HTTP: rest → its status (400 default), validation → 400, access → 401 for an
 * anonymous caller and 403 for a logged-in one, a storage fault (src/ports/storageFault.ts) → 507 for a full disk
 * and 503 with `Retry-After` for a store that cannot be written, anything else → 500 `internal`: outside production the message is
 * `<Name>: <repr>` (Girder's `'%s: %s' % (type.__name__, repr(value))`) with the stack as `trace`.
 */
export function errorResponse(
  error: unknown,
  options: { loggedIn: boolean; production: boolean; requestId: string },
): { status: number; body: ErrorBody; retryAfterSeconds?: number } {
  if (error instanceof RestError) {
    return {
      status: error.status,
      body: { message: error.message, type: 'rest', ...(error.extra !== undefined ? { extra: error.extra } : {}) },
    };
  }
  if (error instanceof ValidationError) {
    return {
      status: 400,
      body: {
        message: error.message,
        type: 'validation',
        ...(error.field !== undefined ? { field: error.field } : {}),
      },
    };
  }
  if (error instanceof AccessDeniedError) {
    return {
      status: options.loggedIn ? 403 : 401,
      body: { message: error.message, type: 'access', ...(error.extra !== undefined ? { extra: error.extra } : {}) },
    };
  }
  if (error instanceof MaxAppendSizeExceededError) {
    return {
      status: 413,
      body: { message: 'The change is too large to record (over 1 MiB of event data).', type: 'rest' },
    };
  }
  if (error instanceof ProjectionStoppedError) {
    // Appended: recorded (nothing is lost), only not visible until the projection is fixed. Else nothing was changed.
    const message = error.appended
      ? `The change was recorded at event position ${error.position} but cannot be shown yet: ${error.message}.`
      : `The change was not made: the read models cannot be brought up to date (${error.message}).`;
    return { status: 503, body: { message, type: 'rest' } };
  }
  if (error instanceof ProjectionLagError) {
    return {
      status: 503,
      retryAfterSeconds: 1,
      body: { message: 'The service is catching up; retry shortly.', type: 'rest' },
    };
  }
  if (error instanceof StoreBusyError) {
    return {
      status: 503,
      retryAfterSeconds: 1,
      body: {
        message: `The change was not made: ${error.message} (a large copy or delete, say). Retry shortly.`,
        type: 'rest',
      },
    };
  }
  if (error instanceof ReadModelBusyError) {
    return {
      status: 503,
      retryAfterSeconds: 5,
      body: { message: `The request was not answered: ${error.message}. Retry shortly.`, type: 'rest' },
    };
  }
  if (error instanceof BodyTooLargeError) {
    return {
      status: 413,
      body: { message: `Request entity too large (the limit is ${error.limit} bytes).`, type: 'rest' },
    };
  }
  if (error instanceof TooManyRequestsError) {
    return {
      status: 429,
      ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
      body: { message: error.message, type: 'rest' },
    };
  }
  const fault = storageFaultOf(error);
  if (fault?.kind === 'full') {
    return {
      status: 507,
      body: { message: `The change was not made: the disk of the data store is full (${fault.code}).`, type: 'rest' },
    };
  }
  if (fault?.kind === 'readOnly') {
    return {
      status: 503,
      retryAfterSeconds: STORE_READ_ONLY_RETRY_SECONDS,
      body: {
        message: `The change was not made: the data store cannot be written (${fault.code}). Retry later.`,
        type: 'rest',
      },
    };
  }
  if (error instanceof BodyStalledError) {
    return { status: 408, body: { message: error.message, type: 'rest' } };
  }
  const err = error instanceof Error ? error : new Error(String(error));
  if (options.production) {
    return {
      status: 500,
      body: { message: 'An unexpected error occurred on the server.', type: 'internal', uid: options.requestId },
    };
  }
  return {
    status: 500,
    body: {
      message: `${err.name}: ${errorRepr(err)}`,
      type: 'internal',
      uid: options.requestId,
      trace: (err.stack ?? '')
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line.startsWith('at ')),
    },
  };
}

/** A representation of an error in the manner of Python's `repr(exception)`: `Error('boom')`. */
function errorRepr(error: Error): string {
  return `${error.name}(${error.message === '' ? '' : util.inspect(error.message)})`;
}
