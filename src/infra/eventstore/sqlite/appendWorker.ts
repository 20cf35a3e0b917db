import path from 'node:path';
import { startWorkerThread } from '../../startWorkerThread';
import { WorkerCalls } from '../../workerCalls';
import { deserializeError, type SerializedError } from '../../threadErrors';
import type { LeaseFence } from '../../../ports/readModel';
import type { GroupOutcome, GroupResult, PreparedAppend } from './groupCommit';

/**
 * The service's event appends, committed on a worker thread (src/workers/appendWorkerThread.ts) with a connection of its own to
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
  private readonly calls: WorkerCalls<CommitReply, GroupOutcome>;

  /**
   * Starts the thread at once: its start-up (a connection, a few statements) overlaps the service's own.
   * `lockWaitMs`: the worker connection's busy timeout (how long a commit waits while another process writes).
   * `entry`: the thread's entry module, without extension (default: src/workers/appendWorkerThread.ts, which appends only; the
   * service's, src/workers/appendProjectingWorker.ts, also projects).
   *
   * A worker that dies fails the commit in flight (its transaction rolled back with its connection: nothing of it was
   * written, so the writers may retry); the next group starts a new one.
   */
  constructor(
    file: string,
    lockWaitMs: number,
    entry = path.join(__dirname, '..', '..', '..', 'workers', 'appendWorkerThread'),
  ) {
    this.calls = new WorkerCalls({
      name: 'append worker',
      spawn: () => startWorkerThread(entry, __filename.endsWith('.js'), { file, lockWaitMs }),
      settle: outcomeOf,
    });
    this.calls.start();
  }

  /**
   * Commits `group` on the worker (projecting it under `fence`, when given and the worker projects); resolves once it
   * is durable (or rejects: then nothing of it was written).
   */
  commit(group: PreparedAppend[][], fence?: LeaseFence): Promise<GroupOutcome> {
    return this.calls.call((id): CommitRequest => (fence ? { id, group, fence } : { id, group }));
  }

  close(): Promise<void> {
    return this.calls.close();
  }
}

/** A group's outcome from the worker's reply; throws when the whole transaction failed. */
function outcomeOf(reply: CommitReply): GroupOutcome {
  if ('failed' in reply) throw deserializeError(reply.failed);
  const results = reply.results.map((r): GroupResult => ('error' in r ? { error: deserializeError(r.error) } : r));
  return reply.projectedThrough === undefined ? { results } : { results, projectedThrough: reply.projectedThrough };
}
