/**
 * Notification records and their storage (Girder 3.x `models/notification.py`): what the SQLite and MongoDB
 * notification stores implement and what the notification bus (src/bus/notifications.ts) writes through. Why
 * notifications stay out of the event log is told there.
 */

export type ProgressState = 'queued' | 'active' | 'success' | 'error';

interface ProgressData {
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

/** Storage of notification records (`SqliteNotificationStore`, `MongoNotificationStore`). */
export interface NotificationStore {
  /** Inserts or replaces a record. */
  save(record: NotificationRecord): Promise<void>;
  /** The owner's unexpired records with `updated` strictly after `sinceMs` (epoch ms) if given, ascending `updated`. */
  listFor(owner: NotificationOwner, sinceMs: number | null, nowMs: number): Promise<NotificationRecord[]>;
  /** Every owner's unexpired records with `updated` strictly after `sinceMs` (epoch ms), ascending `updated`. */
  changedSince(sinceMs: number, nowMs: number): Promise<NotificationRecord[]>;
  /** Deletes records whose `expires` is at or before `nowMs`; returns how many went. */
  deleteExpired(nowMs: number): Promise<number>;
}
