import { BehaviorSubject, Subject, filter, firstValueFrom, merge, timeout } from 'rxjs';
import type { Logger } from 'pino';
import type { EventStore, RecordedEvent, Subscription } from '../ports/eventStore';
import type { ReadModel } from '../ports/readModel';
import type { Projection } from './projection';
import type { DomainEvents } from '../bus/domainEvents';

export const READ_MODELS_CHECKPOINT = 'read-models';

export class ProjectionLagError extends Error {
  constructor(readonly position: bigint) {
    super(`The read models did not reach position ${position} in time.`);
    this.name = 'ProjectionLagError';
  }
}

/**
 * Runs the projections over an `$all` subscription from the stored checkpoint: strictly in order, one event per
 * read-model transaction. `position$` is the last position the read models reflect; writers wait on it
 * (read-your-writes) before they respond.
 */
export class Projector {
  readonly position$: BehaviorSubject<bigint>;
  private subscription: Subscription | null = null;
  private loop: Promise<void> | null = null;
  private failure: Error | null = null;
  /** Errors (never emits) when the projector stops on a failure, so that waiting writers fail at once. */
  private readonly failed$ = new Subject<never>();

  constructor(
    private readonly store: EventStore,
    private readonly readModel: ReadModel,
    private readonly projection: Projection,
    private readonly logger?: Logger,
    /** Receives every event once its read-model transaction committed (SSE subscribers, src/bus/domainEvents.ts). */
    private readonly domainEvents?: DomainEvents,
  ) {
    this.position$ = new BehaviorSubject<bigint>(0n);
  }

  async start(): Promise<void> {
    const from = await this.readModel.checkpoint(READ_MODELS_CHECKPOINT);
    this.position$.next(from);
    this.subscription = this.store.subscribeToAll({ fromPosition: from });
    const caughtUp = new Promise<void>((resolve) => {
      this.loop = this.run(this.subscription!, resolve);
    });
    await caughtUp;
    // A projection that fails during catch-up must stop the service from starting on stale read models.
    if (this.failure) throw this.failure;
  }

  /** The error that stopped the projector, if it stopped on one. */
  get failed(): Error | null {
    return this.failure;
  }

  private async run(subscription: Subscription, onCaughtUp: () => void): Promise<void> {
    try {
      for await (const item of subscription) {
        if (item.kind === 'caughtUp') {
          if (item.position > this.position$.value) this.position$.next(item.position);
          onCaughtUp();
          continue;
        }
        await this.applyEvent(item.event);
        this.position$.next(item.event.position);
        this.domainEvents?.publish(item.event);
      }
    } catch (error) {
      this.failure = error as Error;
      this.logger?.fatal({ err: error }, 'projector stopped: the read models no longer advance');
      this.failed$.error(error);
    } finally {
      onCaughtUp();
    }
  }

  /** Applies one event (a no-op when the checkpoint is already past it). */
  async applyEvent(event: RecordedEvent): Promise<boolean> {
    const handler = this.projection.handlers[event.type];
    return this.readModel.apply(READ_MODELS_CHECKPOINT, event.position, (tx) => handler?.(event, tx));
  }

  /**
   * Resolves once the read models reflect `position`; rejects with {@link ProjectionLagError} after `timeoutMs`, or
   * at once with the projector's failure if it stopped on one.
   */
  async waitFor(position: bigint, timeoutMs = 10_000): Promise<void> {
    if (this.position$.value >= position) return;
    if (this.failure) throw this.failure;
    try {
      await firstValueFrom(merge(this.position$.pipe(filter((p) => p >= position)), this.failed$).pipe(timeout(timeoutMs)));
    } catch {
      throw this.failure ?? new ProjectionLagError(position);
    }
  }

  async stop(): Promise<void> {
    await this.subscription?.unsubscribe();
    await this.loop;
    this.position$.complete();
  }
}
