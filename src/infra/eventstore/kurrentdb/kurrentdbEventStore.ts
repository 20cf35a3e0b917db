import {
  BACKWARDS,
  END,
  FORWARDS,
  KurrentDBClient,
  START,
  excludeSystemEvents,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type EventData,
  type Filter,
  type Position,
} from '@kurrent/kurrentdb-client';
import { within } from '../../../ports/within';
import {
  StreamNotFoundError,
  WrongExpectedVersionError,
  type AppendResult,
  type EventStore,
  expectationMet,
  type ExpectedState,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamAppend,
  type SubscribeAllOptions,
  type Subscription,
  type SubscriptionItem,
} from '../../../ports/eventStore';
import {
  checkAppendSize,
  commitPositionOf,
  fromClientCurrentState,
  fromResolvedEvent,
  toBigInt,
  toClientPosition,
  toClientStreamState,
  toEventData,
  toPortError,
} from './mapping';
import { DEFAULT_APPEND_RETRY, appendWithRetry, type AppendRetryOptions } from './appendRetry';
import { SubscriptionReader } from './subscriptionReader';

/** The part of the client the adapter uses (a fake of it drives the unit tests). */
export type KurrentClient = Pick<
  KurrentDBClient,
  'appendToStream' | 'multiStreamAppend' | 'readStream' | 'readAll' | 'subscribeToAll' | 'dispose'
>;

export interface BackoffOptions {
  /** Wait before the first resubscription after a drop. */
  initialMs: number;
  /** Ceiling of the doubling wait. */
  maxMs: number;
}

export interface KurrentDbEventStoreOptions {
  /**
   * Stream prefixes applied to `$all` reads, subscriptions and `headPosition()` when a call names none (the
   * service's categories in production). Empty: every event except KurrentDB's system events.
   */
  streamPrefixes?: readonly string[];
  /** Resubscription backoff after a dropped subscription (default 250 ms doubling up to 10 s). */
  backoff?: BackoffOptions;
  /** Told about dropped subscriptions (a pino logger fits). */
  logger?: { warn(obj: object, msg: string): void };
  /** Retries of appends with an unknown outcome (deadline, not leader, unavailable): see ./appendRetry.ts. */
  appendRetry?: AppendRetryOptions;
}

export interface ConnectOptions extends KurrentDbEventStoreOptions {
  /** How long the startup probe may take (capabilities and a read of the head). Default 10 s. */
  timeoutMs?: number;
  /** Refuse servers without multi-stream append (KurrentDB < 25.1). Default true: the service's commands need it. */
  requireMultiStreamAppend?: boolean;
}

/** One line, fit for a startup error: the URL was malformed, the server unreachable or too old. */
export class KurrentDbConnectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KurrentDbConnectError';
  }
}

const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 10_000 };
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** gRPC method of KurrentDB 25.1's multi-stream append, as the server's capabilities list it. */
const APPEND_SESSION = { path: '/kurrentdb.protocol.v2.streams.StreamsService/AppendSession' };

interface SubscriptionState {
  closed: boolean;
  reader: SubscriptionReader | undefined;
  /** Ends a backoff wait early (unsubscribe, dispose). */
  cancelWait: (() => void) | undefined;
  /** Settles once the subscription's server call is cancelled. */
  closing: Promise<void> | undefined;
}

/** Whether the subscription was closed: a call, since the flag changes while the generator waits at a yield or an
 * await. */
const isClosed = (state: SubscriptionState): boolean => state.closed;

interface CatchUpTarget {
  /** Head (under the store's default filter) when the subscription started. */
  head: bigint;
  /** Position of the last event matching the subscription's own filter when it started. */
  lastMatching: bigint;
}

interface PreparedAppend {
  streamId: string;
  expectedState: ExpectedState;
  events: EventData[];
}

