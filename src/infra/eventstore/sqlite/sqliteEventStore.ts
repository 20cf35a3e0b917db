import { randomUUID } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { WriteGate } from '../../sqlite/writeGate';
import { prepared } from '../../sqlite/preparedStatements';
import { sqlLimit } from '../../sqlite/sqlLimit';
import {
  MAX_APPEND_SIZE,
  MaxAppendSizeExceededError,
  StreamNotFoundError,
  type AppendResult,
  type EventMetadata,
  type EventStore,
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
  EVENTS_SCHEMA,
  GroupCommit,
  type AppendOutcome,
  type GroupOutcome,
  type PreparedAppend,
  type PreparedEvent,
} from './groupCommit';
import { AppendWorker } from './appendWorker';
import { isBusy } from '../../sqlite/noWaitWrites';
import { StoreBusyError } from '../../../ports/storeBusy';
import type { ProjectionInAppend } from '../../../ports/projectionInAppend';

/** Rows fetched per query by the paging readers and subscriptions. */
const PAGE_SIZE = 500;
const EVENT_COLUMNS = 'position, stream_id, revision, event_id, type, data, metadata';
/** How often waiting subscriptions look for commits made by other connections (other processes). */
const POLL_INTERVAL_MS = 250;
const MAX_INT64 = 9223372036854775807n;

/**
 * One row of `es_events` as an array (statements in raw mode): better-sqlite3 builds an object per row otherwise,
 * which cost as much as the query itself when a rebuild reads the whole log.
 */
type EventRow = [
  position: bigint,
  streamId: string,
  revision: bigint,
  eventId: string,
  type: string,
  data: string,
  metadata: string,
];

interface StreamHeadRow {
  revision: bigint;
  position: bigint;
}

/** An append waiting for its group commit. */
interface PendingAppend {
  appends: PreparedAppend[];
  resolve: (outcome: AppendOutcome) => void;
  reject: (error: unknown) => void;
}

/** Where group commits are written: on this thread, or on the append worker's. Resolves once durable. */
type Committer = (group: PreparedAppend[][]) => Promise<GroupOutcome>;

export interface SqliteEventStoreOptions {
  /**
   * The service's write gate (src/infra/sqlite/writeGate.ts). Without the worker, each group commit waits its turn
   * at the gate (asynchronously) while bulk work in a worker thread holds the file's write lock. With the worker,
   * each group commit also holds the gate while the worker writes, so that this process's other writers (the
   * projector, leases, notifications) wait for it asynchronously instead of sleeping the event loop in SQLite's busy
   * handler.
   */
  gate?: WriteGate;
  /**
   * Commit on a worker thread (appendWorker.ts), so that the event loop does not wait for the fsync. Only for a file
   * database (the worker opens the file by name); the service turns it on, tools and tests commit in place.
   * `lockWaitMs`: how long the worker waits for the write lock while another process holds it (the connection's
   * busy timeout, 5 s, when not given).
   * `projecting`: the worker also projects each group in its transaction (src/ports/projectionInAppend.ts); `entry`
   * is its thread's entry module (src/workers/appendProjectingWorker.ts), `link` what it shares with the projector.
   */
  appendWorker?: boolean | { lockWaitMs?: number; projecting?: { entry: string; link: ProjectionInAppend } };
}

interface SubscriptionState {
  closed: boolean;
  /** Resolves the wait in progress, if any. */
  wake: (() => void) | undefined;
}

/** Whether the subscription was closed: a call, since the flag changes while the generator waits at a yield or an
 * await. */
const isClosed = (state: SubscriptionState): boolean => state.closed;

interface Waiter {
  /** Head position this waiter has already scanned up to; the poll wakes it once the head moves past. */
  seenHead: bigint;
  resolve: () => void;
}

/**
 * The embedded EventStore: one append-only table in the service's SQLite file.
 *
 * `position` is an AUTOINCREMENT rowid. SQLite admits one writer at a time (appends use BEGIN IMMEDIATE), so
 * positions are handed out in commit order and a reader that sees position N has seen every position below N;
 * that is what lets readers and subscriptions page by position without ever skipping an event.
 */
