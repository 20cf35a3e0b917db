import { BehaviorSubject } from '../bus/rxjs';
import type { Logger } from 'pino';
import type { EventStore, RecordedEvent } from '../ports/eventStore';
import { FencedOffError, type ProjectorStore } from '../ports/readModel';
import type { Projection } from './projection';
import type { DomainEvents } from '../bus/domainEvents';
import { CheckpointWatcher } from './checkpointWatcher';
import { inBatches } from './inBatches';
import { holderStarted, holderStopped } from '../ports/holderIdentity';
import type { BackgroundApply } from '../ports/backgroundApply';
import type { ProjectionInAppend } from '../ports/projectionInAppend';
import { EventApplier } from './eventApplier';
import { ProjectionFailures, type ProjectionFailure } from './projectionFailure';
import { positionReached } from './positionReached';
import { ProjectorLease, leaseTimesOf, type ProjectorLeaseSettings } from './projectorLease';
import { ProjectionLagError, ProjectionStoppedError } from './projectorErrors';
import { TransitionQueue } from './transitionQueue';
import { followLog, type ActiveLoop } from './followLog';

/** The errors {@link Projector.waitFor} rejects with, where its callers look for them. */
export { ProjectionLagError, ProjectionStoppedError } from './projectorErrors';

export const READ_MODELS_CHECKPOINT = 'read-models';
/** The name of the lease that keeps one projector per read model (see `ProjectorLeaseSettings`, projectorLease.ts). */
export const PROJECTOR_LEASE = `projector:${READ_MODELS_CHECKPOINT}`;

export interface ProjectorOptions {
  logger?: Logger;
  /** Receives every event once the read models reflect it (SSE subscribers, src/bus/domainEvents.ts). */
  domainEvents?: DomainEvents;
  /** Without a lease the projector always projects (tests, tools); the service always runs with one. */
  lease?: ProjectorLeaseSettings;
  /** Where events touching a large subtree are applied, off the event loop (src/ports/backgroundApply.ts). */
  background?: BackgroundApply;
  /**
   * Shared with an event store whose appends project themselves in their transaction while this projector holds the
   * lease (src/ports/projectionInAppend.ts): the projector hands it the fence, and skips what it projected.
   */
  inAppend?: ProjectionInAppend;
}

/** `holder`: this process runs the projections; `standby`: another process does, this one follows the checkpoint. */
export type ProjectorRole = 'holder' | 'standby' | 'stopped';

/**
 * Most events applied in one read-model transaction. A batch holds the event loop while it applies (synchronously
 * on SQLite): 500 small events take a few milliseconds, well inside the 50 ms an event-loop step may take (the
 * event-loop rows of docs/performance.md).
 */
const MAX_BATCH = 500;

/**
 * Runs the projections over an `$all` subscription from the stored checkpoint: strictly in order, the events that
 * are already there in one read-model transaction with one checkpoint write (up to {@link MAX_BATCH}; a backlog in
 * large batches, live traffic in what each commit brought). `position$` is the last position the read models reflect as
 * far as this process has seen;
 * writers wait for their position (read-your-writes) before they respond, through {@link waitFor}.
 *
 * With a lease (the service), several processes may share one read model and only the lease holder projects:
 *  - holder: projects and renews the lease; `waitFor` resolves in-process as `position$` passes the position. When a
 *    renewal says the lease is someone else's, or renewals fail until too little of the lease would be left, it stops
 *    projecting (before the lease could expire) and becomes a standby. When a projection fails it steps down too,
 *    frees the lease, and tries again after a growing pause (the failure stays reported meanwhile).
 *  - standby: does not project. It tails the log and publishes each event to `domainEvents` once the read model's
 *    checkpoint has passed it, so that `position$` and SSE subscribers keep following; `waitFor` polls the checkpoint
 *    (src/projections/checkpointWatcher.ts). It tries to take the lease every `retryEveryMs` and, once it has it,
 *    projects on from where it had followed (events the old holder already applied are no-ops).
 *
 * This class keeps the roles and moves between them; the pieces it moves are beside it: how events are written
 * (eventApplier.ts), the lease calls (projectorLease.ts), the failure and its backoff (projectionFailure.ts), a
 * writer's wait (positionReached.ts), a standby's loop (followLog.ts) and the order of lease work (transitionQueue.ts).
 */