/**
 * The EventStore port over KurrentDB / EventStoreDB (`@kurrent/kurrentdb-client`).
 *
 *  - `position` is the event's commit position in `$all`.
 *  - `appendToStreams` with several streams uses KurrentDB 25.1's atomic multi-stream append; older servers lack it,
 *    and {@link KurrentDbEventStore.connect} refuses them at startup (one-stream calls use the classic append).
 *  - The 1 MiB append limit is checked before anything is sent, so both adapters fail the same way.
 *  - `$all` reads and subscriptions are filtered on the server (stream prefixes; otherwise system events excluded).
 *  - Subscriptions deliver catch-up, one caught-up marker, then live events, in order; a dropped subscription is
 *    resumed after the last delivered position with exponential backoff, invisibly to the consumer.
 */
export class KurrentDbEventStore implements EventStore {
  private readonly defaultPrefixes: string[];
  private readonly backoff: BackoffOptions;
  private readonly subscriptions = new Set<SubscriptionState>();
  private disposed = false;
  /** Whether a gRPC call was made (reads go through the client's native bridge instead), i.e. a channel exists. */
  private grpcUsed = false;

  constructor(
    private readonly client: KurrentClient,
    private readonly options: KurrentDbEventStoreOptions = {},
  ) {
    this.defaultPrefixes = normalisePrefixes(options.streamPrefixes);
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
  }

  /**
   * Opens a client on `url` and probes the server within `timeoutMs`: its capabilities (multi-stream append) and a
   * read of the head. Fails with a one-line {@link KurrentDbConnectError} instead of hanging or dumping a stack.
   */
  static async connect(url: string, options: ConnectOptions = {}): Promise<KurrentDbEventStore> {
    const where = redactUrl(url);
    let client: KurrentDBClient;
    try {
      client = KurrentDBClient.connectionString(url);
    } catch (error) {
      throw new KurrentDbConnectError(`KURRENTDB_URL "${where}" is malformed: ${oneLine(error)}`);
    }
    const store = new KurrentDbEventStore(client, options);
    const timeoutMs = options.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    let server: ServerInfo;
    store.grpcUsed = true;
    try {
      server = await within(
        (async () => {
          const info = await serverInfo(client);
          await store.headPosition();
          return info;
        })(),
        timeoutMs,
        'the server',
      );
    } catch (error) {
      await store.dispose();
      throw new KurrentDbConnectError(`Cannot reach KurrentDB at ${where}: ${oneLine(error)}`);
    }
    if ((options.requireMultiStreamAppend ?? true) && server.multiStreamAppend === false) {
      await store.dispose();
      throw new KurrentDbConnectError(
        `KurrentDB at ${where} (server version ${server.version}) does not support multi-stream appends; ` +
          'the service needs KurrentDB 25.1 or later.',
      );
    }
    return store;
  }

  // ---- appending ------------------------------------------------------------------------------------------------

  async appendToStream(
    streamId: string,
    events: NewEvent[],
    options: { expectedState: ExpectedState },
  ): Promise<AppendResult> {
    if (events.length === 0) return this.checkExpectation(streamId, options.expectedState);
    const { events: data, size } = toEventData(events);
    checkAppendSize(size);
    return this.appendPrepared({ streamId, expectedState: options.expectedState, events: data }, size);
  }

  async appendToStreams(appends: StreamAppend[]): Promise<{ position: bigint }> {
    const seen = new Set<string>();
    for (const a of appends) {
      if (seen.has(a.streamId)) throw new Error(`Stream ${a.streamId} appears more than once in one append.`);
      seen.add(a.streamId);
    }
    let size = 0;
    const prepared = appends.map((a): PreparedAppend => {
      const converted = toEventData(a.events);
      size += converted.size;
      return { streamId: a.streamId, expectedState: a.expectedState, events: converted.events };
    });
    checkAppendSize(size);

    // A stream given without events only states an expectation. KurrentDB 25.1 cannot check a stream it does not
    // write to in the same transaction, so those are checked by a read just before (the service never sends them).
    for (const a of prepared) if (a.events.length === 0) await this.checkExpectation(a.streamId, a.expectedState);
    const writes = prepared.filter((a) => a.events.length > 0);
    if (writes.length === 0) return { position: await this.headPosition() };
    if (writes.length === 1) return { position: (await this.appendPrepared(writes[0], size)).position };

    const expected = new Map(writes.map((a) => [a.streamId, a.expectedState] as const));
    this.grpcUsed = true;
    const requests = writes.map((a) => ({
      streamName: a.streamId,
      events: a.events,
      expectedState: toClientStreamState(a.expectedState),
    }));
    try {
      return await appendWithRetry(
        async () => ({ position: toBigInt((await this.client.multiStreamAppend(requests)).position) }),
        async () => {
          // All or nothing: the append was atomic, so finding every stream's events means it was recorded.
          let position = -1n;
          for (const a of writes) {
            const found = await this.recordedAt(a);
            if (!found) return undefined;
            position = max(position, found.position);
          }
          return { position };
        },
        this.appendRetry,
      );
    } catch (error) {
      throw toPortError(error, { expected, size });
    }
  }