export class SqliteEventStore implements EventStore {
  private readonly streamHeadStmt: Statement<[string], StreamHeadRow>;
  private readonly headStmt: Statement<[], { head: bigint | null }>;
  private readonly streamRevisionAndHeadStmt: Statement<[string], { revision: bigint | null; head: bigint | null }>;
  private readonly committer: Committer;
  /** How long a group commit waits for the write lock held by another connection before it fails (busy timeout). */
  private readonly lockWaitMs: number;
  private readonly worker: AppendWorker | undefined;
  /** Appends waiting for the next group commit. */
  private pendingAppends: PendingAppend[] = [];
  private flushScheduled = false;
  /** The group commit under way, if any: one at a time, so groups commit in the order they were formed. */
  private inFlight: Promise<void> | null = null;

  private readonly subscriptions = new Set<SubscriptionState>();
  private readonly waiters = new Set<Waiter>();
  private pollTimer: NodeJS.Timeout | undefined;
  private disposed = false;

  constructor(
    private readonly db: SqliteDatabase,
    options: SqliteEventStoreOptions = {},
  ) {
    db.exec(EVENTS_SCHEMA);
    const { gate } = options;
    const busyTimeoutMs = db.pragma('busy_timeout', { simple: true }) as number;
    const onWorker = options.appendWorker && !db.memory;
    const workerOptions = typeof options.appendWorker === 'object' ? options.appendWorker : {};
    this.lockWaitMs = onWorker ? (workerOptions.lockWaitMs ?? busyTimeoutMs) : busyTimeoutMs;
    if (onWorker) {
      const { projecting } = workerOptions;
      const worker = new AppendWorker(db.name, this.lockWaitMs, projecting?.entry);
      this.worker = worker;
      const commit = projecting
        ? async (group: PreparedAppend[][]) => {
            const outcome = await worker.commit(group, projecting.link.fenceFor(group.length));
            if (outcome.projectedThrough !== undefined) projecting.link.reached(outcome.projectedThrough);
            return outcome;
          }
        : (group: PreparedAppend[][]) => worker.commit(group);
      this.committer = gate ? (group) => gate.hold(() => commit(group)) : commit;
    } else {
      const groupCommit = new GroupCommit(db);
      const commitHere = (group: PreparedAppend[][]) => groupCommit.commit(group);
      this.committer = gate ? (group) => gate.run(() => commitHere(group)) : async (group) => commitHere(group);
    }
    this.streamHeadStmt = db
      .prepare<[string], StreamHeadRow>(
        'SELECT revision, position FROM es_events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1',
      )
      .safeIntegers(true);
    this.headStmt = db
      .prepare<[], { head: bigint | null }>('SELECT max(position) AS head FROM es_events')
      .safeIntegers(true);
    this.streamRevisionAndHeadStmt = db
      .prepare<[string], { revision: bigint | null; head: bigint | null }>(
        `SELECT (SELECT revision FROM es_events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1) AS revision,
          (SELECT max(position) FROM es_events) AS head`,
      )
      .safeIntegers(true);
  }

  async appendToStream(
    streamId: string,
    events: NewEvent[],
    options: { expectedState: ExpectedState },
  ): Promise<AppendResult> {
    const outcome = await this.append([{ streamId, expectedState: options.expectedState, events }]);
    const stream = outcome.streams[0];
    return {
      nextExpectedRevision: stream.revision,
      position: stream.position ?? this.head(),
    };
  }

  async appendToStreams(appends: StreamAppend[]): Promise<{ position: bigint }> {
    const outcome = await this.append(appends);
    return { position: outcome.lastPosition ?? this.head() };
  }

