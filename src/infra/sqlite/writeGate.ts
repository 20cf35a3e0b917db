import { isBusy, type NoWaitWrites } from './noWaitWrites';

/**
 * One writer at a time on the embedded SQLite file, without ever blocking the event loop.
 *
 * Bulk projection work (a 100k-folder copy or delete) runs in a worker thread on its own connection, as one write
 * transaction of several seconds (src/infra/readmodel/sqlite/bulkApply.ts). SQLite lets one connection write at a
 * time: a main-thread statement that writes meanwhile would wait in SQLite's busy handler, which sleeps the calling
 * thread — the whole event loop — for up to `busy_timeout`. So every main-thread writer on that file (event appends,
 * lease calls, notifications, purges) goes through {@link WriteGate.run}: while the worker holds the gate, writers
 * wait asynchronously (reads never wait: WAL readers see the last committed state), and once it is released they
 * run in arrival order.
 *
 * The event store's group commits hold the gate too while the append worker writes them
 * (src/infra/eventstore/sqlite/appendWorker.ts): the projector's batches, leases and notifications wait for the
 * commit's fsync asynchronously, and the loop keeps serving meanwhile.
 *
 * `run` checks the gate and starts `write` in the same synchronous step, so no bulk transaction can begin between
 * the check and the write (bulk work takes the gate on the main thread too, before it posts to the worker).
 */
export class WriteGate {
  /** Settles when the last bulk work taken so far ends; null when none is running or waiting. */
  private holder: Promise<void> | null = null;

  /**
   * `writes`: the event loop's connection, when the writes through this gate are its own: they then never sleep in
   * SQLite's busy handler while another process holds the write lock (noWaitWrites.ts). A write that has to try again
   * holds the gate until it passes: writers arriving meanwhile wait for it, as they wait for bulk work.
   */
  constructor(private readonly writes?: NoWaitWrites) {}

  /** Whether bulk work holds the gate (or waits for it) right now. */
  get held(): boolean {
    return this.holder !== null;
  }

  /** Runs `write` once no bulk work holds the gate (at once, in the same synchronous step, when none does). */
  async run<T>(write: () => T | Promise<T>): Promise<T> {
    while (this.holder) await this.holder;
    const writes = this.writes;
    if (!writes) return write();
    try {
      return await writes.attempt(write);
    } catch (error) {
      if (!isBusy(error)) throw error;
    }
    return this.hold(() => writes.run(write));
  }

  /**
   * Holds the gate while `work` runs: writers that arrive meanwhile wait. The gate is taken at once (synchronously);
   * bulk works are serialised among themselves, in call order.
   */
  hold<T>(work: () => Promise<T>): Promise<T> {
    const result = (this.holder ?? Promise.resolve()).then(work);
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    this.holder = settled;
    // Registered before any writer's wait on `settled`, so a writer woken by it sees the gate free (or the next
    // holder).
    void settled.then(() => {
      if (this.holder === settled) this.holder = null;
    });
    return result;
  }
}

/**
 * Makes the named async methods of `target` run through `gate`, in place (own properties shadowing the prototype's,
 * so other methods, and spies tests put on the instance, work as before). Used for the write methods of the event
 * store, leases and notification store of the SQLite file.
 */
export function gateWrites<T extends object>(target: T, methods: readonly (keyof T & string)[], gate: WriteGate): T {
  const writable = target as Record<string, unknown>;
  for (const name of methods) {
    const original = (writable[name] as (...args: unknown[]) => unknown).bind(target);
    writable[name] = (...args: unknown[]) => gate.run(() => original(...args));
  }
  return target;
}
