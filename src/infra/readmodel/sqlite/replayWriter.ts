import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../../startWorkerThread';
import type { CreatedRows } from './creationTables';

/** One planned batch of a replay: its creations' rows and the checkpoint that commits with them. */
export interface PlannedBatch {
  kind: 'batch';
  projection: string;
  position: bigint;
  rows: CreatedRows | null;
}

/** What the writer thread is asked: a batch to commit, or the read-class counts of the tables (replayMode.ts). */
export type WriterRequest = PlannedBatch | { kind: 'readClasses' };

export type WriterReply = { ok: true } | { readClasses: unknown[][] } | { error: string };

/**
 * Batches sent and not yet committed, at most: one being written while the next waits, so that the writer never
 * idles while this thread plans, and the rows held in memory stay bounded.
 */
const MAX_IN_FLIGHT = 2;

/**
 * The second core of a replay (replay mode, sqliteReadModel.ts): batches of folder creations planned on the main
 * thread (reading and parsing the log, projecting, computing rows) are written and committed, each with its
 * checkpoint, by a worker thread on a connection of its own (src/workers/replayWriterThread.ts), while the main thread plans the
 * next batch. SQLite's inserts and commits were half of a replay's time, the rest was JavaScript: the two now overlap.
 *
 * The batches commit in the order sent, each in one transaction with its checkpoint, as on the main thread. After a
 * failure the thread commits nothing more (a later checkpoint would skip the failed batch's events) and every call
 * here reports the failure.
 */
export class ReplayWriter {
  /** Started by the first request: a replay that plans no batch (a small one, a test's) starts no thread. */
  private worker: Worker | null = null;
  private inFlight = 0;
  private failure: Error | null = null;
  private wake: (() => void) | null = null;
  private counted: unknown[][] | null = null;

  constructor(private readonly file: string) {}

  /** Whether the thread was started (a batch or a count was asked for). */
  get started(): boolean {
    return this.worker !== null;
  }

  /** No batch in flight: the tables hold every batch sent. */
  get idle(): boolean {
    return this.inFlight === 0;
  }

  /** Resolves when another batch may be sent. */
  async ready(): Promise<void> {
    while (this.inFlight >= MAX_IN_FLIGHT && !this.failure) await this.nextReply();
    this.throwIfFailed();
  }

  send(batch: Omit<PlannedBatch, 'kind'>): void {
    this.request({ kind: 'batch', ...batch });
  }

  /**
   * The read-class counts of the tables once every batch sent is committed (`COUNT_READ_CLASSES`), read on the
   * writer's connection: the main thread builds the rest of the derived state meanwhile.
   */
  async countReadClasses(): Promise<unknown[][]> {
    this.request({ kind: 'readClasses' });
    await this.drain();
    return this.takeCounted();
  }

  private takeCounted(): unknown[][] {
    const counted = this.counted;
    this.counted = null;
    if (!counted) throw new Error("The replay's writer thread did not count the read classes.");
    return counted;
  }

  private request(request: WriterRequest): void {
    this.throwIfFailed();
    const worker = (this.worker ??= this.start());
    if (this.inFlight++ === 0) worker.ref();
    worker.postMessage(request);
  }

  private start(): Worker {
    const worker = startWorkerThread(
      path.join(__dirname, '..', '..', '..', 'workers', 'replayWriterThread'),
      __filename.endsWith('.js'),
      {
        file: this.file,
      },
    );
    // Held only while requests are in flight: an idle writer keeps no process alive.
    worker.unref();
    worker.on('message', (reply: WriterReply) => {
      if ('error' in reply) this.failure ??= new Error(`The replay's writer thread failed: ${reply.error}`);
      if ('readClasses' in reply) this.counted = reply.readClasses;
      if (--this.inFlight === 0) worker.unref();
      this.settled();
    });
    worker.on('error', (error) => this.stopped(error));
    worker.on('exit', (code) => this.stopped(new Error(`The replay's writer thread exited (code ${code}).`)));
    return worker;
  }

  /** Resolves once every batch sent is committed. */
  async drain(): Promise<void> {
    while (this.inFlight > 0 && !this.failure) await this.nextReply();
    this.throwIfFailed();
  }

  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    worker.removeAllListeners('exit');
    await worker.terminate();
  }

  private nextReply(): Promise<void> {
    return new Promise((resolve) => (this.wake = resolve));
  }

  private settled(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private stopped(error: Error): void {
    this.failure ??= error;
    this.settled();
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }
}
