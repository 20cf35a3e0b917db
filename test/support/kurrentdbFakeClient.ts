import { Readable } from 'node:stream';
import {
  NO_STREAM,
  START,
  END,
  STREAM_EXISTS,
  StreamNotFoundError as ClientStreamNotFoundError,
  UnavailableError as ClientUnavailableError,
  DeadlineExceededError as ClientDeadlineExceededError,
  WrongExpectedVersionError as ClientWrongExpectedVersionError,
  type AllStreamResolvedEvent,
  type AppendResult as ClientAppendResult,
  type CaughtUp,
  type EventData,
  type Filter,
  type Position,
} from '@kurrent/kurrentdb-client';
import type { EventMetadata } from '../../src/ports/eventStore';
import { encodeMetadata } from '../../src/infra/eventstore/kurrentdb/mapping';

/**
 * A FAKE of the KurrentDB client (`@kurrent/kurrentdb-client`'s `KurrentDBClient`, the part the adapter uses), for
 * tests on machines where no KurrentDB server runs. Not a server: see the class comment for what it models.
 */

/** The metadata every event the fake hands out carries. */
export const FAKE_EVENT_METADATA: EventMetadata = {
  userId: 'u1',
  requestId: 'r1',
  correlationId: 'c1',
  causationId: null,
  at: '2024-05-06T07:08:09.123Z',
};

export interface LoggedEvent {
  streamId: string;
  revision: bigint;
  position: bigint;
  type: string;
  id?: string;
}

export function resolvedEvent(e: {
  streamId: string;
  revision: bigint | number;
  position: bigint | number | undefined;
  type?: string;
  id?: string;
}): AllStreamResolvedEvent {
  const position =
    e.position === undefined ? undefined : ({ commit: e.position, prepare: e.position } as unknown as Position);
  return {
    event: {
      streamId: e.streamId,
      id: idOf(e),
      revision: e.revision as bigint,
      type: e.type ?? 'T',
      isJson: true,
      created: new Date('2024-01-01T00:00:00.000Z'),
      data: { n: 1 },
      metadata: encodeMetadata(FAKE_EVENT_METADATA),
      position: position!,
    },
    commitPosition: undefined,
  };
}

/** A logged event's id: the one it was appended with, else one made from its position. */
export function idOf(e: { id?: string; position?: bigint | number }): string {
  return (
    e.id ??
    `00000000-0000-4000-8000-${String(e.position ?? 0)
      .padStart(12, '0')
      .slice(-12)}`
  );
}

/** An object-mode stream shaped like the client's AllStreamSubscription, driven by the test. */
export class FakeSubscription extends Readable {
  readonly unsubscribed = jest.fn();
  constructor() {
    super({ objectMode: true });
  }
  override _read(): void {
    // Events arrive through deliver(), not on demand.
  }
  deliver(...events: LoggedEvent[]): void {
    for (const e of events) this.push(resolvedEvent(e));
  }
  caughtUp(position?: bigint): void {
    const info: CaughtUp = position === undefined ? {} : { position: { commit: position, prepare: position } };
    this.emit('caughtUp', info);
  }
  disconnect(): void {
    this.destroy(new ClientUnavailableError());
  }
  async unsubscribe(): Promise<void> {
    this.unsubscribed();
    this.push(null);
  }
}

export interface SubscribeCall {
  fromPosition: Position | typeof START | typeof END;
  filter: Filter;
  sub: FakeSubscription;
}

/** What KurrentDB answers to a read that starts at a position that is not the start of an event's record. */
function invalidPosition(position: Position): Error {
  return new Error(`Invalid position ${position.commit}/${position.prepare}: not the start of a record.`);
}

interface MultiRequest {
  streamName: string;
  events: EventData[];
  expectedState: unknown;
}

/**
 * A fake client: an in-memory `$all` for reads, and subscriptions the test drives by hand. Strict where the server
 * is: reads and subscriptions from a position that is no event's are refused. Switches: stream reads without
 * positions (the server fills them only for some events), appends recorded in the log (with the server's
 * idempotence for repeated event ids), and appends that commit and then time out.
 */
