import path from 'node:path';
import { startWorkerThread } from '../startWorkerThread';
import { WorkerCalls } from '../workerCalls';
import { deserializeError, type SerializedError } from '../threadErrors';

/** One SELECT and its bound values (structured-cloneable: strings, numbers, bigints, null). */
export interface ReadStatement {
  sql: string;
  args: unknown[];
  /** Rows as arrays of column values rather than objects ({@link readRows}). */
  raw?: boolean;
}

export interface ReadRequest {
  id: number;
  statements: ReadStatement[];
}

export type ReadReply = { id: number; rows: unknown[][] } | { id: number; failed: SerializedError };

/**
 * Reads whose cost grows with the rows they scan, run on a worker thread with a read-only connection of its own to
 * the SQLite file (src/workers/offLoopReadsThread.ts).
 *
 * better-sqlite3 runs a query synchronously: a page of a million children sorted on a key no index serves reads and
 * sorts every one of them, 5 s on the development VM during which the event loop answered no one. Here only the thread that asked waits
 * for it; the loop goes on serving everyone else. The statements of one call run in one read transaction, so they see
 * one snapshot (a count and its page agree), and it is the latest committed state when the thread takes the call: a
 * request that follows an acknowledged write still sees it (the write's projection committed before its answer).
 *
 * One thread: the reads that come here are the rare expensive ones, and they queue behind each other, not in front of
 * the loop's work. It starts with the first read and does not keep the process alive when idle.
 */
export class OffLoopReads {
  private readonly calls: WorkerCalls<ReadReply, unknown[][]>;

  constructor(file: string) {
    const entry = path.join(__dirname, '..', '..', 'workers', 'offLoopReadsThread');
    this.calls = new WorkerCalls({
      name: 'reader thread',
      spawn: () => startWorkerThread(entry, __filename.endsWith('.js'), { file }),
      settle: (reply) => {
        if ('failed' in reply) throw deserializeError(reply.failed);
        return reply.rows;
      },
    });
  }

  /** Each statement's rows, read in one snapshot on the thread. */
  read(statements: ReadStatement[]): Promise<unknown[][]> {
    return this.calls.call((id): ReadRequest => ({ id, statements }));
  }

  /** Stops the thread (the reads under way fail); a later read starts a new one. */
  close(): Promise<void> {
    return this.calls.close();
  }
}
