import type { Subscription as RxSubscription } from 'rxjs';
import { BehaviorSubject, Subject } from '../bus/rxjs';
import type { Logger } from 'pino';
import type { EventStore, RecordedEvent, Subscription } from '../ports/eventStore';
import { FencedOffError, type BatchedWrite, type LeaseFence, type ProjectorStore } from '../ports/readModel';
import { needsPlan, unplannedWriterOf, writerOf, type Projection } from './projection';
import type { DomainEvents } from '../bus/domainEvents';
import { CheckpointWatcher } from './checkpointWatcher';
import { inBatches } from './inBatches';
import { takeLease } from './leaseHolder';
import { holderStarted, holderStopped, newHolderId } from '../ports/holderIdentity';
import type { BackgroundApply } from '../ports/backgroundApply';
import type { ProjectionInAppend } from '../ports/projectionInAppend';
import { within } from '../ports/within';

export const READ_MODELS_CHECKPOINT = 'read-models';
/** The name of the lease that keeps one projector per read model (see {@link ProjectorLeaseSettings}). */
export const PROJECTOR_LEASE = `projector:${READ_MODELS_CHECKPOINT}`;

export class ProjectionLagError extends Error {
  constructor(readonly position: bigint) {
    super(`The read models did not reach position ${position} in time.`);
    this.name = 'ProjectionLagError';
  }
}

/**
 * The projections stopped on the event at `stoppedAt` (it threw `cause`), so the read models cannot reflect
 * `position` until that is fixed. `appended`: the caller's own write is at `position`, recorded and safe, only not
 * visible yet (the command runner says so, {@link afterAppend}); otherwise a command was waiting to read the read
 * models before deciding, and made no change.
 */
export class ProjectionStoppedError extends Error {
  constructor(
    readonly position: bigint,
    readonly stoppedAt: bigint,
    override readonly cause: Error,
    readonly appended = false,
  ) {
    super(`projection stopped at position ${stoppedAt}: ${cause.message}`);
    this.name = 'ProjectionStoppedError';
  }

  /** The same stop, for a write that was appended at `position`. */
  afterAppend(): ProjectionStoppedError {
    return new ProjectionStoppedError(this.position, this.stoppedAt, this.cause, true);
  }
}

/** Where and why the projections stopped in this process. */
export interface ProjectionFailure {
  error: Error;
  /** The position of the event that failed. */
  position: bigint;
}

/**
 * The single-projector lease (`readModel.leases`): only the process holding it runs the projections. It is renewed
 * every `renewEveryMs`; a standby tries to take it every `retryEveryMs`.
 */
export interface ProjectorLeaseSettings {
  ttlMs: number;
  /** Default: a fresh id naming this host and process (src/ports/holderIdentity.ts). */
  holderId?: string;
  /** Default: a third of the time to live. */
  renewEveryMs?: number;
  /** Default: a third of the time to live. */
  retryEveryMs?: number;
  /** Default: {@link PROJECTOR_LEASE}. */
  name?: string;
}

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

/** Longest pause between attempts to take the lease back after the projections failed in this process. */
const MAX_FAILURE_BACKOFF_MS = 60_000;

interface ActiveLoop {
  subscription: Subscription;
  loop: Promise<void>;
  /** Aborts a follower's wait for the checkpoint. */
  abort?: AbortController;
}

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
 */
export class Projector {
  readonly position$: BehaviorSubject<bigint>;
  private currentRole: ProjectorRole = 'stopped';
  private active: ActiveLoop | null = null;
  private failure: ProjectionFailure | null = null;
  /** Errors (never emits) when the projections fail, so that waiting writers fail at once; replaced after that. */
  private failed$ = new Subject<never>();
  private readonly logger?: Logger;
  private readonly domainEvents?: DomainEvents;
  private readonly lease?: Required<ProjectorLeaseSettings>;
  private readonly watcher: CheckpointWatcher;
  /** Lease work (renew, retry, take over, step down) runs one piece at a time, in this chain. */
  private transitions: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private stopping = false;
  /** Until when the lease is ours for sure: the start of the last successful take or renewal, plus the TTL. */
  private validUntil = 0;
  private failuresInARow = 0;
  /** The lease epoch this process projects under while it is the holder: every write carries it (fencing). */
  private fence: LeaseFence | undefined;
  private readonly background?: BackgroundApply;
  private readonly inAppend?: ProjectionInAppend;
  /** Whether a background apply is running: it holds SQLite's write lock and renews the lease itself meanwhile. */
  private applyingInBackground = false;

