import type { ProjectionReads, ReadModelTx } from './projectionWrites';

/**
 * The projector-plumbing role: checkpoints, applying one event's (or a batch's) writes atomically with the checkpoint,
 * the leases that keep one projector per read model and fence its writes, reset and dump (rebuild, verify), dispose.
 * Only the projector, rebuild and verify hold it.
 */

/** Who holds a lease and until when (by the clock of whatever grants it: the SQLite host, the MongoDB server). */
export interface LeaseRecord {
  holder: string;
  expiresAt: Date;
  /**
   * The fencing token: a counter that grows by one every time the lease is taken while it was not the taker's live
   * lease (a first take, a take after a release or an expiry, a takeover from a holder known to be gone); renewals
   * keep it. Kept through a release, so it never goes back.
   */
  epoch: number;
}

/**
 * What a lease holder passes to {@link ProjectorStore.apply} so that the read model refuses its writes once another
 * holder
 * has taken the lease: the write goes ahead only while lease `lease` is still at `epoch`.
 */
export interface LeaseFence {
  lease: string;
  epoch: number;
}

/**
 * Raised by {@link ProjectorStore.apply} when the lease of its fence has moved to a newer epoch: nothing was written.
 */
export class FencedOffError extends Error {
  constructor(
    readonly fence: LeaseFence,
    readonly currentEpoch: number | null,
  ) {
    super(
      `Projection write refused: lease ${fence.lease} is at epoch ${currentEpoch ?? 'none'}, this holder's epoch is ${fence.epoch}.`,
    );
    this.name = 'FencedOffError';
  }
}

/**
 * Named leases stored next to the read models (SQLite: a row in the same file; MongoDB: a document in `rm_leases`),
 * so that every process sharing a read model agrees on who holds one. The projector lease
 * (src/projections/projector.ts) keeps a single projector per read model. Leases are not reset by `reset()`.
 */
export interface Leases {
  /**
   * Takes lease `name` for `holder` until `ttlMs` from now when it is free, expired, already `holder`'s, or held by
   * `replacing` (a holder known to be gone); resolves with whether `holder` has it now.
   */
  acquire(name: string, holder: string, ttlMs: number, replacing?: string): Promise<boolean>;
  /** Moves the expiry of `holder`'s lease to `ttlMs` from now; false when the lease is no longer `holder`'s. */
  renew(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Frees the lease if `holder` has it (a no-op otherwise). */
  release(name: string, holder: string): Promise<void>;
  /** The lease's holder, expiry and epoch, expired or not; null when nobody has taken it or it was released. */
  get(name: string): Promise<LeaseRecord | null>;
}

/** One event's writes in {@link ProjectorStore.applyBatch}. */
export interface BatchedWrite {
  position: bigint;
  write: (tx: ReadModelTx) => void;
}

/** The projector-plumbing role (see the top of this file). */
export interface ProjectorStore {
  /** What a projection handler's plan reads (see {@link ProjectionReads}). */
  projectionReads: ProjectionReads;
  /** Leases shared by every process on this read model (the single-projector lease). */
  leases: Leases;
  /** Position of the last event the named projection applied (0n when none). */
  checkpoint(projection: string): Promise<bigint>;
  /**
   * Applies one event's writes and moves the projection's checkpoint to `position`, atomically. Returns false
   * (and writes nothing) when the checkpoint is already at or past `position`: replays are no-ops. With a `fence`,
   * the lease's epoch is checked in the same transaction (SQLite: a row check; MongoDB: a conditional update of the
   * lease document) and the call rejects with {@link FencedOffError}, writing nothing, once it has moved on.
   */
  apply(projection: string, position: bigint, write: (tx: ReadModelTx) => void, fence?: LeaseFence): Promise<boolean>;
  /**
   * Applies consecutive events (positions strictly increasing) as {@link apply} would one after the other, and as
   * one unit where the adapter can: one transaction and one checkpoint write for the whole batch. Events at or
   * before the checkpoint are skipped. Resolves with the number of events applied. On a failure the checkpoint
   * never passes an event whose writes are not all in (SQLite and MongoDB on a replica set roll the whole batch
   * back; MongoDB without transactions keeps the events before the failing one). The `fence` is checked as in {@link apply}, once for the batch.
   */
  applyBatch(projection: string, events: BatchedWrite[], fence?: LeaseFence): Promise<number>;
  /** Empties every read model and checkpoint (the start of a rebuild). */
  reset(): Promise<void>;
  /** A canonical dump of every read model, for comparing a rebuild with the live state. */
  dump(): Promise<Record<string, unknown[]>>;
  dispose(): Promise<void>;
}
