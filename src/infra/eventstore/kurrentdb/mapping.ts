import {
  ANY,
  NO_STREAM,
  STREAM_EXISTS,
  AppendRecordSizeExceededError as ClientAppendRecordSizeExceededError,
  MaxAppendSizeExceededError as ClientMaxAppendSizeExceededError,
  StreamNotFoundError as ClientStreamNotFoundError,
  TransactionMaxSizeExceededError as ClientTransactionMaxSizeExceededError,
  UnsupportedError as ClientUnsupportedError,
  WrongExpectedVersionError as ClientWrongExpectedVersionError,
  jsonEvent,
  type AllStreamResolvedEvent,
  type AppendStreamState,
  type EventData,
  type Position,
  type ResolvedEvent,
} from '@kurrent/kurrentdb-client';
import { randomUUID } from 'node:crypto';
import {
  MAX_APPEND_SIZE,
  MaxAppendSizeExceededError,
  StreamNotFoundError,
  WrongExpectedVersionError,
  type EventMetadata,
  type ExpectedState,
  type NewEvent,
  type RecordedEvent,
} from '../../../ports/eventStore';

/**
 * Pure translation between the EventStore port and `@kurrent/kurrentdb-client`: expected states, revisions and
 * positions, event payloads and metadata, and the client's errors. Kept apart from the adapter so that every rule
 * is unit-tested against the client's real types and error classes without a server.
 */

/** The largest unsigned 64-bit value: what servers report for "no position" on some reads. */
const NO_POSITION = 0xffffffffffffffffn;

/**
 * Revisions and positions as bigint, whatever the client handed over: bigint in current versions, plain numbers in
 * some older ones, decimal strings in the raw protobuf messages.
 */
export function toBigInt(value: bigint | number | string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`Expected an integer revision or position, got ${value}.`);
    return BigInt(value);
  }
  if (!/^-?\d+$/.test(value.trim())) throw new RangeError(`Expected an integer revision or position, got "${value}".`);
  return BigInt(value.trim());
}

// ---- expected state ---------------------------------------------------------------------------------------------

export function toClientStreamState(expected: ExpectedState): AppendStreamState {
  switch (expected) {
    case 'no_stream':
      return NO_STREAM;
    case 'any':
      return ANY;
    case 'exists':
      return STREAM_EXISTS;
    default:
      return expected;
  }
}

/**
 * The client's expected state back to the port's. Errors built from raw server metadata carry the protocol's
 * negative sentinels (-1 no stream, -2 any, -4 stream exists) instead of the named states.
 */
export function fromClientStreamState(state: AppendStreamState | number | bigint): ExpectedState {
  switch (state) {
    case NO_STREAM:
      return 'no_stream';
    case ANY:
      return 'any';
    case STREAM_EXISTS:
      return 'exists';
  }
  const revision = toBigInt(state);
  if (revision === -1n) return 'no_stream';
  if (revision === -2n) return 'any';
  if (revision === -4n) return 'exists';
  return revision;
}

/** The client's "current state" of a stream (a revision, or no stream) as the port reports it. */
export function fromClientCurrentState(state: bigint | number | string | undefined | null): bigint | 'no_stream' {
  if (state === undefined || state === null || state === NO_STREAM) return 'no_stream';
  const revision = toBigInt(state);
  return revision < 0n ? 'no_stream' : revision;
}

// ---- events ------------------------------------------------------------------------------------------------------

/** The nullable provenance fields: stored only when set, since KurrentDB metadata properties must be strings. */
const NULLABLE_METADATA_KEYS = ['userId', 'requestId', 'correlationId', 'causationId'] as const;

/**
 * Event metadata as stored: a JSON object of strings (what KurrentDB 25.1's multi-stream append accepts, and what
 * the single-stream append writes as the event's JSON metadata). Null fields are left out.
 */
export function encodeMetadata(metadata: EventMetadata): Record<string, string> {
  const out: [string, string][] = [];
  for (const [key, value] of Object.entries(metadata)) {
    if (value === null || value === undefined) continue;
    if (typeof value !== 'string') {
      throw new TypeError(`Event metadata "${key}" must be a string or null, got ${typeof value}.`);
    }
    out.push([key, value]);
  }
  return Object.fromEntries(out);
}

/**
 * Stored metadata back to {@link EventMetadata}; `created` stands in for `at` on events written by other tools.
 * Keys starting with `$` are the server's own (KurrentDB may add some), not ours, and are left out.
 */
