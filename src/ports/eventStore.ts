/**
 * The EventStore port, with EventStoreDB / KurrentDB semantics so that the KurrentDB adapter is a thin
 * translation and the embedded SQLite adapter reproduces it exactly:
 *  - streams are named `<category>-<id>` (`folder-<id>`, `user-<id>`, …);
 *  - stream revisions start at 0 and grow by one per event;
 *  - global positions grow strictly in commit order (`$all` order);
 *  - an append states what it expects of the stream and fails with {@link WrongExpectedVersionError} otherwise;
 *  - subscriptions deliver catch-up events, then one caught-up signal, then live events, strictly in order.
 */

/** Expected state of a stream for an append: the three named states or an exact revision. */
export type ExpectedState = 'no_stream' | 'any' | 'exists' | bigint;

/** Whether a stream at `actual` (its last revision, or `no_stream`) meets the append's expected state. */
export function expectationMet(expected: ExpectedState, actual: bigint | 'no_stream'): boolean {
  switch (expected) {
    case 'any':
      return true;
    case 'no_stream':
      return actual === 'no_stream';
    case 'exists':
      return actual !== 'no_stream';
    default:
      return actual === expected;
  }
}

/** Provenance carried by every event. */
export interface EventMetadata {
  /** The user on whose behalf the event was written (null for system work). */
  userId: string | null;
  /** The HTTP request (Girder-Request-Uid) or CLI run that caused it. */
  requestId: string | null;
  /** Groups every event that one user action caused, across streams and follow-up work. */
  correlationId: string | null;
  /** The event or command that directly caused this one. */
  causationId: string | null;
  /** ISO-8601 time the event was recorded. */
  at: string;
}

/** An event to append. `id` is generated when absent (a UUID, as ESDB event ids are). */
export interface NewEvent {
  id?: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
}

export interface RecordedEvent<T = unknown> {
  id: string;
  streamId: string;
  revision: bigint;
  position: bigint;
  type: string;
  data: T;
  metadata: EventMetadata;
}

export interface AppendResult {
  /** Revision of the last event written to the stream (the next append expects this). */
  nextExpectedRevision: bigint;
  /** Global position of the last event written. */
  position: bigint;
}

/** One stream's part of an atomic multi-stream append. */
export interface StreamAppend {
  streamId: string;
  expectedState: ExpectedState;
  events: NewEvent[];
}

type Direction = 'forwards' | 'backwards';

export interface ReadStreamOptions {
  direction?: Direction;
  /** Inclusive starting revision; defaults to the start (forwards) or the end (backwards). */
  fromRevision?: bigint;
  maxCount?: number;
  /**
   * false: the caller ignores the events' positions (a command folding its stream), and a store whose stream reads
   * may lack them (KurrentDB) need not look them up; such events may carry -1n. Default true.
   */
  positions?: boolean;
}

export interface ReadAllOptions {
  direction?: Direction;
  /**
   * Exclusive: events strictly after (forwards) / before (backwards) this position. 0n = from the start (forwards)
   * or the end (backwards). Only a position the store gave (an event's, a caught-up marker's, an append's): KurrentDB
   * refuses a read from a position that is not the start of a record, so positions are never computed.
   */
  fromPosition?: bigint;
  maxCount?: number;
  /** Only events whose stream id starts with one of these prefixes (server-side filter on KurrentDB). */
  streamPrefixes?: string[];
  /**
   * A hint for a reader that ignores every other event type (a replay): the store may leave out the events of other
   * types before they reach JS (the SQLite store does, in SQL, on forward reads without `streamPrefixes`); a store
   * that does not delivers them as usual. What is left out is reported to `onSkipped` after the events delivered
   * with it: how many, and the position the read has covered (every event up to it was delivered or counted), so
   * that a reader counting events or checkpointing positions can account for them. `maxCount` counts the events
   * delivered.
   */
  onlyTypes?: { types: readonly string[]; onSkipped: (count: number, through: bigint) => void };
}

export interface SubscribeAllOptions {
  /** Exclusive: deliver events strictly after this position (0n = everything). Only a position the store gave. */
  fromPosition?: bigint;
  streamPrefixes?: string[];
}

/** Items of an `$all` subscription: events, and exactly one caught-up marker once catch-up is done. */
export type SubscriptionItem = { kind: 'event'; event: RecordedEvent } | { kind: 'caughtUp'; position: bigint };

export interface Subscription extends AsyncIterable<SubscriptionItem> {
  /** Ends the subscription: the iterator completes after the item in flight. */
  unsubscribe(): Promise<void>;
}

export class WrongExpectedVersionError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedState,
    /** Current revision, or 'no_stream' when the stream does not exist. */
    readonly actual: bigint | 'no_stream',
  ) {
    super(`Append to stream ${streamId} failed: expected ${String(expected)}, actual ${String(actual)}.`);
    this.name = 'WrongExpectedVersionError';
  }
}

export class StreamNotFoundError extends Error {
  constructor(readonly streamId: string) {
    super(`Stream ${streamId} not found.`);
    this.name = 'StreamNotFoundError';
  }
}

export class MaxAppendSizeExceededError extends Error {
  constructor(
    readonly size: number,
    readonly maxSize: number,
  ) {
    super(`Append of ${size} bytes exceeds the maximum append size of ${maxSize} bytes.`);
    this.name = 'MaxAppendSizeExceededError';
  }
}

/** KurrentDB's default maximum append size (1 MiB); the embedded store enforces the same limit. */
export const MAX_APPEND_SIZE = 1024 * 1024;

export interface EventStore {
  appendToStream(
    streamId: string,
    events: NewEvent[],
    options: { expectedState: ExpectedState },
  ): Promise<AppendResult>;
  /**
   * Appends to several streams atomically: either every stream's expectation holds and all events are written
   * (contiguous positions, in the order given) or nothing is written. (KurrentDB 25.1+ multi-stream append.)
   * Returns the position of the last event written.
   */
  appendToStreams(appends: StreamAppend[]): Promise<{ position: bigint }>;
  /** Reads a stream's events; throws {@link StreamNotFoundError} when the stream has none. */
  readStream(streamId: string, options?: ReadStreamOptions): AsyncIterable<RecordedEvent>;
  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent>;
  /** Current revision of a stream, or 'no_stream'. */
  streamRevision(streamId: string): Promise<bigint | 'no_stream'>;
  /** Position of the last committed event (0n when empty). */
  headPosition(): Promise<bigint>;
  /**
   * {@link streamRevision} and {@link headPosition} at once (one read where the store can: a writer that checks a
   * name asks for both on every request).
   */
  streamRevisionAndHead(streamId: string): Promise<{ revision: bigint | 'no_stream'; head: bigint }>;
  subscribeToAll(options?: SubscribeAllOptions): Subscription;
  /** Releases connections, timers and subscriptions. */
  dispose(): Promise<void>;
}