  async *readStream(streamId: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    const backwards = options.direction === 'backwards';
    let next = options.fromRevision ?? (backwards ? MAX_INT64 : 0n);
    let remaining = options.maxCount ?? Infinity;
    let first = true;
    while (remaining > 0) {
      const rows = this.eventRows(
        `SELECT ${EVENT_COLUMNS} FROM es_events WHERE stream_id = ? AND revision ${backwards ? '<=' : '>='} ? ` +
          `ORDER BY revision ${backwards ? 'DESC' : 'ASC'} ${sqlLimit(Math.min(PAGE_SIZE, remaining))}`,
      ).all(streamId, next);
      if (first && rows.length === 0 && this.streamHeadStmt.get(streamId) === undefined) {
        throw new StreamNotFoundError(streamId);
      }
      first = false;
      for (const row of rows) yield toRecordedEvent(row);
      remaining -= rows.length;
      if (rows.length < PAGE_SIZE) break;
      const last = rows[rows.length - 1][2];
      next = backwards ? last - 1n : last + 1n;
      if (next < 0n) break;
    }
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    const backwards = options.direction === 'backwards';
    const prefixes = normalisePrefixes(options.streamPrefixes);
    const from = options.fromPosition ?? 0n;
    let cursor = backwards && from === 0n ? MAX_INT64 : from;
    let remaining = options.maxCount ?? Infinity;
    if (options.onlyTypes && !backwards && prefixes.length === 0) {
      yield* this.readAllOfTypes(cursor, remaining, options.onlyTypes);
      return;
    }
    while (remaining > 0) {
      const limit = Math.min(PAGE_SIZE, remaining);
      const rows = this.readAllStatement(backwards, prefixes.length, limit).all(cursor, ...prefixParams(prefixes));
      for (const row of rows) yield toRecordedEvent(row);
      remaining -= rows.length;
      if (rows.length < limit) break;
      cursor = rows[rows.length - 1][0];
    }
  }

  /**
   * Forward `$all` read of the events of some types only: the others never leave SQLite (in a replay, half the log
   * is `ValueClaimed`, which no projection reads). Each page and the count of what it passed over are read in one
   * transaction, so an append committed meanwhile is neither delivered nor counted by this page (the next one reads
   * it).
   */
  private async *readAllOfTypes(
    from: bigint,
    maxCount: number,
    { types, onSkipped }: NonNullable<ReadAllOptions['onlyTypes']>,
  ): AsyncIterable<RecordedEvent> {
    const typesJson = JSON.stringify(types);
    const pageOfTypes = (limit: number) =>
      this.eventRows(
        `SELECT ${EVENT_COLUMNS} FROM es_events
          WHERE position > ? AND type IN (SELECT value FROM json_each(?)) ORDER BY position ${sqlLimit(limit)}`,
      );
    const passedOver = prepared(
      this.db,
      'SELECT COUNT(*) AS events, MAX(position) AS last FROM es_events WHERE position > ? AND position <= ?',
    ).safeIntegers(true) as Statement<unknown[], { events: bigint; last: bigint | null }>;
    const readPage = this.db.transaction((cursor: bigint, limit: number) => {
      const rows = pageOfTypes(limit).all(cursor, typesJson);
      // A full page covers the log up to its last event; the last page covers the rest of it.
      const through = rows.length === limit ? rows[rows.length - 1][0] : MAX_INT64;
      const range = passedOver.get(cursor, through);
      return { rows, skipped: Number(range?.events ?? 0n) - rows.length, through: range?.last ?? cursor };
    });
    let cursor = from;
    let remaining = maxCount;
    while (remaining > 0) {
      const limit = Math.min(PAGE_SIZE, remaining);
      const { rows, skipped, through } = readPage(cursor, limit);
      for (const row of rows) yield toRecordedEvent(row);
      if (skipped > 0) onSkipped(skipped, through);
      remaining -= rows.length;
      if (rows.length < limit) break;
      cursor = rows[rows.length - 1][0];
    }
  }

  async streamRevision(streamId: string): Promise<bigint | 'no_stream'> {
    return this.streamHeadStmt.get(streamId)?.revision ?? 'no_stream';
  }

  async headPosition(): Promise<bigint> {
    return this.head();
  }

  async streamRevisionAndHead(streamId: string): Promise<{ revision: bigint | 'no_stream'; head: bigint }> {
    // One statement, so one read transaction: on the embedded deployment each costs a pair of lock calls.
    // Two scalar subqueries: always one row.
    const row = this.streamRevisionAndHeadStmt.get(streamId) as { revision: bigint | null; head: bigint | null };
    return { revision: row.revision ?? 'no_stream', head: row.head ?? 0n };
  }

  subscribeToAll(options: SubscribeAllOptions = {}): Subscription {
    const state: SubscriptionState = { closed: this.disposed, wake: undefined };
    if (!state.closed) this.subscriptions.add(state);
    const items = this.subscriptionItems(state, options.fromPosition ?? 0n, normalisePrefixes(options.streamPrefixes));
    return {
      [Symbol.asyncIterator]: () => items,
      unsubscribe: async () => this.closeSubscription(state),
    };
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    for (const state of [...this.subscriptions]) this.closeSubscription(state);
    this.stopPolling();
    // Appends already requested are still written (and answered) before the worker stops.
    while (this.inFlight || this.pendingAppends.length > 0) await (this.inFlight ?? this.flush());
    await this.worker?.close();
  }