  constructor(
    private readonly store: EventStore,
    private readonly readModel: ProjectorStore,
    private readonly projection: Projection,
    options: ProjectorOptions = {},
  ) {
    this.position$ = new BehaviorSubject<bigint>(0n);
    this.logger = options.logger;
    this.domainEvents = options.domainEvents;
    this.background = options.background;
    this.inAppend = options.inAppend;
    if (options.lease) {
      const { ttlMs } = options.lease;
      this.lease = {
        ttlMs,
        holderId: options.lease.holderId ?? newHolderId(),
        renewEveryMs: options.lease.renewEveryMs ?? Math.max(1, Math.floor(ttlMs / 3)),
        retryEveryMs: options.lease.retryEveryMs ?? Math.max(1, Math.floor(ttlMs / 3)),
        name: options.lease.name ?? PROJECTOR_LEASE,
      };
    }
    this.watcher = new CheckpointWatcher(() => this.readModel.checkpoint(READ_MODELS_CHECKPOINT), {
      onAdvance: (checkpoint) => {
        // Another process got past the event that failed here: this process's failure no longer holds writers up.
        if (this.failure && this.currentRole !== 'holder' && checkpoint >= this.failure.position) this.clearFailure();
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
      acquired = await this.tryAcquire();
    } catch (error) {
      holderStopped(lease.holderId);
      throw error;
    }
    if (!acquired) {
      this.logger?.info(
        { holder: (await this.readModel.leases.get(lease.name))?.holder },
        'projector on standby: another process holds the lease',
      );
      this.becomeStandby(lease.retryEveryMs);
      return;
    }
    this.currentRole = 'holder';
    this.validUntil = attempt + lease.ttlMs;
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
      this.failuresInARow += 1;
      await this.stepDown(this.failureBackoff());
    }
  }

  /**
   * The error that stopped the projections in this process, until the read model gets past the event that failed
   * (projected here on a retry, or by another process).
   */
  get failed(): Error | null {
    return this.failure?.error ?? null;
  }

  /** {@link failed} with the position of the event that failed (what /readyz and the 503 answers report). */
  get stoppedOn(): ProjectionFailure | null {
    return this.failure;
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
  async applyEvent(event: RecordedEvent): Promise<boolean> {
    if (this.background?.accepts(event)) return this.applyInBackground(this.background, event);
    const write = await writerOf(this.projection, event, this.readModel.projectionReads);
    return this.readModel.apply(READ_MODELS_CHECKPOINT, event.position, write, this.fence);
  }

  /**
   * Applies consecutive events, then moves `position$` and publishes them. Runs of ordinary events go to the read
   * model as one batch (one transaction, one checkpoint write); an event touching a large subtree is applied alone,
   * in the background (off the event loop), between the runs around it.
   */
  private async applyEvents(events: RecordedEvent[], onEvent: (position: bigint) => void): Promise<void> {
    let run: RecordedEvent[] = [];
    for (const event of events) {
      if (this.projectedInAppend(event) || !this.background?.accepts(event)) {
        run.push(event);
        continue;
      }
      await this.applyRun(run, onEvent);
      run = [];
      onEvent(event.position);
      await this.applyInBackground(this.background, event);
      this.reached([event]);
    }
    await this.applyRun(run, onEvent);
  }

  /**
   * One batch of ordinary events. When the batch fails, applies its events one by one, so that those before the
   * failing event are kept and the failure is reported at the event that caused it (`onEvent` is told each event
   * tried).
   */
  private async applyRun(events: RecordedEvent[], onEvent: (position: bigint) => void): Promise<void> {
    if (events.length === 0) return;
    // Those an append's transaction projected are committed with their checkpoint: only to publish.
    const toApply = events.filter((event) => !this.projectedInAppend(event));
    if (toApply.length > 0) {
      onEvent(toApply[0].position);
      try {
        await this.applyBatch(toApply);
      } catch (error) {
        if (toApply.length === 1 || error instanceof FencedOffError) throw error;
        for (const event of toApply) {
          onEvent(event.position);
          await this.applyEvent(event);
        }
      }
    }
    this.reached(events);
  }

  /** The read models reflect these events now: move `position$` and publish them to subscribers. */
  private reached(events: RecordedEvent[]): void {
    this.position$.next(events[events.length - 1].position);
    for (const event of events) this.domainEvents?.publish(event);
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
        if (pending.length) applied += await this.readModel.applyBatch(READ_MODELS_CHECKPOINT, pending, this.fence);
        pending = [
          { position: event.position, write: await writerOf(this.projection, event, this.readModel.projectionReads) },
        ];
      } else {
        pending.push({ position: event.position, write: unplannedWriterOf(this.projection, event) });
      }
    }
    if (pending.length) applied += await this.readModel.applyBatch(READ_MODELS_CHECKPOINT, pending, this.fence);
    return applied;
  }

