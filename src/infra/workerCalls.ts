import type { Worker } from 'node:worker_threads';

/** A reply of a worker thread: the id of the call it answers. */
export interface WorkerReply {
  id: number;
}

/**
 * Calls to a worker thread, each answered by one message carrying the call's id (the append worker, the reader
 * thread). The thread starts with the first call (or {@link start}), keeps the process alive only while a call is
 * under way, and a thread that dies fails the calls it held; the next call starts a new one.
 */
export class WorkerCalls<Reply extends WorkerReply, Result> {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (result: Result) => void; reject: (error: Error) => void }>();

  /**
   * `spawn` starts the thread; `settle` turns a reply into the call's result, or throws the error that fails it;
   * `name` names the thread in those errors.
   */
  constructor(private readonly o: { spawn: () => Worker; settle: (reply: Reply) => Result; name: string }) {}

  /** Starts the thread now rather than with the first call (its start-up then overlaps the caller's own). */
  start(): void {
    this.ensureWorker();
  }

  /**
   * Posts the message built for a new call id; resolves with the result of the reply to it. `transfer` moves those
   * buffers to the thread instead of copying them (they are unusable here afterwards).
   */
  call(message: (id: number) => unknown, transfer: ArrayBuffer[] = []): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      const id = this.nextId++;
      this.waiting.set(id, { resolve, reject });
      const worker = this.ensureWorker();
      worker.ref();
      worker.postMessage(message(id), transfer);
    });
  }

  /** Stops the thread; the calls under way fail. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.failAll(new Error(`the ${this.o.name} was stopped`));
    if (worker) await worker.terminate();
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = this.o.spawn();
    worker.on('message', (reply: Reply) => {
      const waiter = this.waiting.get(reply.id);
      if (!waiter) return;
      this.waiting.delete(reply.id);
      if (this.waiting.size === 0) worker.unref();
      let result: Result;
      try {
        result = this.o.settle(reply);
      } catch (error) {
        waiter.reject(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      waiter.resolve(result);
    });
    const onGone = (error: Error) => {
      if (this.worker === worker) this.worker = null;
      this.failAll(error);
    };
    worker.on('error', onGone);
    worker.on('exit', (code) => onGone(new Error(`the ${this.o.name} exited (code ${code})`)));
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