export class Projector {
  readonly position$: BehaviorSubject<bigint>;
  private currentRole: ProjectorRole = 'stopped';
  private active: ActiveLoop | null = null;
  private readonly failures: ProjectionFailures;
  private readonly logger?: Logger;
  private readonly domainEvents?: DomainEvents;
  private readonly lease?: ProjectorLease;
  private readonly watcher: CheckpointWatcher;
  private readonly applier: EventApplier;
  private readonly transitions: TransitionQueue;
  private stopping = false;

  constructor(
    private readonly store: EventStore,
    private readonly readModel: ProjectorStore,
    projection: Projection,
    options: ProjectorOptions = {},
  ) {
    this.position$ = new BehaviorSubject<bigint>(0n);
    this.logger = options.logger;
    this.domainEvents = options.domainEvents;
    this.failures = new ProjectionFailures(options.logger);
    this.transitions = new TransitionQueue((error) => {
      this.logger?.error({ err: error }, 'projector lease: unexpected error');
    });
    if (options.lease) {
      this.lease = new ProjectorLease(leaseTimesOf(options.lease, PROJECTOR_LEASE), readModel.leases, (holder) =>
        this.logger?.warn({ holder }, 'the projector lease holder is gone; taking the lease over'),
      );
    }
    this.applier = new EventApplier(readModel, projection, READ_MODELS_CHECKPOINT, {
      background: options.background,
      inAppend: options.inAppend,
      leaseToKeep: () => (this.lease && this.currentRole === 'holder' ? this.lease.toKeep : undefined),
      onLeaseRenewed: (renewedAt) => this.lease?.renewedAt(renewedAt),
    });
    this.watcher = new CheckpointWatcher(() => this.readModel.checkpoint(READ_MODELS_CHECKPOINT), {
      onAdvance: (checkpoint) => {
        // Another process got past the event that failed here: this process's failure no longer holds writers up.
        const failure = this.failures.current;
        if (failure && this.currentRole !== 'holder' && checkpoint >= failure.position) this.failures.clear();
      },
    });
  }

  /**
   * Starts from the read model's checkpoint. With the lease taken, resolves once the projections have caught up with
   * the log; if one fails meanwhile, resolves as a standby that reports the failure ({@link failure}) and retries
   * after a pause. Without the lease, resolves at once as a standby. Without a lease setting (tools, tests), resolves
   * once caught up and rejects on a failure.
   */
  async start(): Promise<void> {
    const from = await this.readModel.checkpoint(READ_MODELS_CHECKPOINT);
    this.position$.next(from);
    const lease = this.lease;
    if (!lease) {
      this.currentRole = 'holder';
      await this.project(from);
      return;
    }
    holderStarted(lease.holderId);
    const attempt = Date.now();
    let acquired: boolean;
    try {
      acquired = await lease.tryAcquire();
    } catch (error) {
      holderStopped(lease.holderId);
      throw error;
    }
    if (!acquired) {
      this.logger?.info(
        { holder: await lease.currentHolder() },
        'projector on standby: another process holds the lease',
      );
      this.becomeStandby(lease.retryEveryMs);
      return;
    }
    this.currentRole = 'holder';
    lease.takenAt(attempt);
    try {
      if (!(await this.takeFence())) {
        this.becomeStandby(lease.retryEveryMs);
        return;
      }
      // Renewals run on their own schedule from now on: a catch-up may take longer than the lease lives.
      this.schedule(lease.renewEveryMs);
      await this.project(from);
    } catch {
      // The service still starts and serves what the read models hold; the failure is reported (readiness, 503 on
      // writes, verify) and the projections are tried again after a growing pause, from where they stopped.
      await this.stepDown(this.failures.backoff(lease.retryEveryMs));
    }
  }

