import type { Logger } from 'pino';
import { newId } from '../domain/ids';
import { girderTime } from '../domain/time';
import { RestError, ValidationError } from '../domain/errors';
import type { NotificationRecord, ProgressState } from '../ports/notificationStore';
import type { Notifications } from './notifications';
import type { BulkProgressBus } from './bulkProgress';

/**
 * Progress reporting for long-running commands (Girder 3.x `utility/progress.py` ProgressContext).
 *
 *   await withProgress(services, { on: params.progress, userId, title: `Deleting folder ${name}`,
 *     message: 'Calculating folder size...' }, async (progress) => {
 *     await progress.update({ total });
 *     … await progress.update({ increment: 1, message: `Deleted item ${item.name}` }); …
 *   });
 *
 * With `on: false` nothing is ever written (not even an initial record) and every method returns at once.
 */

const ACTIVE_TTL_MS = 60 * 60 * 1000;
const FINISHED_TTL_MS = 30 * 1000;
/** Minimum time between two writes of `update()` (Girder's `interval=0.5`). */
const DEFAULT_PROGRESS_INTERVAL_MS = 500;

export interface ProgressStartOptions {
  /** Whether to record progress at all (the route's `progress` parameter). */
  on: boolean;
  /** The user the notification is for (the caller). */
  userId: string | null;
  /** For callers without a user: the token (its id) the notification belongs to. */
  tokenId?: string | null;
  /** e.g. `Deleting folder <name>`; should not change while the task runs. */
  title: string;
  /** Initial message, e.g. `Calculating folder size...`. */
  message?: string;
  /** Initial total (default 0 = indeterminate) and current (default 0). */
  total?: number;
  current?: number;
  /** Initial state (default `active`). */
  state?: ProgressState;
  /** Whether `estimatedTotalTime` is computed (default true). */
  estimateTime?: boolean;
  resource?: string | null;
  resourceName?: string | null;
}

interface ProgressUpdate {
  total?: number;
  current?: number;
  /** Added to `current` (before `current`, if both are given, is applied: do not pass both). */
  increment?: number;
  message?: string;
  state?: ProgressState;
  /** Write now even if the last write was less than the interval ago. */
  force?: boolean;
}

export interface ProgressContext {
  /** Whether this context records anything. */
  readonly on: boolean;
  /** The record as last updated in memory (null when off). */
  readonly record: NotificationRecord | null;
  /** Updates the in-memory state; persists it if the last write is older than the interval (or `force`). */
  update(update: ProgressUpdate): Promise<void>;
  /** Final write: state `success`, message `Done`, expires in 30 s. Later calls do nothing. */
  finish(): Promise<void>;
  /** Final write: state `error`, message `Error` or `Error: <msg>` for rest/validation errors; expires in 30 s. */
  fail(error: unknown): Promise<void>;
  /**
   * Runs `task` (a command whose large subtree event is applied off the event loop) while moving `current` with what
   * the bulk worker reports for the request `requestId` (src/bus/bulkProgress.ts), capped at the total: each report is
   * published to the notification stream at once and stored as soon as the file takes writes again.
   */
  following<T>(requestId: string, task: () => Promise<T>): Promise<T>;
}

/** The context of `on: false`: free to call, records nothing. */
export const noProgress: ProgressContext = Object.freeze({
  on: false,
  record: null,
  update: async () => undefined,
  finish: async () => undefined,
  fail: async () => undefined,
  following: <T>(_requestId: string, task: () => Promise<T>) => task(),
});

/** The final message of a failed task (Girder: `Error: <msg>` only for ValidationException/RestException). */
function progressErrorMessage(error: unknown): string {
  return error instanceof RestError || error instanceof ValidationError ? `Error: ${error.message}` : 'Error';
}

