import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../../startWorkerThread';
import { deserializeError, type SerializedError } from '../../threadErrors';
import type { LeaseFence } from '../../../ports/readModel';
import type { GroupOutcome, GroupResult, PreparedAppend } from './groupCommit';

/**
 * The service's event appends, committed on a worker thread (appendWorkerThread.ts) with a connection of its own to
 * the SQLite file.
 *
 * A group commit with synchronous=FULL returns only after its fsync, and better-sqlite3 calls are synchronous: on the
 * event loop, every request of the process waited for the disk (~2–7 ms per commit on the development VM). On the
 * worker, the loop keeps parsing, reading, projecting and answering while the disk syncs. Nothing else changes: the
 * same transaction (groupCommit.ts) decides expectations and positions, and an append is acknowledged when the
 * worker reports its commit, that is after its fsync.
 */

/** A group sent to the worker. */
export interface CommitRequest {
  id: number;
  group: PreparedAppend[][];
  /** Project the group in its transaction, under this fence (only a projecting worker does). */
  fence?: LeaseFence;
}

export type WireResult =
  { outcome: Extract<GroupResult, { outcome: unknown }>['outcome'] } | { error: SerializedError };

/** The worker's answer: each request's fate, or the failure of the whole transaction (nothing written). */
export type CommitReply =
  { id: number; results: WireResult[]; projectedThrough?: bigint } | { id: number; failed: SerializedError };

export class AppendWorker {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly waiting = new Map<
    number,
    { resolve: (outcome: GroupOutcome) => void; reject: (error: Error) => void }
  >();

  /**
   * Starts the thread at once: its start-up (a connection, a few statements) overlaps the service's own.
   * `lockWaitMs`: the worker connection's busy timeout (how long a commit waits while another process writes).
   * `entry`: the thread's entry module, without extension (default: appendWorkerThread, which appends only; the
   * service's, src/cli/appendProjectingWorker.ts, also projects).
   */
  constructor(
    private readonly file: string,
    private readonly lockWaitMs: number,
    private readonly entry = path.join(__dirname, 'appendWorkerThread'),
  ) {
    this.ensureWorker();
  }

  /**
   * Commits `group` on the worker (projecting it under `fence`, when given and the worker projects); resolves once it
   * is durable (or rejects: then nothing of it was written).
   */
  commit(group: PreparedAppend[][], fence?: LeaseFence): Promise<GroupOutcome> {
    return new Promise<GroupOutcome>((resolve, reject) => {
      const id = this.nextId++;
      this.waiting.set(id, { resolve, reject });
      const worker = this.ensureWorker();
      // While a commit is under way the worker keeps the process alive (an idle one does not).
      worker.ref();
      const request: CommitRequest = fence ? { id, group, fence } : { id, group };
      worker.postMessage(request);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
    this.failAll(new Error('the append worker was stopped'));
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorkerThread(this.entry, __filename.endsWith('.js'), {
      file: this.file,
      lockWaitMs: this.lockWaitMs,
    });
    worker.on('message', (reply: CommitReply) => {
      const waiter = this.waiting.get(reply.id);
      if (!waiter) return;
      this.waiting.delete(reply.id);
      if (this.waiting.size === 0) worker.unref();
      if ('failed' in reply) waiter.reject(deserializeError(reply.failed));
      else {
        const results = reply.results.map((r): GroupResult =>
          'error' in r ? { error: deserializeError(r.error) } : r,
        );
        waiter.resolve(
          reply.projectedThrough === undefined ? { results } : { results, projectedThrough: reply.projectedThrough },
        );
      }
    });
    // A worker that dies fails the commit in flight (its transaction rolled back with its connection: nothing of it
    // was written, so the writers may retry); the next group starts a new one.
    const onGone = (error: Error) => {
      if (this.worker === worker) this.worker = null;
      this.failAll(error);
    };
    worker.on('error', onGone);
    worker.on('exit', (code) => onGone(new Error(`the append worker exited (code ${code})`)));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private failAll(error: Error): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const waiter of waiting) waiter.reject(error);
  }
}
