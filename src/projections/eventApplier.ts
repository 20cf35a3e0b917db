import type { RecordedEvent } from '../ports/eventStore';
import { FencedOffError, type BatchedWrite, type LeaseFence, type ProjectorStore } from '../ports/readModel';
import type { BackgroundApply, LeaseToKeep } from '../ports/backgroundApply';
import type { ProjectionInAppend } from '../ports/projectionInAppend';
import { needsPlan, unplannedWriterOf, writerOf, type Projection } from './projection';

export interface EventApplierOptions {
  /** Where events touching a large subtree are applied, off the event loop (src/ports/backgroundApply.ts). */
  background?: BackgroundApply;
  /** Appends that project themselves in their transaction (src/ports/projectionInAppend.ts): skipped here. */
  inAppend?: ProjectionInAppend;
  /** The lease a background apply keeps renewing while it holds the write lock, when this process holds one. */
  leaseToKeep?: () => LeaseToKeep | undefined;
  /** A background apply renewed the lease at this time (epoch ms). */
  onLeaseRenewed?: (renewedAt: number) => void;
}

/**
 * How the projector writes events into the read models under `checkpoint`: runs of ordinary events as one batch (one
 * transaction, one checkpoint write), an event touching a large subtree alone in the background, the events an
 * append's transaction projected not at all. Every write carries the lease fence while there is one, and the read
 * model refuses it ({@link FencedOffError}) once another process took the lease over.
 */
export class EventApplier {
  private fence: LeaseFence | undefined;
  /** Whether a background apply is running: it holds SQLite's write lock and renews the lease itself meanwhile. */
  private inBackground = false;

  constructor(
    private readonly readModel: ProjectorStore,
    private readonly projection: Projection,
    private readonly checkpoint: string,
    private readonly options: EventApplierOptions = {},
  ) {}

  get applyingInBackground(): boolean {
    return this.inBackground;
  }

  /** The last position an append's own transaction projected (0 when appends do not project). */
  get projectedInAppendThrough(): bigint {
    return this.options.inAppend?.projectedThrough ?? 0n;
  }

  /** Appends project themselves under the fence while there is one (see {@link EventApplierOptions.inAppend}). */
  setFence(fence: LeaseFence | undefined): void {
    this.fence = fence;
    if (this.options.inAppend) this.options.inAppend.fence = fence;
  }

  /** Appends stop projecting themselves now; this applier's own fence stays until the work in flight ends. */
  stopAppendsProjecting(): void {
    if (this.options.inAppend) this.options.inAppend.fence = undefined;
  }

  /** Applies one event (a no-op when the checkpoint is already past it). */
  async applyEvent(event: RecordedEvent): Promise<boolean> {
    const { background } = this.options;
    if (background?.accepts(event)) return this.applyInBackground(background, event);
    const write = await writerOf(this.projection, event, this.readModel.projectionReads);
    return this.readModel.apply(this.checkpoint, event.position, write, this.fence);
  }

  /**
   * Applies consecutive events; `reached` hears of each run and each background event once the read models reflect
   * it. Runs of ordinary events go to the read model as one batch; an event touching a large subtree is applied
   * alone, in the background (off the event loop), between the runs around it. `onTry` is told the position of each
   * event a failure would be reported at.
   */
  async applyEvents(
    events: RecordedEvent[],
    onTry: (position: bigint) => void,
    reached: (events: RecordedEvent[]) => void,
  ): Promise<void> {
    const { background } = this.options;
    let run: RecordedEvent[] = [];
    for (const event of events) {
      if (this.projectedInAppend(event) || !background?.accepts(event)) {
        run.push(event);
        continue;
      }
      await this.applyRun(run, onTry, reached);
      run = [];
      onTry(event.position);
      await this.applyInBackground(background, event);
      reached([event]);
    }
    await this.applyRun(run, onTry, reached);
  }

  /**
   * One batch of ordinary events. When the batch fails, applies its events one by one, so that those before the
   * failing event are kept and the failure is reported at the event that caused it (`onTry` is told each event
   * tried).
   */
  private async applyRun(
    events: RecordedEvent[],
    onTry: (position: bigint) => void,
    reached: (events: RecordedEvent[]) => void,
  ): Promise<void> {
    if (events.length === 0) return;
    // Those an append's transaction projected are committed with their checkpoint: only to publish.
    const toApply = events.filter((event) => !this.projectedInAppend(event));
    if (toApply.length > 0) {
      onTry(toApply[0].position);
      try {
        await this.applyBatch(toApply);
      } catch (error) {
        if (toApply.length === 1 || error instanceof FencedOffError) throw error;
        for (const event of toApply) {
          onTry(event.position);
          await this.applyEvent(event);
        }
      }
    }
    reached(events);
  }

  /**
   * Applies consecutive events as one unit where the read model can (see {@link ProjectorStore.applyBatch}). An event
   * whose handler plans (reads first, src/projections/projection.ts) ends the unit before it: what is pending is
   * applied, then the event is planned on the state every earlier event left, and starts the next unit.
   */
  async applyBatch(events: RecordedEvent[]): Promise<number> {
    let applied = 0;
    let pending: BatchedWrite[] = [];
    for (const event of events) {
      if (needsPlan(this.projection, event)) {
        if (pending.length) applied += await this.readModel.applyBatch(this.checkpoint, pending, this.fence);
        pending = [
          { position: event.position, write: await writerOf(this.projection, event, this.readModel.projectionReads) },
        ];
      } else {
        pending.push({ position: event.position, write: unplannedWriterOf(this.projection, event) });
      }
    }
    if (pending.length) applied += await this.readModel.applyBatch(this.checkpoint, pending, this.fence);
    return applied;
  }

  private async applyInBackground(background: BackgroundApply, event: RecordedEvent): Promise<boolean> {
    const lease = this.options.leaseToKeep?.();
    this.inBackground = true;
    try {
      const { applied, leaseRenewedAt } = await background.apply(this.checkpoint, event, lease);
      if (lease && leaseRenewedAt !== undefined) this.options.onLeaseRenewed?.(leaseRenewedAt);
      return applied;
    } finally {
      this.inBackground = false;
    }
  }

  /** Whether an append's own transaction projected `event` (its writes and checkpoint are committed). */
  private projectedInAppend(event: RecordedEvent): boolean {
    return this.options.inAppend !== undefined && event.position <= this.options.inAppend.projectedThrough;
  }
}
