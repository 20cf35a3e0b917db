/**
 * Counts failures per key (a login, a client address) and makes a key wait after too many: once a key has failed
 * `freeFailures` times, each further failure locks it for `delayMs`, doubled per failure beyond the free ones, at most
 * `maxDelayMs`. A success clears its key. Memory is bounded: a key is forgotten a day after its last failure, and past
 * `maxEntries` keys the one that failed longest ago is dropped first (a Map keeps insertion order; a failure re-inserts
 * its key at the end).
 */
export interface ThrottleLimits {
  freeFailures: number;
  delayMs: number;
  maxDelayMs: number;
  /** Default {@link MAX_ENTRIES}. */
  maxEntries?: number;
}

/** About 100 bytes a key: some 10 MB at most. */
const MAX_ENTRIES = 100_000;
/** A key with no failure for this long starts afresh. */
export const FORGET_AFTER_MS = 24 * 60 * 60 * 1000;

interface Entry {
  failures: number;
  lastFailure: number;
  lockedUntil: number;
}

export class FailureThrottle {
  private readonly entries = new Map<string, Entry>();
  private readonly maxEntries: number;

  constructor(
    private readonly limits: ThrottleLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.maxEntries = limits.maxEntries ?? MAX_ENTRIES;
  }

  /** How long (ms) until every one of `keys` may try again; 0 when none is locked. */
  waitMs(keys: readonly string[]): number {
    const now = this.now();
    let wait = 0;
    for (const key of keys) {
      const entry = this.current(key, now);
      if (entry) wait = Math.max(wait, entry.lockedUntil - now);
    }
    return wait;
  }

  /** Records a failure of each key; locks those past their free failures. */
  failed(keys: readonly string[]): void {
    const now = this.now();
    for (const key of keys) {
      const failures = (this.current(key, now)?.failures ?? 0) + 1;
      const beyond = failures - this.limits.freeFailures;
      const delay = beyond < 0 ? 0 : Math.min(this.limits.delayMs * 2 ** Math.min(beyond, 40), this.limits.maxDelayMs);
      this.entries.delete(key);
      this.entries.set(key, { failures, lastFailure: now, lockedUntil: now + delay });
      if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    }
  }

  /** Clears a key after a success. */
  succeeded(key: string): void {
    this.entries.delete(key);
  }

  /** How many keys are held (for tests of the bound). */
  get size(): number {
    return this.entries.size;
  }

  private current(key: string, now: number): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && now - entry.lastFailure > FORGET_AFTER_MS) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }
}
