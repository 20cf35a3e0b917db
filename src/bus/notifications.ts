import { Observable, Subject, filter } from './rxjs';
import type { NotificationOwner, NotificationRecord, NotificationStore } from '../ports/notificationStore';

/**
 * Progress notifications (Girder 3.x `models/notification.py`).
 *
 * Notifications are operational state, not domain facts, so they are deliberately kept OUT of the event log:
 * - they describe how far a request has got, not anything that happened to a folder, item or user; replaying the log
 *   must rebuild exactly the domain read models, and a replay that resurrected hour-old progress bars would be wrong;
 * - they are written up to twice a second per running operation and expire after an hour (30 s once finished):
 *   an append-only, never-deleted log would grow without bound for data nobody ever needs again;
 * - they are private to one user's session and are deleted on expiry, which an immutable log cannot express.
 * They live in the configured read model's storage (`ops_notifications` in the embedded SQLite file, or in the MongoDB
 * database), outside the read models that rebuild/reset manage, so every process sharing that storage lists the same
 * records. `changes$` carries every change for the SSE stream: this process's writes at once, other processes' by a
 * poll of the store that runs only while someone listens (see {@link Notifications}).
 */

/** The record types of this bus's API, for its callers in layers that reach it (the notification routes). */
export type { NotificationOwner, NotificationRecord } from '../ports/notificationStore';

/** The owner filter of a record: the user when there is one, else the token (Girder's `Notification.get`). */
function ownsRecord(owner: NotificationOwner, record: NotificationRecord): boolean {
  if (owner.userId) return record.userId === owner.userId;
  if (owner.tokenId) return record.userId === undefined && record.tokenId === owner.tokenId;
  return false;
}

/** How often (at most) expired records are swept, piggybacking on writes. */
const SWEEP_INTERVAL_MS = 60_000;
/** Above this many remembered versions, those older than any poll could find again are forgotten. */
const ANNOUNCED_PRUNE_ABOVE = 1000;

export interface NotificationsOptions {
  /** Clock (epoch ms), for tests. */
  now?: () => number;
  /** How often the store is read for other processes' changes while someone listens (default 250 ms). */
  pollEveryMs?: number;
  /**
   * How far back each poll looks before the newest change it has seen (default 5 s): a write another process made
   * with an earlier `updated` may commit after a later one, and clocks of processes on one store may differ a little.
   */
  pollOverlapMs?: number;
}

/**
 * The notification store plus the stream of its changes. Writes of this process are announced at once; while
 * `changes$` has subscribers, a single poll loop reads the records changed since the newest one seen (minus the
 * overlap) and announces the versions it has not announced yet: how a stream served by one process follows the
 * progress of a request another process runs.
 */
export class Notifications {
  private readonly subject = new Subject<NotificationRecord>();
  /** Every record as written (created or updated), by any process sharing the store. Completes on dispose. */
  readonly changes$: Observable<NotificationRecord>;
  private lastSweep = 0;
  private listeners = 0;
  private poller: NodeJS.Timeout | null = null;
  private polling = false;
  private disposed = false;
  /** The newest version announced of each record recently seen: its `updated` (epoch ms) and its JSON. */
  private readonly announced = new Map<string, { updated: number; json: string }>();
  private newestSeen: number;
  private readonly now: () => number;
  private readonly pollEveryMs: number;
  private readonly pollOverlapMs: number;

  constructor(
    private readonly storage: NotificationStore,
    options: NotificationsOptions | (() => number) = {},
  ) {
    const settings = typeof options === 'function' ? { now: options } : options;
    this.now = settings.now ?? Date.now;
    this.pollEveryMs = settings.pollEveryMs ?? 250;
    this.pollOverlapMs = settings.pollOverlapMs ?? 5_000;
    this.newestSeen = this.now();
    this.changes$ = new Observable<NotificationRecord>((subscriber) => {
      const subscription = this.subject.subscribe(subscriber);
      this.listeners += 1;
      this.startPolling();
      return () => {
        subscription.unsubscribe();
        this.listeners -= 1;
        if (this.listeners === 0) this.stopPolling();
      };
    });
  }

  /** Stores the record and announces it. Expired records are swept at most once a minute on the way. */
  async save(record: NotificationRecord): Promise<void> {
    const copy = structuredClone(record);
    await this.store(copy);
    this.announce(copy, true);
  }

  /**
   * Announces the record at once, before it is stored: for progress that must move while the store cannot take
   * writes (bulk work holds the embedded file's write lock). Follow with {@link store} of the same version (or a
   * newer one); a version only published is seen by this process's streams, not listed nor seen by other processes.
   */
  publish(record: NotificationRecord): void {
    this.announce(structuredClone(record), true);
  }

  /** Stores the record without announcing it (see {@link publish}). Expired records are swept at most once a minute. */
  async store(record: NotificationRecord): Promise<void> {
    const now = this.now();
    if (now - this.lastSweep >= SWEEP_INTERVAL_MS) {
      this.lastSweep = now;
      await this.storage.deleteExpired(now);
    }
    await this.storage.save(structuredClone(record));
  }

  /** The owner's live records updated after `sinceMs` (epoch ms), ascending `updated`. */
  list(owner: NotificationOwner, sinceMs: number | null = null): Promise<NotificationRecord[]> {
    return this.storage.listFor(owner, sinceMs, this.now());
  }

  /** Changes to the owner's records only. */
  changesFor(owner: NotificationOwner): Observable<NotificationRecord> {
    return this.changes$.pipe(filter((record) => ownsRecord(owner, record)));
  }

  /** Deletes expired records now. */
  sweep(): Promise<number> {
    this.lastSweep = this.now();
    return this.storage.deleteExpired(this.lastSweep);
  }

  /** Reads the store once for changes not announced yet (what the poll loop runs). */
  async poll(): Promise<void> {
    if (this.polling || this.disposed) return;
    this.polling = true;
    try {
      const changed = await this.storage.changedSince(this.newestSeen - this.pollOverlapMs, this.now());
      for (const record of changed) this.announce(record);
      this.forgetOlderThan(this.newestSeen - 2 * this.pollOverlapMs);
    } finally {
      this.polling = false;
    }
  }

  /** Ends `changes$` (open streams close) and the poll loop. */
  dispose(): void {
    this.disposed = true;
    this.stopPolling();
    this.subject.complete();
  }

  /**
   * Announces a record version once, whichever way it arrives first: every write of this process, and what a poll
   * finds that is newer than (or, at the same `updated`, different from) what was announced of that record.
   */
  private announce(record: NotificationRecord, written = false): void {
    const updated = Date.parse(record.updated);
    const json = JSON.stringify(record);
    const known = this.announced.get(record._id);
    if (
      !written &&
      known !== undefined &&
      (known.updated > updated || (known.updated === updated && known.json === json))
    )
      return;
    this.announced.set(record._id, { updated, json });
    if (updated > this.newestSeen) this.newestSeen = updated;
    // Without listeners no poll prunes: keep what a poll could still find, no more.
    if (this.announced.size > ANNOUNCED_PRUNE_ABOVE) this.forgetOlderThan(this.newestSeen - 2 * this.pollOverlapMs);
    this.subject.next(structuredClone(record));
  }

  private forgetOlderThan(ms: number): void {
    for (const [id, known] of this.announced) if (known.updated < ms) this.announced.delete(id);
  }

  private startPolling(): void {
    if (this.poller || this.disposed) return;
    this.poller = setInterval(() => {
      this.poll().catch(() => undefined); // a failed read is retried at the next tick
    }, this.pollEveryMs);
    this.poller.unref();
  }

  private stopPolling(): void {
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
  }
}