  private async applyInBackground(background: BackgroundApply, event: RecordedEvent): Promise<boolean> {
    const lease =
      this.lease && this.currentRole === 'holder'
        ? { name: this.lease.name, holderId: this.lease.holderId, ttlMs: this.lease.ttlMs }
        : undefined;
    this.applyingInBackground = true;
    try {
      const { applied, leaseRenewedAt } = await background.apply(READ_MODELS_CHECKPOINT, event, lease);
      if (lease && leaseRenewedAt !== undefined)
        this.validUntil = Math.max(this.validUntil, leaseRenewedAt + lease.ttlMs);
      return applied;
    } finally {
      this.applyingInBackground = false;
    }
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
    if (this.lease && this.currentRole === 'standby') {
      try {
        await this.watcher.until(position, { timeoutMs, timeoutError: () => new ProjectionLagError(position) });
      } catch (error) {
        this.throwIfStopped(position);
        throw error instanceof ProjectionLagError ? error : new ProjectionLagError(position);
      }
      return;
    }
    for (;;) {
      try {
        await this.positionReached(position, timeoutMs);
        return;
      } catch {
        this.throwIfStopped(position);
        // A large subtree event is being applied in the background: the projector is busy, not stuck. Telling the
        // writer to retry would have it repeat an operation that is about to complete (a second copy, say).
        if (!this.applyingInBackground) throw new ProjectionLagError(position);
      }
    }
  }