export class FakeClient {
  log: LoggedEvent[] = [];
  readonly subscribeCalls: SubscribeCall[] = [];
  readonly readAllCalls: { direction: string; fromPosition: unknown; maxCount: unknown; filter: Filter }[] = [];
  readonly appendCalls: { stream: string; events: EventData[]; streamState: unknown }[] = [];
  readonly multiCalls: unknown[] = [];
  appendResult: ClientAppendResult | Error = {
    success: true,
    nextExpectedRevision: 0n,
    position: { commit: 1n, prepare: 1n },
  };
  multiResult: { position: bigint | number; responses: unknown[] } | Error = { position: 10n, responses: [] };
  readStreamError: Error | undefined;
  /** false: stream reads carry no positions. */
  positionsInStreamReads = true;
  /** true: appends write to `log` (and answer from it) instead of answering `appendResult`. */
  recordAppends = false;
  /** The next n recorded appends commit and then fail with the client's deadline error. */
  commitThenTimeout = 0;
  /** Errors the next recorded appends fail with before writing anything (one per append). */
  failBeforeWriting: Error[] = [];
  /** Runs right after a recorded append wrote its events (another writer's append landing before the answer). */
  afterCommit: (() => void) | undefined;
  readonly dispose = jest.fn(async () => undefined);

  add(streamId: string, type = 'T', id?: string): LoggedEvent {
    const position = (this.log[this.log.length - 1]?.position ?? 0n) + 100n;
    const revision = BigInt(this.log.filter((e) => e.streamId === streamId).length);
    const e = { streamId, revision, position, type, ...(id === undefined ? {} : { id }) };
    this.log.push(e);
    return e;
  }

  private isEventPosition(position: Position): boolean {
    return this.log.some((e) => e.position === position.commit && e.position === position.prepare);
  }

  readAll(options: {
    direction: string;
    fromPosition: Position | string;
    maxCount?: number;
    filter: Filter;
  }): AsyncIterable<AllStreamResolvedEvent> {
    this.readAllCalls.push({
      direction: options.direction,
      fromPosition: options.fromPosition,
      maxCount: options.maxCount,
      filter: options.filter,
    });
    const matches = (e: LoggedEvent) =>
      'prefixes' in options.filter && options.filter.prefixes
        ? options.filter.prefixes.some((p) => e.streamId.startsWith(p))
        : 'regex' in options.filter && options.filter.regex
          ? new RegExp(options.filter.regex).test(e.streamId)
          : !e.type.startsWith('$');
    let events = this.log.filter(matches);
    const from = options.fromPosition;
    const refused = typeof from === 'object' && !this.isEventPosition(from) ? invalidPosition(from) : undefined;
    if (options.direction === 'backwards') {
      events = events.reverse();
      if (typeof from === 'object') events = events.filter((e) => e.position < from.commit);
    } else if (typeof from === 'object') {
      events = events.filter((e) => e.position >= from.commit); // inclusive, as the server reads forwards
    }
    const selected = events.slice(0, options.maxCount ?? Infinity);
    return (async function* () {
      if (refused) throw refused;
      for (const e of selected) yield resolvedEvent(e);
    })();
  }

  readStream(
    streamId: string,
    options: { direction: string; fromRevision?: unknown; maxCount?: number },
  ): AsyncIterable<AllStreamResolvedEvent> {
    const error = this.readStreamError;
    const all = this.log.filter((e) => e.streamId === streamId);
    let events = all;
    const from = options.fromRevision;
    if (options.direction === 'backwards') {
      events = events.reverse();
      if (typeof from === 'bigint') events = events.filter((e) => e.revision <= from);
    } else if (typeof from === 'bigint') {
      events = events.filter((e) => e.revision >= from);
    }
    const selected = events.slice(0, options.maxCount ?? Infinity);
    const withPositions = this.positionsInStreamReads;
    return (async function* () {
      if (error) throw error;
      if (all.length === 0) throw new ClientStreamNotFoundError(undefined, streamId);
      for (const e of selected) yield resolvedEvent(withPositions ? e : { ...e, id: idOf(e), position: undefined });
    })();
  }

