import type { RecordedEvent } from './eventStore';

/** The projector lease a background apply renews inside its own transaction (see {@link BackgroundApply}). */
export interface LeaseToKeep {
  name: string;
  holderId: string;
  ttlMs: number;
}

export interface BackgroundApplyResult {
  /** Whether the event was applied (false: the checkpoint was already past it). */
  applied: boolean;
  /** When the lease was last renewed inside the transaction (epoch ms); absent without a lease. */
  leaseRenewedAt?: number;
}

/**
 * Applies the events that touch a whole large subtree (copy, delete, empty, recursive access, collection delete)
 * somewhere the event loop does not wait on: the embedded read model does it in a worker thread on its own SQLite
 * connection (src/infra/readmodel/sqlite/bulkApply.ts). The event's writes and its checkpoint still commit in one
 * transaction, so readers and a `kill -9` see the operation whole or not at all.
 *
 * With `lease`, the transaction renews the projector lease as its first statement (failing if another process holds
 * it now) and again just before it commits: while the transaction holds SQLite's write lock no other process can take
 * the lease, so the lease is kept however long the work takes, without the timer-driven renewal (which would have to
 * wait for that lock).
 */
export interface BackgroundApply {
  /** Whether `event` is large enough to be worth applying in the background. */
  accepts(event: RecordedEvent): boolean;
  apply(checkpoint: string, event: RecordedEvent, lease?: LeaseToKeep): Promise<BackgroundApplyResult>;
  close(): Promise<void>;
}