  /**
   * The error that stopped the projections in this process, until the read model gets past the event that failed
   * (projected here on a retry, or by another process).
   */
  get failed(): Error | null {
    return this.failures.current?.error ?? null;
  }

  /** {@link failed} with the position of the event that failed (what /readyz and the 503 answers report). */
  get stoppedOn(): ProjectionFailure | null {
    return this.failures.current;
  }

  /** Whether this process runs the projections (`holder`), follows another process (`standby`), or neither. */
  get role(): ProjectorRole {
    return this.currentRole;
  }

  /** This process's lease holder id (undefined without a lease). */
  get holderId(): string | undefined {
    return this.lease?.holderId;
  }

  /**
   * Applies one event (a no-op when the checkpoint is already past it). While this process holds the lease the write
   * carries the lease's epoch, and the read model refuses it ({@link FencedOffError}) once another process took over.
   */
  applyEvent(event: RecordedEvent): Promise<boolean> {
    return this.applier.applyEvent(event);
  }

  /** Applies consecutive events as one unit where the read model can ({@link EventApplier.applyBatch}). */
  applyBatch(events: RecordedEvent[]): Promise<number> {
    return this.applier.applyBatch(events);
  }

  /** The read models reflect these events now: move `position$` and publish them to subscribers. */
  private reached(events: RecordedEvent[]): void {
    this.position$.next(events[events.length - 1].position);
    for (const event of events) this.domainEvents?.publish(event);
  }

  /**
   * Resolves once the read models reflect `position`; rejects with {@link ProjectionLagError} after `timeoutMs`, or
   * at once with {@link ProjectionStoppedError} if the projections stopped on a failure in this process. The holder
   * waits in-process; a
   * standby polls the shared checkpoint.
   */
  async waitFor(position: bigint, timeoutMs = 10_000): Promise<void> {
    if (this.reflected >= position) return;
    this.throwIfStopped(position);
    const timeoutError = () => new ProjectionLagError(position);
    if (this.lease && this.currentRole === 'standby') {
      try {
        await this.watcher.until(position, { timeoutMs, timeoutError });
      } catch (error) {
        this.throwIfStopped(position);
        throw error instanceof ProjectionLagError ? error : new ProjectionLagError(position);
      }
      return;
    }
    for (;;) {
      try {
        await positionReached(this.position$, this.failures.failed$, position, { timeoutMs, timeoutError });
        return;
      } catch {
        this.throwIfStopped(position);
        // A large subtree event is being applied in the background: the projector is busy, not stuck. Telling the
        // writer to retry would have it repeat an operation that is about to complete (a second copy, say).
        if (!this.applier.applyingInBackground) throw new ProjectionLagError(position);
      }
    }
  }

  /** Refuses a wait while the projections are stopped by a failure in this process. */
  private throwIfStopped(position: bigint): void {
    const failure = this.failures.current;
    if (failure) throw new ProjectionStoppedError(position, failure.position, failure.error);
  }

  /** The last position the read models reflect as far as this process knows, published or projected by an append. */
  get reflected(): bigint {
    const published = this.position$.value;
    const inAppend = this.applier.projectedInAppendThrough;
    return inAppend > published ? inAppend : published;
  }

  /** The lease, on the paths that only run with a lease (holder and standby). */
  private leased(): ProjectorLease {
    if (!this.lease) throw new Error('The projector runs without a lease.');
    return this.lease;
  }

  /** Read through a call, so that a check after an await is not narrowed away by one before it. */
  private isStopping(): boolean {
    return this.stopping;
  }

