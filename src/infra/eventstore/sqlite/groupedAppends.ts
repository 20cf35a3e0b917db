import { randomUUID } from 'node:crypto';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { WriteGate } from '../../sqlite/writeGate';
import { MAX_APPEND_SIZE, MaxAppendSizeExceededError, type StreamAppend } from '../../../ports/eventStore';
import {
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

/** An append waiting for its group commit. */
interface PendingAppend {
  appends: PreparedAppend[];
  resolve: (outcome: AppendOutcome) => void;
  reject: (error: unknown) => void;
}

/** Where group commits are written: on this thread, or on the append worker's. Resolves once durable. */
type Committer = (group: PreparedAppend[][]) => Promise<GroupOutcome>;

export interface GroupedAppendOptions {
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

/**
 * The appends of the SQLite event store, committed in groups: every append requested in one event-loop turn is
 * written in one transaction with one fsync, here or on the append worker's thread. `onCommitted` is called after each
 * group that wrote events (it wakes the subscriptions).
 */
export class GroupedAppends {
  private readonly committer: Committer;
  /** How long a group commit waits for the write lock held by another connection before it fails (busy timeout). */
  private readonly lockWaitMs: number;
  private readonly worker: AppendWorker | undefined;
  /** Appends waiting for the next group commit. */
  private pendingAppends: PendingAppend[] = [];
  private flushScheduled = false;
  /** The group commit under way, if any: one at a time, so groups commit in the order they were formed. */
  private inFlight: Promise<void> | null = null;

  constructor(
    db: SqliteDatabase,
    options: GroupedAppendOptions,
    private readonly onCommitted: () => void,
  ) {
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
  }

  /** Waits until every append already requested is written (and answered), then stops the worker. */
  async close(): Promise<void> {
    while (this.inFlight || this.pendingAppends.length > 0) await (this.inFlight ?? this.flush());
    await this.worker?.close();
  }

  /** Validates and serialises now (errors reject at once), then joins the group commit of this event-loop turn. */
  append(appends: StreamAppend[]): Promise<AppendOutcome> {
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
      if (projectedThrough !== undefined) setImmediate(() => this.onCommitted());
      else this.onCommitted();
    }
    results.forEach((result, i) =>
      'outcome' in result ? group[i].resolve(result.outcome) : group[i].reject(result.error),
    );
  }
}