  private get appendRetry(): AppendRetryOptions {
    return this.options.appendRetry ?? DEFAULT_APPEND_RETRY;
  }

  /**
   * Where an append's events are, when they are the stream's last events (same ids, in order): the append was
   * recorded. undefined when they are not there.
   */
  private async recordedAt(append: PreparedAppend): Promise<AppendResult | undefined> {
    const last: RecordedEvent[] = [];
    for await (const event of this.readStream(append.streamId, {
      direction: 'backwards',
      maxCount: append.events.length,
    }))
      last.unshift(event);
    const ids = append.events.map((e) => e.id);
    if (last.length !== ids.length || last.some((event, i) => event.id !== ids[i])) return undefined;
    const newest = last[last.length - 1];
    return { nextExpectedRevision: newest.revision, position: newest.position };
  }

  private async appendPrepared(append: PreparedAppend, size: number): Promise<AppendResult> {
    const { streamId, expectedState } = append;
    this.grpcUsed = true;
    const send = async (): Promise<AppendResult> => {
      const result = await this.client.appendToStream(streamId, append.events, {
        streamState: toClientStreamState(expectedState),
      });
      // `success` is false only when the connection string sets throwOnAppendFailure=false.
      if (!result.success) {
        throw new WrongExpectedVersionError(
          streamId,
          expectedState,
          fromClientCurrentState(result.nextExpectedRevision),
        );
      }
      const position = result.position ? toBigInt(result.position.commit) : undefined;
      return {
        nextExpectedRevision: toBigInt(result.nextExpectedRevision),
        position: position ?? (await this.lastEvent(streamId))?.position ?? (await this.headPosition()),
      };
    };
    try {
      return await appendWithRetry(send, () => this.recordedAt(append), this.appendRetry);
    } catch (error) {
      throw toPortError(error, { expected: new Map([[streamId, expectedState]]), streamId, size });
    }
  }

  /** An append without events: checks the expectation and reports the stream's current state. */
  private async checkExpectation(streamId: string, expected: ExpectedState): Promise<AppendResult> {
    const last = await this.lastEvent(streamId);
    const actual = last?.revision ?? 'no_stream';
    if (!expectationMet(expected, actual)) throw new WrongExpectedVersionError(streamId, expected, actual);
    const position = last && last.position >= 0n ? last.position : await this.headPosition();
    return { nextExpectedRevision: last?.revision ?? -1n, position };
  }

  // ---- reading --------------------------------------------------------------------------------------------------

  async *readStream(streamId: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    if (options.maxCount !== undefined && options.maxCount <= 0) return;
    const backwards = options.direction === 'backwards';
    const events = this.client.readStream(streamId, {
      direction: backwards ? BACKWARDS : FORWARDS,
      fromRevision: options.fromRevision ?? (backwards ? END : START),
      maxCount: options.maxCount,
      resolveLinkTos: false,
    });
    const positions = new StreamPositions(streamId);
    try {
      for await (const resolved of events) {
        const event = fromResolvedEvent(resolved);
        if (!event) continue;
        // The server leaves the position out of some stream reads; the port promises one (history, point in time
        // and catch-up order events by it).
        if (event.position < 0n && options.positions !== false)
          event.position = await positions.of(event.id, (from) => this.readStreamInAll(streamId, from));
        yield event;
      }
    } catch (error) {
      throw toPortError(error, { streamId });
    }
  }