  /**
   * Resolves once `position$` reaches `position`; rejects when the projections fail (`failed$` errors) or after
   * `timeoutMs`. Two plain subscriptions and a timer: every write waits here, and the operator chain it replaced
   * (merge, filter, timeout, firstValueFrom) built a pipeline of subscribers per wait.
   */
  private positionReached(position: bigint, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const subscriptions: RxSubscription[] = [];
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        for (const subscription of subscriptions) subscription.unsubscribe();
        outcome();
      };
      // A subject may answer while it is being subscribed to (position$ holds its value, an errored failed$ errors).
      const track = (subscription: RxSubscription) => {
        if (settled) subscription.unsubscribe();
        else subscriptions.push(subscription);
      };
      const timer = setTimeout(() => settle(() => reject(new ProjectionLagError(position))), timeoutMs);
      track(this.failed$.subscribe({ error: (error: Error) => settle(() => reject(error)) }));
      track(this.position$.subscribe((reachedPosition) => reachedPosition >= position && settle(resolve)));
    });
  }

  /** Refuses a wait while the projections are stopped by a failure in this process. */
  private throwIfStopped(position: bigint): void {
    if (this.failure) throw new ProjectionStoppedError(position, this.failure.position, this.failure.error);
  }

  /** Appends project themselves under the fence while there is one (see {@link ProjectorOptions.inAppend}). */
  private setFence(fence: LeaseFence | undefined): void {
    this.fence = fence;
    if (this.inAppend) this.inAppend.fence = fence;
  }

  /** Whether an append's own transaction projected `event` (its writes and checkpoint are committed). */
  private projectedInAppend(event: RecordedEvent): boolean {
    return this.inAppend !== undefined && event.position <= this.inAppend.projectedThrough;
  }

  /** The last position the read models reflect as far as this process knows, published or projected by an append. */
  get reflected(): bigint {
    const published = this.position$.value;
    const inAppend = this.inAppend?.projectedThrough ?? 0n;
    return inAppend > published ? inAppend : published;
  }

  /** The lease settings, on the paths that only run with a lease (holder and standby). */
  private leased(): Required<ProjectorLeaseSettings> {
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
    if (this.inAppend) this.inAppend.fence = undefined;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // Ends a catch-up a transition may be waiting for, then lets that transition finish.
    await this.stopActive();
    await this.transitions;
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
        try {
          for await (const items of inBatches(subscription, MAX_BATCH)) {
            let events: RecordedEvent[] = [];
            for (const item of items) {
              if (item.kind === 'event') {
                events.push(item.event);
                continue;
              }
              await this.applyEvents(events, (position) => (tried.position = position));
              events = [];
              if (item.position > this.position$.value) this.position$.next(item.position);
              if (!caughtUp) {
                caughtUp = true;
                this.caughtUp();
                resolve();
              }
            }
            await this.applyEvents(events, (position) => (tried.position = position));
          }
        } catch (error) {
          await subscription.unsubscribe().catch(() => undefined);
          if (error instanceof FencedOffError) {
            // Not a failure of the projections: another process holds the lease now and projects on.
            this.onFencedOff(error);
            return;
          }
          const failure = error as Error;
          this.recordFailure(failure, tried.position ?? this.position$.value + 1n);
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

  private caughtUp(): void {
    if (this.failure) this.clearFailure();
    this.failuresInARow = 0;
  }

  private recordFailure(error: Error, position: bigint): void {
    this.failure = { error, position };
    this.logger?.fatal(
      { err: error, position: position.toString() },
      'projector stopped: the read models no longer advance',
    );
    const failed$ = this.failed$;
    this.failed$ = new Subject<never>();
    failed$.error(error);
  }

  private clearFailure(): void {
    this.logger?.info('the read models advance again');
    this.failure = null;
  }

  /** A projection failed while live: with a lease, step down and free it, and try again after a pause. */
  private onLiveFailure(): void {
    if (!this.lease || this.stopping) return;
    this.enqueue(async () => {
      if (this.currentRole !== 'holder' || this.stopping) return;
      this.failuresInARow += 1;
      await this.stepDown(this.failureBackoff());
    });
  }

  /** A write was refused because the lease moved to a newer epoch: follow as a standby, asking again later. */
  private onFencedOff(error: FencedOffError): void {
    this.logger?.warn({ err: error }, 'projector fenced off: another process took the lease over; standing by');
    this.setFence(undefined);
    if (!this.lease || this.stopping) return;
    this.enqueue(async () => {
      if (this.currentRole !== 'holder' || this.stopping) return;
      await this.stepDown(this.leased().retryEveryMs);
    });
  }

  private failureBackoff(): number {
    return Math.min(this.leased().retryEveryMs * 2 ** Math.max(0, this.failuresInARow - 1), MAX_FAILURE_BACKOFF_MS);
  }

  // ---- following (standby) ----------------------------------------------------------------------------------------

  /** Tails the log from `position$` and publishes each event once the shared checkpoint has passed it. */
  private follow(): void {
    const subscription = this.store.subscribeToAll({ fromPosition: this.position$.value });
    const abort = new AbortController();
    const loop = (async () => {
      try {
        for await (const item of subscription) {
          if (item.kind === 'caughtUp') continue;
          await this.watcher.until(item.event.position, { signal: abort.signal });
          this.position$.next(item.event.position);
          this.domainEvents?.publish(item.event);
        }
      } catch (error) {
        if (abort.signal.aborted) return;
        await subscription.unsubscribe().catch(() => undefined);
        // The next retry tick follows again (retryAcquire).
        if (this.active?.subscription === subscription) this.active = null;
        this.logger?.error({ err: error }, 'projector standby: following the log failed; following again shortly');
      }
    })();
    this.active = { subscription, loop, abort };
  }

  private becomeStandby(retryInMs: number): void {
    this.currentRole = 'standby';
    this.follow();
    this.schedule(retryInMs);
  }

  // ---- the lease --------------------------------------------------------------------------------------------------

  /** Takes the lease if it is free, expired or ours, or if its holder is known to be gone. */
  private async tryAcquire(): Promise<boolean> {
    const { name, holderId, ttlMs } = this.leased();
    return takeLease(this.readModel.leases, name, holderId, ttlMs, (holder) =>
      this.logger?.warn({ holder }, 'the projector lease holder is gone; taking the lease over'),
    );
  }

  /**
   * Reads the epoch of the lease just taken, for the fence every projection write carries. False when the lease is
   * already someone else's again (it expired and was taken in between): this process must not project.
   */
  private async takeFence(): Promise<boolean> {
    const { name, holderId } = this.leased();
    const current = await this.readModel.leases.get(name);
    if (current?.holder !== holderId) {
      this.setFence(undefined);
      return false;
    }
    this.setFence({ lease: name, epoch: current.epoch });
    return true;
  }

  private schedule(ms: number): void {
    if (this.stopping) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.enqueue(() => this.tick());
    }, ms);
    this.timer.unref();
  }

  private enqueue(work: () => Promise<void>): void {
    const run = async () => {
      if (!this.stopping) await work();
    };
    this.transitions = this.transitions.then(run).catch((error: unknown) => {
      this.logger?.error({ err: error }, 'projector lease: unexpected error');
    });
  }

  private async tick(): Promise<void> {
    if (this.currentRole === 'holder') await this.renew();
    else if (this.currentRole === 'standby') await this.retryAcquire();
  }

  private async renew(): Promise<void> {
    const { name, holderId, ttlMs, renewEveryMs } = this.leased();
    const callTimeoutMs = Math.max(1, Math.floor(renewEveryMs / 2));
    // A background apply holds the write lock, so no other process can take the lease, and it renews the lease as
    // it commits (applyInBackground moves validUntil): a renewal now would only wait for that lock.
    if (this.applyingInBackground) {
      this.schedule(renewEveryMs);
      return;
    }
    // Too little of the lease left to risk another attempt: stop before it could expire under a live projector.
    if (Date.now() + 2 * callTimeoutMs >= this.validUntil) {
      this.logger?.error('could not renew the projector lease in time; stopping the projections');
      return this.stepDown(this.leased().retryEveryMs);
    }
    const attempt = Date.now();
    let renewed: boolean;
    try {
      renewed = await within(this.readModel.leases.renew(name, holderId, ttlMs), callTimeoutMs, 'the lease renewal');
    } catch (error) {
      this.logger?.warn({ err: error }, 'could not renew the projector lease; trying again');
      this.schedule(callTimeoutMs);
      return;
    }
    if (this.stopping) return;
    if (!renewed) {
      this.logger?.warn('the projector lease passed to another process; stopping the projections');
      return this.stepDown(this.leased().retryEveryMs);
    }
    this.validUntil = attempt + ttlMs;
    // Counted from the attempt, not from its answer: a renewal that waited long (another process holding SQLite's
    // write lock) must not push the next one so late that too little of the lease would be left for it.
    this.schedule(Math.max(0, attempt + renewEveryMs - Date.now()));
  }

  private async retryAcquire(): Promise<void> {
    const lease = this.leased();
    const attempt = Date.now();
    let acquired: boolean;
    try {
      acquired = await this.tryAcquire();
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
    this.validUntil = attempt + lease.ttlMs;
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
    this.setFence(undefined);
    await this.releaseLease();
    if (this.stopping) return;
    this.becomeStandby(retryInMs);
  }

  private async releaseLease(): Promise<void> {
    const { name, holderId, renewEveryMs } = this.leased();
    try {
      await within(this.readModel.leases.release(name, holderId), renewEveryMs, 'the lease release');
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