  subscribeToAll(options: { fromPosition: Position | typeof START; filter: Filter }): FakeSubscription {
    const sub = new FakeSubscription();
    this.subscribeCalls.push({ fromPosition: options.fromPosition, filter: options.filter, sub });
    const from = options.fromPosition;
    if (typeof from === 'object' && !this.isEventPosition(from)) setImmediate(() => sub.destroy(invalidPosition(from)));
    return sub;
  }

  async appendToStream(
    stream: string,
    events: EventData[],
    options: { streamState: unknown },
  ): Promise<ClientAppendResult> {
    this.appendCalls.push({ stream, events, streamState: options.streamState });
    if (this.recordAppends) return this.record(stream, events, options.streamState);
    if (this.appendResult instanceof Error) throw this.appendResult;
    return this.appendResult;
  }

  /** The server's append: idempotent for the same ids at the end of the stream, else the expected state checked. */
  private record(stream: string, events: EventData[], streamState: unknown): ClientAppendResult {
    const failure = this.failBeforeWriting.shift();
    if (failure) throw failure;
    const existing = this.log.filter((e) => e.streamId === stream);
    const tail = existing.slice(-events.length);
    const answer = (last: LoggedEvent): ClientAppendResult => ({
      success: true,
      nextExpectedRevision: last.revision,
      position: { commit: last.position, prepare: last.position },
    });
    if (tail.length === events.length && tail.every((e, i) => e.id === events[i].id)) return answer(tail.at(-1)!);
    this.checkExpected(stream, streamState);
    let last!: LoggedEvent;
    for (const e of events) last = this.add(stream, e.type, e.id);
    this.afterCommit?.();
    if (this.commitThenTimeout > 0) {
      this.commitThenTimeout -= 1;
      throw new ClientDeadlineExceededError();
    }
    return answer(last);
  }

  async multiStreamAppend(requests: unknown[]): Promise<{ position: bigint | number; responses: unknown[] }> {
    this.multiCalls.push(requests);
    if (this.recordAppends) return this.recordMulti(requests as MultiRequest[]);
    if (this.multiResult instanceof Error) throw this.multiResult;
    return this.multiResult;
  }

  /**
   * The server's multi-stream append: all or nothing, each stream's expected state checked; a repeat of an append
   * it wrote (the same ids at the end of every stream) is answered again without writing.
   */
  private recordMulti(requests: MultiRequest[]): { position: bigint; responses: unknown[] } {
    const failure = this.failBeforeWriting.shift();
    if (failure) throw failure;
    const tails = requests.map((r) => this.log.filter((e) => e.streamId === r.streamName).slice(-r.events.length));
    if (
      requests.every((r, i) => tails[i].length === r.events.length && tails[i].every((e, j) => e.id === r.events[j].id))
    )
      return {
        position: tails.reduce((max, t) => (t.at(-1)!.position > max ? t.at(-1)!.position : max), 0n),
        responses: [],
      };
    for (const r of requests) this.checkExpected(r.streamName, r.expectedState);
    let last!: LoggedEvent;
    for (const r of requests) for (const e of r.events) last = this.add(r.streamName, e.type, e.id);
    this.afterCommit?.();
    if (this.commitThenTimeout > 0) {
      this.commitThenTimeout -= 1;
      throw new ClientDeadlineExceededError();
    }
    return { position: last.position, responses: [] };
  }

  private checkExpected(stream: string, streamState: unknown): void {
    const existing = this.log.filter((e) => e.streamId === stream);
    const current = existing.length === 0 ? NO_STREAM : existing[existing.length - 1].revision;
    const met =
      streamState === NO_STREAM
        ? current === NO_STREAM
        : streamState === STREAM_EXISTS
          ? current !== NO_STREAM
          : typeof streamState !== 'bigint' || streamState === current;
    if (!met) {
      throw new ClientWrongExpectedVersionError(undefined, {
        streamName: stream,
        expected: streamState as bigint,
        current: current,
      });
    }
  }
}