  /** The events of one stream as `$all` has them (with positions), after `from` (an event's position, or 0n). */
  private readStreamInAll(streamId: string, from: bigint): AsyncIterable<AllStreamResolvedEvent> {
    return this.client.readAll({
      direction: FORWARDS,
      fromPosition: from === 0n ? START : toClientPosition(from),
      filter: streamNameFilter({ regex: `^${escapeRegExp(streamId)}$` }),
      resolveLinkTos: false,
    });
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    const maxCount = options.maxCount ?? Infinity;
    if (maxCount <= 0) return;
    const backwards = options.direction === 'backwards';
    const from = options.fromPosition ?? 0n;
    // The port's fromPosition is exclusive; the server's is inclusive going forwards, so one more is asked for and
    // anything at or beyond `from` is dropped (in either direction, which also covers older servers).
    const events = this.client.readAll({
      direction: backwards ? BACKWARDS : FORWARDS,
      fromPosition: from === 0n ? (backwards ? END : START) : toClientPosition(from),
      maxCount: Number.isFinite(maxCount) ? maxCount + (from === 0n ? 0 : 1) : undefined,
      filter: this.filterFor(options.streamPrefixes),
      resolveLinkTos: false,
    });
    let delivered = 0;
    try {
      for await (const resolved of events) {
        const event = fromResolvedEvent(resolved);
        if (!event) continue;
        if (from !== 0n && (backwards ? event.position >= from : event.position <= from)) continue;
        yield event;
        if (++delivered >= maxCount) return;
      }
    } catch (error) {
      throw toPortError(error);
    }
  }

  async streamRevision(streamId: string): Promise<bigint | 'no_stream'> {
    return (await this.lastEvent(streamId))?.revision ?? 'no_stream';
  }

  /** Position of the last event under the default filter (the service's streams): what the projector can reach. */
  async headPosition(): Promise<bigint> {
    return this.lastPosition(this.defaultPrefixes);
  }

  async streamRevisionAndHead(streamId: string): Promise<{ revision: bigint | 'no_stream'; head: bigint }> {
    const [revision, head] = await Promise.all([this.streamRevision(streamId), this.headPosition()]);
    return { revision, head };
  }

  private async lastPosition(prefixes: string[]): Promise<bigint> {
    try {
      for await (const resolved of this.client.readAll({
        direction: BACKWARDS,
        fromPosition: END,
        maxCount: 1,
        filter: this.filterFor(prefixes),
        resolveLinkTos: false,
      })) {
        const position = commitPositionOf(resolved);
        if (position >= 0n) return position;
      }
      return 0n;
    } catch (error) {
      throw toPortError(error);
    }
  }

  private async lastEvent(streamId: string): Promise<RecordedEvent | undefined> {
    try {
      for await (const event of this.readStream(streamId, { direction: 'backwards', maxCount: 1 })) return event;
      return undefined;
    } catch (error) {
      if (error instanceof StreamNotFoundError) return undefined;
      throw error;
    }
  }

  private filterFor(prefixes: readonly string[] | undefined): Filter {
    const list = prefixes === undefined ? this.defaultPrefixes : normalisePrefixes(prefixes);
    return list.length > 0 ? streamNameFilter({ prefixes: list }) : excludeSystemEvents();
  }

  // ---- subscriptions ----------------------------------------------------------------------------------------------

  subscribeToAll(options: SubscribeAllOptions = {}): Subscription {
    const state: SubscriptionState = {
      closed: this.disposed,
      reader: undefined,
      cancelWait: undefined,
      closing: undefined,
    };
    if (!state.closed) this.subscriptions.add(state);
    const prefixes =
      options.streamPrefixes === undefined ? this.defaultPrefixes : normalisePrefixes(options.streamPrefixes);
    const items = this.subscriptionItems(state, options.fromPosition ?? 0n, prefixes);
    return {
      [Symbol.asyncIterator]: () => items,
      unsubscribe: async () => this.closeSubscription(state),
    };
  }