  /** Stops projecting or following, and frees the lease if this process holds it. Safe to call twice. */
  async stop(): Promise<void> {
    this.stopping = true;
    // Appends stop projecting now; the projector's own fence stays until its work in flight ends.
    this.applier.stopAppendsProjecting();
    this.transitions.stop();
    // Ends a catch-up a transition may be waiting for, then lets that transition finish.
    await this.stopActive();
    await this.transitions.settled();
    await this.stopActive();
    if (this.lease && this.currentRole === 'holder') await this.releaseLease();
    if (this.lease) holderStopped(this.lease.holderId);
    this.currentRole = 'stopped';
    this.watcher.close();
    this.position$.complete();
  }

  // ---- projecting -------------------------------------------------------------------------------------------------

  /**
   * Subscribes from `from` and applies every event; resolves once caught up with the log, rejects when the
   * projections fail before that. A failure after that is handled by {@link onLiveFailure}.
   */
  private project(from: bigint): Promise<void> {
    const subscription = this.store.subscribeToAll({ fromPosition: from });
    let caughtUp = false;
    return new Promise<void>((resolve, reject) => {
      const loop = (async () => {
        // The event being tried (set by applyEvents' callback, so an object the catch below reads unnarrowed).
        const tried: { position: bigint | null } = { position: null };
        const onTry = (position: bigint) => (tried.position = position);
        const reached = (events: RecordedEvent[]) => this.reached(events);
        try {
          for await (const items of inBatches(subscription, MAX_BATCH)) {
            let events: RecordedEvent[] = [];
            for (const item of items) {
              if (item.kind === 'event') {
                events.push(item.event);
                continue;
              }
              await this.applier.applyEvents(events, onTry, reached);
              events = [];
              if (item.position > this.position$.value) this.position$.next(item.position);
              if (!caughtUp) {
                caughtUp = true;
                this.failures.caughtUp();
                resolve();
              }
            }
            await this.applier.applyEvents(events, onTry, reached);
          }
        } catch (error) {
          await subscription.unsubscribe().catch(() => undefined);
          if (error instanceof FencedOffError) {
            // Not a failure of the projections: another process holds the lease now and projects on.
            this.onFencedOff(error);
            return;
          }
          const failure = error as Error;
          this.failures.record(failure, tried.position ?? this.position$.value + 1n);
          if (!caughtUp) reject(failure);
          else this.onLiveFailure();
        } finally {
          // Unsubscribed (stop, step down) before catching up.
          resolve();
        }
      })();
      this.active = { subscription, loop };
    });
  }

  /** A projection failed while live: with a lease, step down and free it, and try again after a pause. */
  private onLiveFailure(): void {
    if (!this.lease || this.stopping) return;
    this.transitions.enqueue(async () => {
      if (this.currentRole !== 'holder' || this.stopping) return;
      await this.stepDown(this.failures.backoff(this.leased().retryEveryMs));
    });
  }

  /** A write was refused because the lease moved to a newer epoch: follow as a standby, asking again later. */
  private onFencedOff(error: FencedOffError): void {
    this.logger?.warn({ err: error }, 'projector fenced off: another process took the lease over; standing by');
    this.applier.setFence(undefined);
    if (!this.lease || this.stopping) return;
    this.transitions.enqueue(async () => {
      if (this.currentRole !== 'holder' || this.stopping) return;
      await this.stepDown(this.leased().retryEveryMs);
    });
  }

  // ---- following (standby) ----------------------------------------------------------------------------------------

  /** Tails the log from `position$` and publishes each event once the shared checkpoint has passed it. */
  private follow(): void {
    this.active = followLog(this.store, this.watcher, this.position$.value, {
      reached: (event) => this.reached([event]),
      failed: (error, subscription) => {
        // The next retry tick follows again (retryAcquire).
        if (this.active?.subscription === subscription) this.active = null;
        this.logger?.error({ err: error }, 'projector standby: following the log failed; following again shortly');
      },
    });
  }

  private becomeStandby(retryInMs: number): void {
    this.currentRole = 'standby';
    this.follow();
    this.schedule(retryInMs);
  }