  // ---- appending ------------------------------------------------------------------------------------------------

  /** Validates and serialises now (errors reject at once), then joins the group commit of this event-loop turn. */
  private append(appends: StreamAppend[]): Promise<AppendOutcome> {
    const seen = new Set<string>();
    let size = 0;
    const prepared = appends.map((a): PreparedAppend => {
      if (seen.has(a.streamId)) throw new Error(`Stream ${a.streamId} appears more than once in one append.`);
      seen.add(a.streamId);
      const events = a.events.map((e): PreparedEvent => {
        // JSON.stringify gives undefined (whatever its type says) for undefined.
        const data = (JSON.stringify(e.data) as string | undefined) ?? 'null';
        const metadata = (JSON.stringify(e.metadata) as string | undefined) ?? 'null';
        size += Buffer.byteLength(data, 'utf8') + Buffer.byteLength(metadata, 'utf8');
        return { id: e.id ?? randomUUID(), type: e.type, data, metadata };
      });
      return { streamId: a.streamId, expectedState: a.expectedState, events };
    });
    if (size > MAX_APPEND_SIZE) throw new MaxAppendSizeExceededError(size, MAX_APPEND_SIZE);
    return new Promise<AppendOutcome>((resolve, reject) => {
      this.pendingAppends.push({ appends: prepared, resolve, reject });
      this.scheduleFlush();
    });
  }