  /**
   * Catch-up ends — and the one caught-up marker goes out — at whichever comes first: the server's CaughtUp
   * (EventStoreDB 23.10+ / KurrentDB), or the delivery of the last matching event that existed when the subscription
   * started (read first, so this works on every server version). Drops are retried from the last delivered
   * position, with exponential backoff, until unsubscribe or dispose.
   */
  private async *subscriptionItems(
    state: SubscriptionState,
    fromPosition: bigint,
    prefixes: string[],
  ): AsyncGenerator<SubscriptionItem> {
    const filter = this.filterFor(prefixes);
    let resumeFrom: Position | undefined = fromPosition > 0n ? toClientPosition(fromPosition) : undefined;
    let last = fromPosition;
    let target: CatchUpTarget | undefined;
    let caughtUp = false;
    let failures = 0;
    // The marker's position: at least the head seen at the start, and never past an event still to come. Always an
    // event's position (or the caller's), never the server's own caught-up position, which need not be one.
    // Each `yield marker()` is preceded by `caughtUp = true` (in the loop, where narrowing sees it).
    const marker = (): SubscriptionItem => ({ kind: 'caughtUp', position: max(last, target?.head ?? 0n) });
    try {
      while (!isClosed(state)) {
        let reader: SubscriptionReader | undefined;
        try {
          target ??= await this.catchUpTarget(prefixes);
          if (isClosed(state)) return;
          if (!caughtUp && target.lastMatching <= last) {
            caughtUp = true;
            yield marker();
            if (isClosed(state)) return;
          }
          this.grpcUsed = true;
          const source = this.client.subscribeToAll({
            fromPosition: resumeFrom ?? START,
            filter,
            resolveLinkTos: false,
          });
          reader = new SubscriptionReader(source);
          state.reader = reader;
          for (;;) {
            const item = await reader.next();
            if (item.kind === 'closed') return;
            if (item.kind === 'end') throw new Error('the server ended the subscription');
            failures = 0;
            if (item.kind === 'caughtUp') {
              if (!caughtUp) {
                caughtUp = true;
                yield marker();
                if (isClosed(state)) return;
              }
              continue;
            }
            const event = fromResolvedEvent(item.resolved);
            if (!event) continue;
            const at = tuplePosition(item.resolved, event.position);
            if (resumeFrom && !isAfter(at, resumeFrom)) continue;
            if (!caughtUp && event.position > target.lastMatching) {
              caughtUp = true;
              yield marker();
              if (isClosed(state)) return;
            }
            yield { kind: 'event', event };
            last = event.position;
            resumeFrom = at;
            if (isClosed(state)) return;
            if (!caughtUp && event.position >= target.lastMatching) {
              caughtUp = true;
              yield marker();
              if (isClosed(state)) return;
            }
          }
        } catch (error) {
          if (isClosed(state)) return;
          await reader?.close();
          failures += 1;
          const delayMs = backoffDelay(failures, this.backoff);
          this.options.logger?.warn(
            { err: error, resumeAfter: last.toString(), retryInMs: delayMs },
            'KurrentDB $all subscription dropped; resubscribing',
          );
          await this.pause(state, delayMs);
        } finally {
          if (state.reader === reader) state.reader = undefined;
          await reader?.close();
        }
      }
    } finally {
      await this.closeSubscription(state);
    }
  }

  private async catchUpTarget(prefixes: string[]): Promise<CatchUpTarget> {
    // Head first, then the filter's last event: any matching event at or below the head is then at or below
    // lastMatching, so everything after lastMatching is genuinely live.
    const head = await this.headPosition();
    const lastMatching = samePrefixes(prefixes, this.defaultPrefixes) ? head : await this.lastPosition(prefixes);
    return { head, lastMatching };
  }

