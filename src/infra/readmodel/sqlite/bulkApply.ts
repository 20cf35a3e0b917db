import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../../startWorkerThread';
import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { WriteGate } from '../../sqlite/writeGate';
import type { RecordedEvent } from '../../../ports/eventStore';
import type { BackgroundApply, BackgroundApplyResult, LeaseToKeep } from '../../../ports/backgroundApply';
import type { BulkProgressReports } from '../../../ports/bulkProgress';
import { descendantsSql } from './folderTree';
import { sqlLimit } from '../../sqlite/sqlLimit';
import { OwnMap } from '../../../domain/ownMap';

/**
 * Large subtree events applied in a worker thread (the {@link BackgroundApply} of the embedded read model).
 *
 * A copy or delete of a 100k-folder subtree is a few seconds of set-wise SQL in one transaction (subtreeStore.ts).
 * Run on the event loop it froze every request, the lease renewal and keep-alive sockets for all that time. Here it
 * runs on a worker thread (src/workers/bulkApplyWorker.ts) with its own connection to the same file, as the very same
 * one transaction (writes plus checkpoint), so nothing about atomicity, crash safety or replay changes:
 *
 * - readers on the main connection keep seeing the last committed state (WAL) until the commit makes the whole
 *   operation visible at once;
 * - main-thread writers to the file wait on the {@link WriteGate} held meanwhile, asynchronously, instead of sleeping
 *   the event loop in SQLite's busy handler;
 * - the projector lease is renewed inside the transaction (see BackgroundApply).
 *
 * Only events whose subtree holds at least `minFolders` folders go to the worker (counted with a bounded query); a
 * small one applied in place takes well under a millisecond per folder and spares the message round trip. The worker
 * starts with the first large event and stays for the next.
 */

/** What a subtree event's size is counted on: a folder's subtree, a collection's folders, or a delete's kept rows. */
type Target = { folderId: string } | { collectionId: string } | { deletedAt: string };

/** Event types that touch a whole subtree, and where their size is counted. */
// Each entry takes its own event type's data (hence `never`: accepts() passes the data of the type it looked up).
const SUBTREE_OF = new OwnMap<string, (data: never) => Target | null>({
  FolderCopied: (d: { sourceId: string }) => ({ folderId: d.sourceId }),
  FolderDeleted: (d: { folderId: string }) => ({ folderId: d.folderId }),
  FolderContentsCleared: (d: { folderId: string }) => ({ folderId: d.folderId }),
  FolderAccessChanged: (d: { folderId: string; recurse?: boolean }) => (d.recurse ? { folderId: d.folderId } : null),
  CollectionDeleted: (d: { collectionId: string }) => ({ collectionId: d.collectionId }),
  // A restore moves back (part of) what the delete at `deletedPosition` kept: at most that many folders.
  FolderRestored: (d: { deletedPosition: string }) => ({ deletedAt: d.deletedPosition }),
});

/** Whether `event` touches a whole subtree (one the projector may send to the background, whatever its size). */
export function touchesSubtree(event: RecordedEvent): boolean {
  return (SUBTREE_OF.get(event.type)?.(event.data as never) ?? null) !== null;
}

/**
 * Rows the worker counts per subtree entry (folder or item) an event processes, to report progress (see
 * src/cli/bulkRowCounter.ts: it counts rows inserted into, deleted from or updated in `rm_folders` and `rm_items`, and
 * rows kept in `rm_deleted_folders` and `rm_deleted_items`). A delete or clear keeps each row for restore, then removes
 * it: two rows per entry.
 */
const ROWS_PER_ENTRY = new OwnMap<string, number>({
  FolderCopied: 1,
  FolderDeleted: 2,
  FolderContentsCleared: 2,
  FolderAccessChanged: 1,
  CollectionDeleted: 1,
  FolderRestored: 1,
});

/** A message to the worker. */
export interface BulkJob {
  id: number;
  checkpoint: string;
  event: RecordedEvent;
  lease?: LeaseToKeep;
  /** Present when someone follows the event's request: report the rows counted every so many ms. */
  progress?: { everyMs: number };
}

/** The worker's answer (`rows`: a progress report, any number of them before the one final answer). */
export type BulkReply =
  | { id: number; rows: number }
  | ({ id: number; ok: true } & BackgroundApplyResult)
  | { id: number; ok: false; message: string; stack?: string };

export interface SqliteBulkApplyOptions {
  /** The SQLite file the worker opens (the one `db` has open). */
  file: string;
  gate: WriteGate;
  /** Subtrees with fewer folders than this are applied on the calling thread (config BULK_WORKER_MIN_FOLDERS). */
  minFolders: number;
  /**
   * Where progress of a followed request goes, and how often the worker reports it (config BULK_PROGRESS_INTERVAL_MS).
   */
  progress?: { bus: BulkProgressReports; everyMs: number };
}

