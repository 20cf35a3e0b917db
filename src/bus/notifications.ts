import { Observable, Subject, filter } from 'rxjs';

/**
 * Progress notifications (Girder 3.x `models/notification.py`).
 *
 * Notifications are operational state, not domain facts, so they are deliberately kept OUT of the event log:
 * - they describe how far a request has got, not anything that happened to a folder, item or user; replaying the log
 *   must rebuild exactly the domain read models, and a replay that resurrected hour-old progress bars would be wrong;
 * - they are written up to twice a second per running operation and expire after an hour (30 s once finished):
 *   an append-only, never-deleted log would grow without bound for data nobody ever needs again;
 * - they are private to one user's session and are deleted on expiry, which an immutable log cannot express.
 * They live in their own store (`ops_` tables in the embedded SQLite file), outside the `rm_` read models that
 * rebuild/reset manage, and every change is also pushed in-process on `changes$` for the SSE stream.
 */

export type ProgressState = 'queued' | 'active' | 'success' | 'error';

export interface ProgressData {
  title: string;
  /** `<= 0` means indeterminate. */
  total: number;
  current: number;
  state: ProgressState;
  message: string;
  estimateTime: boolean;
  resource: string | null;
  resourceName: string | null;
}

/** A notification record, returned unfiltered by the notification routes. */
export interface NotificationRecord {
  _id: string;
  type: 'progress';
  /** The user the notification is for; absent when it belongs to a (user-less) token instead. */
  userId?: string;
  tokenId?: string;
  /** When the task started (girderTime). */
  time: string;
  /** Last write (girderTime): `since` filters and list ordering use it. */
  updated: string;
  /** After this the record is gone (girderTime). */
  expires: string;
  /** Epoch seconds (float) of the start and of the last write. */
  startTime: number;
  updatedTime: number;
  /** Seconds the whole task is expected to take, when it can be estimated. */
  estimatedTotalTime?: number;
  data: ProgressData;
}

/** Whose notifications: a user, or (for callers without a user) a token. */
export interface NotificationOwner {
  userId: string | null;
  tokenId: string | null;
}

/** Storage of notification records (the embedded adapter is `SqliteNotificationStore`). */
export interface NotificationStore {
  /** Inserts or replaces a record. */
  save(record: NotificationRecord): Promise<void>;
  /** The owner's unexpired records with `updated` strictly after `sinceMs` (epoch ms) if given, ascending `updated`. */
  listFor(owner: NotificationOwner, sinceMs: number | null, nowMs: number): Promise<NotificationRecord[]>;
  /** Deletes records whose `expires` is at or before `nowMs`; returns how many went. */
  deleteExpired(nowMs: number): Promise<number>;
}

/** The owner filter of a record: the user when there is one, else the token (Girder's `Notification.get`). */
export function ownsRecord(owner: NotificationOwner, record: NotificationRecord): boolean {
  if (owner.userId) return record.userId === owner.userId;
  if (owner.tokenId) return record.userId === undefined && record.tokenId === owner.tokenId;
  return false;
}

/** How often (at most) expired records are swept, piggybacking on writes. */
const SWEEP_INTERVAL_MS = 60_000;

/** The notification store plus the in-process stream of its changes. */
export class Notifications {
  private readonly subject = new Subject<NotificationRecord>();
  /** Every record as written (created or updated), after it is stored. Completes on dispose. */
  readonly changes$: Observable<NotificationRecord> = this.subject.asObservable();
  private lastSweep = 0;

  constructor(private readonly store: NotificationStore, private readonly now: () => number = Date.now) {}

  /** Stores the record and announces it. Expired records are swept at most once a minute on the way. */
  async save(record: NotificationRecord): Promise<void> {
    const now = this.now();
    if (now - this.lastSweep >= SWEEP_INTERVAL_MS) {
      this.lastSweep = now;
      await this.store.deleteExpired(now);
    }
    const copy = structuredClone(record);
    await this.store.save(copy);
    this.subject.next(structuredClone(copy));
  }

  /** The owner's live records updated after `sinceMs` (epoch ms), ascending `updated`. */
  list(owner: NotificationOwner, sinceMs: number | null = null): Promise<NotificationRecord[]> {
    return this.store.listFor(owner, sinceMs, this.now());
  }

  /** Changes to the owner's records only. */
  changesFor(owner: NotificationOwner): Observable<NotificationRecord> {
    return this.changes$.pipe(filter((record) => ownsRecord(owner, record)));
  }

  /** Deletes expired records now. */
  sweep(): Promise<number> {
    this.lastSweep = this.now();
    return this.store.deleteExpired(this.lastSweep);
  }

  /** Ends `changes$` (open streams close). */
  dispose(): void {
    this.subject.complete();
  }
}
