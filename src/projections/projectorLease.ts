import type { LeaseFence, Leases } from '../ports/readModel';
import type { LeaseToKeep } from '../ports/backgroundApply';
import { newHolderId } from '../ports/holderIdentity';
import { within } from '../ports/within';
import { takeLease } from './leaseHolder';

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
  /** Default: `PROJECTOR_LEASE` (projector.ts). */
  name?: string;
}

/** The projector lease's settings, defaults resolved ({@link leaseTimesOf}). */
export interface LeaseTimes {
  name: string;
  holderId: string;
  ttlMs: number;
  renewEveryMs: number;
  retryEveryMs: number;
}

/** The settings with their defaults: a fresh holder id, renewals and retries every third of the time to live. */
export function leaseTimesOf(settings: ProjectorLeaseSettings, defaultName: string): LeaseTimes {
  const { ttlMs } = settings;
  return {
    ttlMs,
    holderId: settings.holderId ?? newHolderId(),
    renewEveryMs: settings.renewEveryMs ?? Math.max(1, Math.floor(ttlMs / 3)),
    retryEveryMs: settings.retryEveryMs ?? Math.max(1, Math.floor(ttlMs / 3)),
    name: settings.name ?? defaultName,
  };
}

/** What one renewal found, and when to renew next where there is a next time. */
export type Renewal =
  | { kind: 'renewed'; nextInMs: number }
  /** The store did not answer in time (or failed): ask again after `nextInMs`. */
  | { kind: 'unanswered'; nextInMs: number; error: unknown }
  /** The lease is another process's now. */
  | { kind: 'lost' }
  /** Too little of the lease is left to risk another attempt: stop before it could expire under a live projector. */
  | { kind: 'expiring' };

/**
 * The calls on the projector lease (`readModel.leases`) and how long it is ours for sure: since the start of the last
 * successful take or renewal, for its time to live. Store calls that could outlast the lease are bounded in time.
 * Which role the process plays with it (holder, standby) is the projector's.
 */
export class ProjectorLease implements LeaseTimes {
  readonly name: string;
  readonly holderId: string;
  readonly ttlMs: number;
  readonly renewEveryMs: number;
  readonly retryEveryMs: number;
  private validUntil = 0;

  constructor(
    times: LeaseTimes,
    private readonly leases: Leases,
    private readonly onHolderGone?: (holder: string) => void,
  ) {
    this.name = times.name;
    this.holderId = times.holderId;
    this.ttlMs = times.ttlMs;
    this.renewEveryMs = times.renewEveryMs;
    this.retryEveryMs = times.retryEveryMs;
  }

  /** Takes the lease if it is free, expired or ours, or if its holder is known to be gone. */
  tryAcquire(): Promise<boolean> {
    return takeLease(this.leases, this.name, this.holderId, this.ttlMs, this.onHolderGone);
  }

  /** The lease was taken by an attempt that started at `attempt` (epoch ms). */
  takenAt(attempt: number): void {
    this.validUntil = attempt + this.ttlMs;
  }

  /** Someone renewed it for this holder at `renewedAt` (a background apply does, as it commits). */
  renewedAt(renewedAt: number): void {
    this.validUntil = Math.max(this.validUntil, renewedAt + this.ttlMs);
  }

  /** What a background apply needs to keep the lease renewed while it holds the write lock. */
  get toKeep(): LeaseToKeep {
    return { name: this.name, holderId: this.holderId, ttlMs: this.ttlMs };
  }

  async currentHolder(): Promise<string | undefined> {
    return (await this.leases.get(this.name))?.holder;
  }

  /**
   * The epoch of the lease just taken, for the fence every projection write carries; undefined when the lease is
   * already someone else's again (it expired and was taken in between): this process must not project.
   */
  async fence(): Promise<LeaseFence | undefined> {
    const current = await this.leases.get(this.name);
    return current?.holder === this.holderId ? { lease: this.name, epoch: current.epoch } : undefined;
  }

  async renew(): Promise<Renewal> {
    const callTimeoutMs = Math.max(1, Math.floor(this.renewEveryMs / 2));
    if (Date.now() + 2 * callTimeoutMs >= this.validUntil) return { kind: 'expiring' };
    const attempt = Date.now();
    let renewed: boolean;
    try {
      renewed = await within(
        this.leases.renew(this.name, this.holderId, this.ttlMs),
        callTimeoutMs,
        'the lease renewal',
      );
    } catch (error) {
      return { kind: 'unanswered', nextInMs: callTimeoutMs, error };
    }
    if (!renewed) return { kind: 'lost' };
    this.validUntil = attempt + this.ttlMs;
    // Counted from the attempt, not from its answer: a renewal that waited long (another process holding SQLite's
    // write lock) must not push the next one so late that too little of the lease would be left for it.
    return { kind: 'renewed', nextInMs: Math.max(0, attempt + this.renewEveryMs - Date.now()) };
  }

  /** Frees the lease; throws when the store does not answer within a renewal interval (it then expires by itself). */
  release(): Promise<void> {
    return within(this.leases.release(this.name, this.holderId), this.renewEveryMs, 'the lease release');
  }
}