export class SqliteBulkApply implements BackgroundApply {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (r: BackgroundApplyResult) => void; reject: (e: Error) => void; progress?: (rows: number) => void }
  >();
  private readonly minFolders: number;
  private readonly foldersUnder: Statement<[string], number>;
  private readonly foldersOfCollection: Statement<[string], number>;
  private readonly foldersKeptBy: Statement<[string], number>;

  constructor(
    db: SqliteDatabase,
    private readonly options: SqliteBulkApplyOptions,
  ) {
    this.minFolders = options.minFolders;
    // Bounded counts: they stop at the threshold, so deciding costs the same for a 10-folder and a 1M-folder subtree.
    this.foldersUnder = db
      .prepare(`SELECT COUNT(*) FROM (${descendantsSql('?', { limit: this.minFolders })})`)
      .pluck() as Statement<[string], number>;
    this.foldersOfCollection = db
      .prepare(
        `SELECT COUNT(*) FROM (SELECT 1 FROM rm_folders WHERE base_parent_id = ? AND base_parent_type = 'collection' ${sqlLimit(this.minFolders)})`,
      )
      .pluck() as Statement<[string], number>;
    this.foldersKeptBy = db
      .prepare(
        `SELECT COUNT(*) FROM (SELECT 1 FROM rm_deleted_folders WHERE position = ? ${sqlLimit(this.minFolders)})`,
      )
      .pluck() as Statement<[string], number>;
  }

  accepts(event: RecordedEvent): boolean {
    const target = SUBTREE_OF.get(event.type)?.(event.data as never);
    if (!target) return false;
    let folders: number;
    // (+1 counts the folder itself: a threshold of 1 sends every subtree event, even of a folder with no subfolders.)
    if ('folderId' in target) folders = (this.foldersUnder.get(target.folderId) ?? 0) + 1;
    else if ('collectionId' in target) folders = this.foldersOfCollection.get(target.collectionId) ?? 0;
    else folders = this.foldersKeptBy.get(target.deletedAt) ?? 0;
    return folders >= this.minFolders;
  }

  apply(checkpoint: string, event: RecordedEvent, lease?: LeaseToKeep): Promise<BackgroundApplyResult> {
    return this.options.gate.hold(
      () =>
        new Promise<BackgroundApplyResult>((resolve, reject) => {
          const id = this.nextId++;
          const progress = this.progressOf(event);
          this.pending.set(id, { resolve, reject, ...(progress ? { progress } : {}) });
          const job: BulkJob = {
            id,
            checkpoint,
            event,
            ...(lease ? { lease } : {}),
            ...(progress && this.options.progress ? { progress: { everyMs: this.options.progress.everyMs } } : {}),
          };
          const worker = this.ensureWorker();
          // While it works, the worker keeps the process alive (at startup, catching up, nothing else may).
          worker.ref();
          worker.postMessage(job);
        }),
    );
  }

  /** Turns the worker's row counts into entries done for whoever follows the event's request, if anyone does. */
  private progressOf(event: RecordedEvent): ((rows: number) => void) | undefined {
    const bus = this.options.progress?.bus;
    const requestId = event.metadata.requestId;
    if (!bus || !requestId || !bus.wanted(requestId)) return undefined;
    const perEntry = ROWS_PER_ENTRY.get(event.type) ?? 1;
    return (rows) => bus.report(requestId, Math.floor(rows / perEntry));
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
    this.failAll(new Error('the bulk worker was stopped'));
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker(this.options.file);
    worker.on('message', (reply: BulkReply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      if ('rows' in reply) return waiter.progress?.(reply.rows);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if (reply.ok)
        waiter.resolve({
          applied: reply.applied,
          ...(reply.leaseRenewedAt !== undefined ? { leaseRenewedAt: reply.leaseRenewedAt } : {}),
        });
      else waiter.reject(Object.assign(new Error(reply.message), { stack: reply.stack }));
    });
    // A worker that dies fails what it was doing (its transaction rolled back with its connection); the next large
    // event starts a new one.
    const onGone = (error: Error) => {
      if (this.worker === worker) this.worker = null;
      this.failAll(error);
    };
    worker.on('error', onGone);
    worker.on('exit', (code) => onGone(new Error(`the bulk worker exited (code ${code})`)));
    // An idle worker must not keep the process alive (tests, CLI commands); `apply` refs it while it works.
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private failAll(error: Error): void {
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }
}

/**
 * Starts the worker thread's entry, src/workers/bulkApplyWorker.ts (a thread entry point wires the read model and the
 * projections together, like src/cli/main.ts does), on its own connection to `file`.
 */
function startWorker(file: string): Worker {
  return startWorkerThread(
    path.join(__dirname, '..', '..', '..', 'workers', 'bulkApplyWorker'),
    __filename.endsWith('.js'),
    { file },
  );
}
