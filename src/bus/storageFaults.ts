import type { StorageFault } from '../ports/storageFault';

/**
 * The last storage fault a write met (src/ports/storageFault.ts), until a write succeeds again: what `/readyz` reports
 * (src/http/health.ts). Writes that fail on one record it (src/http/apiRequests.ts); a write request that succeeds,
 * or the readiness probe's own write, clears it.
 */
export class StorageFaults {
  private last: (StorageFault & { since: string }) | undefined;

  /** The fault writes are failing on, with when it was first seen; undefined while writes succeed. */
  get current(): (StorageFault & { since: string }) | undefined {
    return this.last;
  }

  /** Records the fault (keeping when it was first seen while the code stays the same) and returns the record. */
  failed(fault: StorageFault): StorageFault & { since: string } {
    this.last = { ...fault, since: this.last?.code === fault.code ? this.last.since : new Date().toISOString() };
    return this.last;
  }

  succeeded(): void {
    this.last = undefined;
  }
}