class ActiveProgress implements ProgressContext {
  readonly on = true;
  private lastSave: number;
  private finished = false;
  /** Writes are chained so that they reach the store in call order even if a caller forgets to await. */
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private current: NotificationRecord,
    private readonly notifications: Notifications,
    private readonly now: () => number,
    private readonly intervalMs: number,
    private readonly bulk: BulkProgressBus | undefined,
  ) {
    this.lastSave = now();
  }

  async following<T>(requestId: string, task: () => Promise<T>): Promise<T> {
    if (!this.bulk) return task();
    const stop = this.bulk.follow(requestId, (entriesDone) => this.live(entriesDone));
    try {
      return await task();
    } finally {
      stop();
    }
  }

  /**
   * A bulk worker's report: published at once (the worker already spaces its reports), stored behind the writes
   * before it. While the worker holds the SQLite file's write lock the store waits (src/infra/sqlite/writeGate.ts):
   * the stream still moves, and only the newest of the versions queued meanwhile is stored.
   */
  private live(entriesDone: number): void {
    if (this.finished) return;
    const total = this.current.data.total;
    const current = total > 0 ? Math.min(total, entriesDone) : entriesDone;
    if (current <= this.current.data.current) return;
    const now = this.now();
    this.apply({ current }, now, now + ACTIVE_TTL_MS, true);
    this.lastSave = now;
    const snapshot = this.current;
    this.notifications.publish(snapshot);
    const written = this.writes.then(() =>
      this.current === snapshot ? this.notifications.store(snapshot) : undefined,
    );
    this.writes = written.catch(() => undefined);
  }

  get record(): NotificationRecord {
    return this.current;
  }

  update(update: ProgressUpdate): Promise<void> {
    if (this.finished) return Promise.resolve();
    const now = this.now();
    const save = update.force === true || now - this.lastSave > this.intervalMs;
    this.apply(update, now, now + ACTIVE_TTL_MS, save);
    if (!save) return Promise.resolve();
    this.lastSave = now;
    return this.write();
  }

  finish(): Promise<void> {
    return this.end('success', 'Done');
  }

  fail(error: unknown): Promise<void> {
    return this.end('error', progressErrorMessage(error));
  }

  private end(state: ProgressState, message: string): Promise<void> {
    if (this.finished) return this.writes;
    this.finished = true;
    const now = this.now();
    this.apply({ state, message }, now, now + FINISHED_TTL_MS, true);
    this.lastSave = now;
    return this.write();
  }

  /** Girder's `updateProgress`: every call moves `updated`/`expires`; the estimate is refreshed only on a save. */
  private apply(update: ProgressUpdate, now: number, expiresMs: number, save: boolean): void {
    const record = this.current;
    const data = { ...record.data };
    if (update.increment !== undefined) data.current += update.increment;
    if (update.total !== undefined) data.total = update.total;
    if (update.current !== undefined) data.current = update.current;
    if (update.state !== undefined) data.state = update.state;
    if (update.message !== undefined) data.message = update.message;
    const next: NotificationRecord = {
      ...record,
      data,
      updated: girderTime(new Date(now)),
      expires: girderTime(new Date(expiresMs)),
      updatedTime: now / 1000,
    };
    if (save && next.updatedTime > next.startTime && data.estimateTime) {
      delete next.estimatedTotalTime;
      const total = data.total;
      const current = data.current;
      if (total >= current && total > 0 && current > 0) {
        next.estimatedTotalTime = (total * (next.updatedTime - next.startTime)) / current;
      }
    }
    this.current = next;
  }

  private write(): Promise<void> {
    const snapshot = this.current;
    const written = this.writes.then(() => this.notifications.save(snapshot));
    // The chain itself never rejects (a failed write is reported to the caller of that write only).
    this.writes = written.catch(() => undefined);
    return written;
  }
}

export interface ProgressServiceOptions {
  /** Minimum ms between two `update()` writes (default 500). */
  intervalMs?: number;
  /** Clock (epoch ms), for tests. */
  now?: () => number;
  /** Where bulk work reports how far it got (see {@link ProgressContext.following}); without it `current` jumps. */
  bulk?: BulkProgressBus;
}

/** Starts progress contexts; `services.progress`. */
export class ProgressService {
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly bulk: BulkProgressBus | undefined;

  constructor(
    private readonly notifications: Notifications,
    options: ProgressServiceOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS;
    this.now = options.now ?? Date.now;
    this.bulk = options.bulk;
  }

  /** Creates the record (state `active`, expires in 1 h) unless `on` is false, in which case nothing is written. */
  async start(options: ProgressStartOptions): Promise<ProgressContext> {
    if (!options.on) return noProgress;
    const owner = options.userId ? { userId: options.userId } : options.tokenId ? { tokenId: options.tokenId } : null;
    if (!owner) throw new Error('A progress notification needs a userId or a tokenId.');
    const now = this.now();
    const time = girderTime(new Date(now));
    const record: NotificationRecord = {
      _id: newId(now),
      type: 'progress',
      ...owner,
      time,
      updated: time,
      expires: girderTime(new Date(now + ACTIVE_TTL_MS)),
      startTime: now / 1000,
      updatedTime: now / 1000,
      data: {
        title: options.title,
        total: options.total ?? 0,
        current: options.current ?? 0,
        state: options.state ?? 'active',
        message: options.message ?? '',
        estimateTime: options.estimateTime ?? true,
        resource: options.resource ?? null,
        resourceName: options.resourceName ?? null,
      },
    };
    await this.notifications.save(record);
    return new ActiveProgress(record, this.notifications, this.now, this.intervalMs, this.bulk);
  }
}

/**
 * Runs `task` inside a progress context that always ends: `finish()` when the task resolves, `fail(error)` when it
 * throws (the error is rethrown). A failure to write the final state is logged and changes nothing else: it must not
 * mask the task's error, nor turn a change that was made into an error answer (the store may be held by another
 * process's long commit just then: docs/http-conventions.md, rule 4).
 */
export async function withProgress<T>(
  services: { progress: ProgressService; logger?: Logger },
  options: ProgressStartOptions,
  task: (progress: ProgressContext) => Promise<T>,
): Promise<T> {
  const progress = await services.progress.start(options);
  let result: T;
  try {
    result = await task(progress);
  } catch (error) {
    try {
      await progress.fail(error);
    } catch (writeError) {
      services.logger?.error({ err: writeError }, 'could not record the failure of a progress notification');
    }
    throw error;
  }
  try {
    await progress.finish();
  } catch (writeError) {
    services.logger?.error({ err: writeError }, 'could not record the end of a progress notification');
  }
  return result;
}
