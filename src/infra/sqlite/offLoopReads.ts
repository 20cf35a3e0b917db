import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../startWorkerThread';
import { deserializeError, type SerializedError } from '../threadErrors';

/** One SELECT and its bound values (structured-cloneable: strings, numbers, bigints, null). */
export interface ReadStatement {
  sql: string;
  args: unknown[];
}

export interface ReadRequest {
  id: number;
  statements: ReadStatement[];
}

export type ReadReply = { id: number; rows: unknown[][] } | { id: number; failed: SerializedError };

/**
 * Reads whose cost grows with the rows they scan, run on a worker thread with a read-only connection of its own to
 * the SQLite file (offLoopReadsThread.ts).
 *
 * better-sqlite3 runs a query synchronously: a page of a million children sorted on a key no index serves reads and
 * sorts every one of them, 3–4 s during which the event loop answered no one. Here only the thread that asked waits
 * for it; the loop goes on serving everyone else. The statements of one call run in one read transaction, so they see
 * one snapshot (a count and its page agree), and it is the latest committed state when the thread takes the call: a
 * request that follows an acknowledged write still sees it (the write's projection committed before its answer).
 *
 * One thread: the reads that come here are the rare expensive ones, and they queue behind each other, not in front of
 * the loop's work. It starts with the first read and does not keep the process alive when idle.
 */
export class OffLoopReads {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (rows: unknown[][]) => void; reject: (e: Error) => void }>();

  constructor(
    private readonly file: string,
    private readonly entry = path.join(__dirname, 'offLoopReadsThread'),
  ) {}

  /** Each statement's rows, read in one snapshot on the thread. */
  read(statements: ReadStatement[]): Promise<unknown[][]> {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.waiting.set(id, { resolve, reject });
      const worker = this.ensureWorker();
      worker.ref();
      worker.postMessage({ id, statements } satisfies ReadRequest);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.failAll(new Error('the reader thread was stopped'));
    if (worker) await worker.terminate();
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorkerThread(this.entry, __filename.endsWith('.js'), { file: this.file });
    worker.on('message', (reply: ReadReply) => {
      const waiter = this.waiting.get(reply.id);
      if (!waiter) return;
      this.waiting.delete(reply.id);
      if (this.waiting.size === 0) worker.unref();
      if ('failed' in reply) waiter.reject(deserializeError(reply.failed));
      else waiter.resolve(reply.rows);
    });
    // A thread that dies fails the reads it held (they wrote nothing: the caller may ask again); the next read starts
    // a new one.
    const onGone = (error: Error) => {
      if (this.worker === worker) this.worker = null;
      this.failAll(error);
    };
    worker.on('error', onGone);
    worker.on('exit', (code) => onGone(new Error(`the reader thread exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private failAll(error: Error): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const waiter of waiting) waiter.reject(error);
  }
}