  // ---- the lease --------------------------------------------------------------------------------------------------

  /** Reads the epoch of the lease just taken into the fence; false when the lease is someone else's again. */
  private async takeFence(): Promise<boolean> {
    const fence = await this.leased().fence();
    this.applier.setFence(fence);
    return fence !== undefined;
  }

  /** The next renewal (holder) or attempt to take the lease (standby), in `ms`. */
  private schedule(ms: number): void {
    this.transitions.schedule(ms, () => this.tick());
  }

  private async tick(): Promise<void> {
    if (this.currentRole === 'holder') await this.renew();
    else if (this.currentRole === 'standby') await this.retryAcquire();
  }

  private async renew(): Promise<void> {
    const lease = this.leased();
    // A background apply holds the write lock, so no other process can take the lease, and it renews the lease as
    // it commits (the applier reports it): a renewal now would only wait for that lock.
    if (this.applier.applyingInBackground) {
      this.schedule(lease.renewEveryMs);
      return;
    }
    const renewal = await lease.renew();
    if (renewal.kind === 'expiring') {
      this.logger?.error('could not renew the projector lease in time; stopping the projections');
      return this.stepDown(lease.retryEveryMs);
    }
    if (renewal.kind === 'unanswered') {
      this.logger?.warn({ err: renewal.error }, 'could not renew the projector lease; trying again');
      this.schedule(renewal.nextInMs);
      return;
    }
    if (this.stopping) return;
    if (renewal.kind === 'lost') {
      this.logger?.warn('the projector lease passed to another process; stopping the projections');
      return this.stepDown(lease.retryEveryMs);
    }
    this.schedule(renewal.nextInMs);
  }

  private async retryAcquire(): Promise<void> {
    const lease = this.leased();
    const attempt = Date.now();
    let acquired: boolean;
    try {
      acquired = await lease.tryAcquire();
    } catch (error) {
      this.logger?.warn({ err: error }, 'could not ask for the projector lease; trying again');
      this.schedule(lease.retryEveryMs);
      return;
    }
    if (this.stopping) {
      if (acquired) await this.releaseLease();
      return;
    }
    if (!acquired) {
      if (!this.active) this.follow();
      this.schedule(lease.retryEveryMs);
      return;
    }
    // Taking over: stop following, then project from where this process had followed to.
    await this.stopActive();
    if (this.isStopping()) return this.releaseLease();
    this.currentRole = 'holder';
    lease.takenAt(attempt);
    let fenced: boolean;
    try {
      fenced = await this.takeFence();
    } catch (error) {
      this.logger?.warn({ err: error }, 'could not read the projector lease epoch; trying again');
      return this.stepDown(lease.retryEveryMs);
    }
    if (!fenced) return this.stepDown(lease.retryEveryMs);
    this.logger?.info({ from: this.position$.value.toString() }, 'took the projector lease; projecting');
    this.schedule(lease.renewEveryMs);
    // Not awaited: renewals are transitions too, and must not wait for the end of a catch-up that may outlast the
    // lease. A failure before the catch-up ends is handled as a live one.
    this.project(this.position$.value).catch(() => {
      this.onLiveFailure();
    });
  }

  /** Stops projecting, frees the lease (best effort) and follows as a standby; retries after `retryInMs`. */
  private async stepDown(retryInMs: number): Promise<void> {
    await this.stopActive();
    this.applier.setFence(undefined);
    await this.releaseLease();
    if (this.stopping) return;
    this.becomeStandby(retryInMs);
  }

  private async releaseLease(): Promise<void> {
    try {
      await this.leased().release();
    } catch (error) {
      // It expires by itself.
      this.logger?.warn({ err: error }, 'could not release the projector lease');
    }
  }

  private async stopActive(): Promise<void> {
    const active = this.active;
    if (!active) return;
    this.active = null;
    active.abort?.abort();
    await active.subscription.unsubscribe();
    await active.loop;
  }
}