export function decodeMetadata(raw: unknown, created?: Date): EventMetadata {
  const source: Record<string, unknown> =
    raw !== null && typeof raw === 'object' && !ArrayBuffer.isView(raw) ? (raw as Record<string, unknown>) : {};
  const metadata: Record<string, unknown> = Object.fromEntries(
    Object.entries(source).filter(([key]) => !key.startsWith('$')),
  );
  for (const key of NULLABLE_METADATA_KEYS) metadata[key] = typeof source[key] === 'string' ? source[key] : null;
  metadata.at = typeof source.at === 'string' ? source.at : (created ?? new Date(0)).toISOString();
  return metadata as unknown as EventMetadata;
}

export interface PreparedEvents {
  events: EventData[];
  /** Bytes of JSON data plus JSON metadata: what KurrentDB counts against its maximum append size. */
  size: number;
}

/** Port events to the client's JSON events, measuring them on the way. */
export function toEventData(events: NewEvent[]): PreparedEvents {
  let size = 0;
  const prepared = events.map((e) => {
    // `undefined` has no JSON form; store it as null, as the embedded store does.
    const data = e.data === undefined ? null : e.data;
    const metadata = encodeMetadata(e.metadata);
    size += Buffer.byteLength(JSON.stringify(data), 'utf8') + Buffer.byteLength(JSON.stringify(metadata), 'utf8');
    return jsonEvent({ id: e.id ?? randomUUID(), type: e.type, data: data as never, metadata });
  });
  return { events: prepared, size };
}

export function checkAppendSize(size: number): void {
  if (size > MAX_APPEND_SIZE) throw new MaxAppendSizeExceededError(size, MAX_APPEND_SIZE);
}

/** A position as the client wants it, from the port's commit position. */
export function toClientPosition(commit: bigint): Position {
  return { commit, prepare: commit };
}

/** The event's commit position: from the record, else from the resolved event; -1n when the server gave none. */
export function commitPositionOf(resolved: ResolvedEvent | AllStreamResolvedEvent): bigint {
  const candidates = [resolved.event?.position?.commit, resolved.commitPosition];
  for (const candidate of candidates) {
    if (candidate === undefined || candidate === null) continue;
    const value = toBigInt(candidate);
    if (value >= 0n && value !== NO_POSITION) return value;
  }
  return -1n;
}

/** A read or subscribed event as the port's {@link RecordedEvent}; undefined for an unresolved link. */
export function fromResolvedEvent(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | undefined {
  const event = resolved.event;
  if (!event) return undefined;
  return {
    id: event.id,
    streamId: event.streamId,
    revision: toBigInt(event.revision),
    position: commitPositionOf(resolved),
    type: event.type,
    data: event.data,
    metadata: decodeMetadata(event.metadata, event.created),
  };
}

// ---- errors -------------------------------------------------------------------------------------------------------

/** Thrown when the server lacks a feature the service needs (multi-stream append before KurrentDB 25.1). */
export class KurrentDbUnsupportedError extends Error {
  constructor(
    readonly feature: string,
    readonly minimumVersion: string,
  ) {
    super(`The KurrentDB server does not support ${feature}: it needs KurrentDB ${minimumVersion} or later.`);
    this.name = 'KurrentDbUnsupportedError';
  }
}

export interface ErrorContext {
  /** The expected state asked of each stream in the failed call. */
  expected?: ReadonlyMap<string, ExpectedState>;
  /** The stream a single-stream call was about. */
  streamId?: string;
  /** The measured size of the failed append. */
  size?: number;
}

/**
 * The client's errors as the port's: WrongExpectedVersionError (with the expected state the caller asked for and
 * the actual revision, or 'no_stream'), StreamNotFoundError and MaxAppendSizeExceededError. Others pass unchanged.
 */
export function toPortError(error: unknown, context: ErrorContext = {}): unknown {
  if (error instanceof ClientWrongExpectedVersionError) {
    const streamId = error.streamName || context.streamId || '';
    const asked = context.expected?.get(streamId);
    return new WrongExpectedVersionError(
      streamId,
      asked ?? fromClientStreamState(error.expectedState),
      fromClientCurrentState(error.actualState),
    );
  }
  if (error instanceof ClientStreamNotFoundError) {
    return new StreamNotFoundError(error.streamName || context.streamId || '');
  }
  if (error instanceof ClientMaxAppendSizeExceededError) {
    return new MaxAppendSizeExceededError(context.size ?? -1, Number(error.maxAppendSize ?? MAX_APPEND_SIZE));
  }
  if (error instanceof ClientTransactionMaxSizeExceededError) {
    return new MaxAppendSizeExceededError(Number(error.size ?? context.size ?? -1), Number(error.maxSize));
  }
  if (error instanceof ClientAppendRecordSizeExceededError) {
    return new MaxAppendSizeExceededError(Number(error.size), Number(error.maxSize));
  }
  if (error instanceof ClientUnsupportedError) {
    return new KurrentDbUnsupportedError(error.feature, error.minimumVersion);
  }
  return error;
}