  private pause(state: SubscriptionState, ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      if (state.closed) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        state.cancelWait = undefined;
        resolve();
      }
      state.cancelWait = done;
    });
  }

  private closeSubscription(state: SubscriptionState): Promise<void> {
    if (!state.closing) {
      state.closed = true;
      this.subscriptions.delete(state);
      state.cancelWait?.();
      state.closing = state.reader?.close() ?? Promise.resolve();
    }
    return state.closing;
  }

  // ---- lifecycle ------------------------------------------------------------------------------------------------

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await Promise.all([...this.subscriptions].map((state) => this.closeSubscription(state)));
    await this.client.dispose();
    if (this.grpcUsed) await closeChannel(this.client);
  }
}

// ---- helpers ------------------------------------------------------------------------------------------------------

/**
 * Positions of one stream's events, looked up in `$all` (filtered to the stream) when a stream read came without
 * them: one forward read for the whole stream, continued from the last position found when a later event is asked
 * for. Reads start only at positions `$all` gave.
 */
class StreamPositions {
  private readonly byId = new Map<string, bigint>();
  private last = 0n;

  constructor(private readonly streamId: string) {}

  async of(eventId: string, read: (from: bigint) => AsyncIterable<AllStreamResolvedEvent>): Promise<bigint> {
    const known = this.byId.get(eventId);
    if (known !== undefined) return known;
    for await (const resolved of read(this.last)) {
      const position = commitPositionOf(resolved);
      const id = resolved.event?.id;
      if (position < 0n || id === undefined || resolved.event?.streamId !== this.streamId) continue;
      this.byId.set(id, position);
      if (position > this.last) this.last = position;
    }
    const found = this.byId.get(eventId);
    if (found === undefined)
      throw new Error(`KurrentDB: event ${eventId} of ${this.streamId} has no position in $all.`);
    return found;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function normalisePrefixes(prefixes: readonly string[] | undefined): string[] {
  return prefixes ? [...new Set(prefixes)] : [];
}

function samePrefixes(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((p) => b.includes(p));
}

function max(...values: bigint[]): bigint {
  return values.reduce((m, v) => (v > m ? v : m));
}

/** The exponential backoff: initialMs, doubled per consecutive failure, capped at maxMs. */
export function backoffDelay(failures: number, backoff: BackoffOptions): number {
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.max(0, failures - 1));
}

function tuplePosition(resolved: AllStreamResolvedEvent, commit: bigint): Position {
  const position = resolved.event?.position;
  if (!position) return toClientPosition(commit);
  return { commit: toBigInt(position.commit), prepare: toBigInt(position.prepare) };
}

function isAfter(a: Position, b: Position): boolean {
  return a.commit > b.commit || (a.commit === b.commit && a.prepare > b.prepare);
}

interface ServerInfo {
  version: string;
  /** undefined when the client does not expose the server's capabilities. */
  multiStreamAppend: boolean | undefined;
}

/**
 * The server's version and whether it offers multi-stream append. The client keeps capabilities to itself
 * (`protected`), hence the narrow structural access; fetching them is also the probe's first round trip.
 */
async function serverInfo(client: KurrentDBClient): Promise<ServerInfo> {
  const view = client as unknown as {
    capabilities?: Promise<{ serverVersion: string; supports(method: { path: string }, feature?: string): boolean }>;
  };
  const capabilities = await view.capabilities;
  if (!capabilities) return { version: 'unknown', multiStreamAppend: undefined };
  return { version: capabilities.serverVersion, multiStreamAppend: capabilities.supports(APPEND_SESSION) };
}

/** `dispose()` cancels the client's streams but leaves its gRPC channel open; close it too when there is one. */
async function closeChannel(client: KurrentClient): Promise<void> {
  const view = client as unknown as { getChannel?: () => Promise<{ close(): void }> };
  if (!(client instanceof KurrentDBClient) || typeof view.getChannel !== 'function') return;
  try {
    (await within(view.getChannel(), 1000, 'the gRPC channel')).close();
  } catch {
    // No channel could be made (unreachable server): nothing to close.
  }
}

function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message || error.name : String(error);
  return message
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\s*Resolution note:\s*$/, '')
    .trim();
}
