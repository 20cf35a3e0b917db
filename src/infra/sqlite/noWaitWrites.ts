import type { SqliteDatabase } from './openDatabase';
import { StoreBusyError } from '../../ports/storeBusy';

/** Pauses between two attempts at the write lock, in ms (the last one repeats): short, so a gap is rarely missed. */
const RETRY_PAUSES_MS = [1, 2, 4, 8];

/**
 * Writes on the event loop's connection that never sleep in SQLite's busy handler.
 *
 * While another process writes to the file (a second instance, a tool, a seeder appending back to back), a write of
 * this process waits for SQLite's write lock. The busy handler waits by sleeping the calling thread — the event
 * loop — up to `busy_timeout` (5 s): no request was answered meanwhile, and a lease renewal waiting there could let
 * the lease run out. Here the write's synchronous part runs with a zero busy timeout: when the lock is taken it fails
 * at once with SQLITE_BUSY, having changed nothing (its transaction never began, or was rolled back), and is tried
 * again after a short asynchronous pause, until the connection's own busy timeout has passed; then the write fails
 * with a {@link StoreBusyError} (nothing written: the request that caused it is answered 503, to be retried).
 */
export class NoWaitWrites {
  private readonly timeoutMs: number;

  constructor(private readonly db: SqliteDatabase) {
    this.timeoutMs = db.pragma('busy_timeout', { simple: true }) as number;
  }

  /** Runs `write` now; when it fails on the write lock, again after pauses, until it passes or the timeout ends. */
  async run<T>(write: () => T | Promise<T>): Promise<T> {
    const began = Date.now();
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.attempt(write);
      } catch (error) {
        if (!isBusy(error)) throw error;
        if (Date.now() - began >= this.timeoutMs) throw new StoreBusyError(this.timeoutMs, { cause: error });
      }
      const pause = RETRY_PAUSES_MS[Math.min(attempt, RETRY_PAUSES_MS.length - 1)];
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /** The synchronous part of `write` with a zero busy timeout (what it runs after an await keeps the usual one). */
  attempt<T>(write: () => T | Promise<T>): T | Promise<T> {
    // Through `pragma` each time: SQLite applies a PRAGMA when it compiles it, so a prepared one run again does nothing.
    this.db.pragma('busy_timeout = 0');
    try {
      return write();
    } finally {
      this.db.pragma(`busy_timeout = ${this.timeoutMs}`);
    }
  }
}

/** SQLITE_BUSY and its extended codes (SQLITE_BUSY_SNAPSHOT, …): the lock was not had, nothing was written. */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
