import type { LeaseFence } from './readModel';

/**
 * What the projector and the embedded event store share when appends are projected in their own transaction (the
 * embedded deployment: event log and read models in one SQLite file, src/workers/appendProjectingWorker.ts).
 *
 * Why: left to the projector, a write is committed (with its fsync), handed back to the event loop, read again from
 * the log and applied in a second transaction, and only then answered. Projected by the append's own transaction, it
 * is visible the moment its commit returns: one transaction, one hand-off, and none of its projection on the event
 * loop.
 *
 * The projector stays the authority on what is projected, and when:
 * - the append's transaction projects only while {@link fence} is set, that is while this process's projector holds
 *   the lease, and only under that fence (a lease taken over meanwhile makes it skip, as it fences the projector);
 * - it projects only when the read models already reflect every earlier event, and only events that need no plan
 *   and no background apply; the first other event ends what it projects, and the projector applies the rest;
 * - its projection is a savepoint of its own: if it fails, the append still commits, and the projector meets the
 *   event and reports the failure as it does any other.
 * The projector still reads every event from the log, publishes it to subscribers in order, and skips applying those
 * at or below {@link projectedThrough}, whose writes and checkpoint are committed already.
 *
 * Only a group of one request projects itself ({@link fenceFor}): a lone writer, whose wait it shortens by the
 * projector's wake-up and second transaction. A larger group means writers are arriving faster than the disk syncs;
 * there the projector, on the main thread, applies one group while the worker syncs the next, and that overlap serves
 * more writes than the worker projecting and syncing each group in turn (figures: docs/performance.md).
 */
export class ProjectionInAppend {
  /** The projector's lease fence while it holds the lease and projects; undefined otherwise (nothing is projected). */
  fence: LeaseFence | undefined;
  private through = 0n;

  /** The fence a group of `requests` append requests is projected under, or undefined: the projector applies it. */
  fenceFor(requests: number): LeaseFence | undefined {
    return requests === 1 ? this.fence : undefined;
  }

  /** The highest position an append's transaction projected: the read models reflect every event up to it. */
  get projectedThrough(): bigint {
    return this.through;
  }

  /** An append's commit projected every event up to `position`. */
  reached(position: bigint): void {
    if (position > this.through) this.through = position;
  }
}