  /** The next group commit takes every append requested until the end of this event-loop turn. */
  private scheduleFlush(): void {
    if (this.flushScheduled || this.inFlight || this.pendingAppends.length === 0) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      if (!this.inFlight) void this.flush();
    });
  }

  /**
   * Group commit: every append waiting is written in one transaction with one fsync (groupCommit.ts), and each is
   * acknowledged (or refused alone, on a wrong expected revision) only once that commit returned: what was
   * acknowledged is on disk. Positions follow the order in which the appends were requested.
   */
  private flush(): Promise<void> {
    const group = this.pendingAppends;
    this.pendingAppends = [];
    const flushed = this.commitGroup(group).finally(() => {
      this.inFlight = null;
      // The appends requested during this commit form the next group, one turn later: the projector, woken by this
      // commit, takes the write lock first and applies what it brought, so these writers are answered without
      // waiting for the next fsync as well.
      if (this.pendingAppends.length > 0) setImmediate(() => this.scheduleFlush());
    });
    this.inFlight = flushed;
    return flushed;
  }

  private async commitGroup(group: PendingAppend[]): Promise<void> {
    let outcome: GroupOutcome;
    try {
      outcome = await this.committer(group.map((request) => request.appends));
    } catch (error) {
      // The transaction itself failed (lock timeout, I/O error, the worker died): nothing of the group was written.
      const failure = isBusy(error) ? new StoreBusyError(this.lockWaitMs, { cause: error }) : error;
      for (const request of group) request.reject(failure);
      return;
    }
    const { results, projectedThrough } = outcome;
    if (results.some((r) => 'outcome' in r && r.outcome.lastPosition !== undefined)) {
      // Projected already, the writers need nothing from the subscriptions: they are answered first, and the
      // subscriptions (the projector publishing to SSE streams) read the new events after that.
      if (projectedThrough !== undefined) setImmediate(() => this.notifyAll());
      else this.notifyAll();
    }
    results.forEach((result, i) =>
      'outcome' in result ? group[i].resolve(result.outcome) : group[i].reject(result.error),
    );
  }

  private head(): bigint {
    return this.headStmt.get()?.head ?? 0n;
  }

  // ---- reading $all -----------------------------------------------------------------------------------------------

  /** A statement reading event rows (raw, 64-bit integers as bigints), compiled once per connection and text. */
  private eventRows(sql: string): Statement<unknown[], EventRow> {
    return prepared<unknown[], EventRow>(this.db, sql).safeIntegers(true).raw(true);
  }

  private readAllStatement(backwards: boolean, prefixCount: number, limit: number): Statement<unknown[], EventRow> {
    const filter = prefixCount
      ? ` AND (${Array.from({ length: prefixCount }, () => 'substr(stream_id, 1, length(?)) = ?').join(' OR ')})`
      : '';
    return this.eventRows(
      `SELECT ${EVENT_COLUMNS} FROM es_events WHERE position ${backwards ? '<' : '>'} ?${filter} ` +
        `ORDER BY position ${backwards ? 'DESC' : 'ASC'} ${sqlLimit(limit)}`,
    );
  }

  /**
   * One forward page of $all after `cursor`, bounded by the head read just before it. Every position up to that
   * head is committed, so when the page is not full the caller has seen everything up to `scannedTo`, including
   * the events the prefix filter dropped.
   */
  private scanPage(cursor: bigint, prefixes: string[]): { rows: EventRow[]; scannedTo: bigint; full: boolean } {
    const head = this.head();
    if (head <= cursor) return { rows: [], scannedTo: cursor, full: false };
    const rows = this.readAllStatement(false, prefixes.length, PAGE_SIZE)
      .all(cursor, ...prefixParams(prefixes))
      .filter((row) => row[0] <= head);
    const full = rows.length === PAGE_SIZE;
    return { rows, scannedTo: full ? rows[rows.length - 1][0] : head, full };
  }

  // ---- subscriptions ----------------------------------------------------------------------------------------------

  private async *subscriptionItems(
    state: SubscriptionState,
    fromPosition: bigint,
    prefixes: string[],
  ): AsyncGenerator<SubscriptionItem> {
    let cursor = fromPosition;
    try {
      // Catch-up: page until a page comes back short.
      for (;;) {
        if (isClosed(state)) return;
        const page = this.scanPage(cursor, prefixes);
        for (const row of page.rows) {
          yield { kind: 'event', event: toRecordedEvent(row) };
          if (isClosed(state)) return;
        }
        cursor = page.scannedTo;
        if (!page.full) break;
      }
      yield { kind: 'caughtUp', position: cursor };
      // Live: scan; when there is nothing new, wait (registered synchronously after the empty scan, so no commit
      // can slip in between) for an in-process notification or the poll.
      for (;;) {
        if (isClosed(state)) return;
        const page = this.scanPage(cursor, prefixes);
        cursor = page.scannedTo;
        if (page.rows.length === 0) {
          await this.waitForCommit(state, cursor);
          continue;
        }
        for (const row of page.rows) {
          yield { kind: 'event', event: toRecordedEvent(row) };
          if (isClosed(state)) return;
        }
      }
    } finally {
      this.closeSubscription(state);
    }
  }

  private waitForCommit(state: SubscriptionState, seenHead: bigint): Promise<void> {
    return new Promise<void>((resolve) => {
      if (state.closed) return resolve();
      const waiter: Waiter = {
        seenHead,
        resolve: () => {
          this.waiters.delete(waiter);
          state.wake = undefined;
          resolve();
        },
      };
      state.wake = waiter.resolve;
      this.waiters.add(waiter);
      this.startPolling();
    });
  }

  private closeSubscription(state: SubscriptionState): void {
    state.closed = true;
    this.subscriptions.delete(state);
    state.wake?.();
    if (this.waiters.size === 0) this.stopPolling();
  }

  private notifyAll(): void {
    for (const waiter of [...this.waiters]) waiter.resolve();
  }

  private startPolling(): void {
    if (this.pollTimer || this.disposed) return;
    this.pollTimer = setInterval(() => this.poll(), POLL_INTERVAL_MS);
  }

  private stopPolling(): void {
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
  }

  /** Wakes the waiters that have not seen the current head: commits made through other connections. */
  private poll(): void {
    if (this.waiters.size === 0) return this.stopPolling();
    let head: bigint;
    try {
      head = this.head();
    } catch {
      // The connection was closed under us (shutdown order); stop quietly rather than crash the timer.
      return this.stopPolling();
    }
    for (const waiter of [...this.waiters]) if (head > waiter.seenHead) waiter.resolve();
  }
}

function normalisePrefixes(prefixes: string[] | undefined): string[] {
  return prefixes ? [...new Set(prefixes)] : [];
}

function prefixParams(prefixes: string[]): string[] {
  return prefixes.flatMap((p) => [p, p]);
}

function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    id: row[3],
    streamId: row[1],
    revision: row[2],
    position: row[0],
    type: row[4],
    data: JSON.parse(row[5]) as unknown,
    metadata: JSON.parse(row[6]) as EventMetadata,
  };
}
