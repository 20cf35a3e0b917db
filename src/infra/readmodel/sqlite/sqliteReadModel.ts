import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { Statement, Transaction } from 'better-sqlite3';
import type {
  BatchedWrite,
  LeaseFence,
  ProjectionReads,
  ReadModel,
  ReadModelTx,
  RowRef,
} from '../../../ports/readModel';
import { SqliteApiKeys, SqliteTokens, SqliteUsers } from './accountsStore';
import { SqliteCollections } from './collectionsStore';
import { SqliteGroups } from './groupsStore';
import { SqliteFolders } from './foldersStore';
import { SqliteFiles, SqliteItems } from './itemsStore';
import { SqliteSubtree } from './subtreeStore';
import { SqliteHistory } from './historyStore';
import { SqliteLeases } from './leasesStore';
import { gateWrites, type WriteGate } from '../../sqlite/writeGate';
import { beginReplay, completeReplay, replayPending } from './replayMode';
import { accountsVersionReader } from './accountsVersion';
import { emptyReadModels } from './emptyReadModels';

/** The table of each kind of row a projection write may be conditional on (`ReadModelTx.ifPresent`). */
const TABLES: Record<RowRef['kind'], string> = {
  folder: 'rm_folders',
  collection: 'rm_collections',
  item: 'rm_items',
  file: 'rm_files',
};

/**
 * The embedded read models: tables prefixed `rm_` in the same SQLite file as the event log. One event's writes and
 * its projection checkpoint commit in one transaction, so a replayed event is skipped and a crash never leaves a
 * half-applied event behind.
 */
export class SqliteReadModel implements ReadModel {
  readonly users: SqliteUsers;
  readonly groups: SqliteGroups;
  readonly tokens: SqliteTokens;
  readonly apiKeys: SqliteApiKeys;
  readonly collections: SqliteCollections;
  readonly folders: SqliteFolders;
  readonly items: SqliteItems;
  readonly files: SqliteFiles;
  readonly subtree: SqliteSubtree;
  readonly history: SqliteHistory;
  leases: SqliteLeases;
  readonly accountsVersion: () => number;
  /** Plans read on this connection: the projector plans only between transactions (src/projections/projection.ts). */
  readonly projectionReads: ProjectionReads;
  private readonly tx: ReadModelTx;
  private readonly batchTx: Transaction<
    (projection: string, events: BatchedWrite[], fence: LeaseFence | undefined) => number
  >;
  private readonly saveCheckpointStmt: Statement<[string, bigint]>;
  private readonly relaxedSyncStmt: Statement<[]>;
  private readonly fullSyncStmt: Statement<[]>;

  constructor(private readonly db: SqliteDatabase) {
    db.exec('CREATE TABLE IF NOT EXISTS rm_checkpoints (projection TEXT PRIMARY KEY, position INTEGER NOT NULL)');
    this.users = new SqliteUsers(db);
    this.groups = new SqliteGroups(db);
    this.tokens = new SqliteTokens(db);
    this.apiKeys = new SqliteApiKeys(db);
    this.collections = new SqliteCollections(db);
    this.folders = new SqliteFolders(db);
    this.items = new SqliteItems(db, { folders: this.folders, users: this.users, collections: this.collections });
    this.files = new SqliteFiles(db);
    this.subtree = new SqliteSubtree(db);
    this.history = new SqliteHistory(db);
    this.leases = new SqliteLeases(db);
    this.accountsVersion = accountsVersionReader(db);
    this.projectionReads = { folders: this.folders, collections: this.collections, users: this.users };
    // A rebuild stopped before its end left the derived state to compute (replayMode.ts): do it before any use.
    if (replayPending(db)) completeReplay(db);
    this.batchTx = db.transaction((projection: string, events: BatchedWrite[], fence: LeaseFence | undefined) =>
      this.applyInTransaction(projection, events, fence),
    );
    this.saveCheckpointStmt = db.prepare(
      `INSERT INTO rm_checkpoints (projection, position) VALUES (?, ?) ON CONFLICT(projection) DO UPDATE
        SET position = excluded.position`,
    );
    this.relaxedSyncStmt = db.prepare('PRAGMA synchronous = NORMAL');
    this.fullSyncStmt = db.prepare('PRAGMA synchronous = FULL');
    this.tx = {
      // A lookup in the event's transaction, then the branch's writes, synchronously.
      ifPresent: (row, then, orElse) => {
        const present = prepared(db, `SELECT 1 FROM ${TABLES[row.kind]} WHERE id = ?`).get(row.id) !== undefined;
        (present ? then : orElse)?.(this.tx);
      },
      users: this.users,
      groups: this.groups,
      tokens: this.tokens,
      apiKeys: this.apiKeys,
      collections: this.collections,
      folders: this.folders,
      items: this.items,
      files: this.files,
      subtree: this.subtree,
      history: this.history,
    };
  }

  /**
   * Makes this process's writes to the file (lease calls, projection batches) wait, asynchronously, while another
   * thread holds its write lock: bulk work in its worker, or a group commit on the append worker
   * (src/infra/sqlite/writeGate.ts). Otherwise they would wait in SQLite's busy handler, which sleeps the event loop.
   */
  gateWrites(gate: WriteGate): void {
    this.leases = gateWrites(this.leases, ['acquire', 'renew', 'release'], gate);
    gateWrites(this as SqliteReadModel, ['applyBatch'], gate);
  }

  async checkpoint(projection: string): Promise<bigint> {
    return this.readCheckpoint(projection);
  }

  private readCheckpoint(projection: string): bigint {
    const row = prepared(this.db, 'SELECT position FROM rm_checkpoints WHERE projection = ?')
      .safeIntegers(true)
      .get(projection) as { position: bigint } | undefined;
    return row ? row.position : 0n;
  }

  async apply(
    projection: string,
    position: bigint,
    write: (tx: ReadModelTx) => void,
    fence?: LeaseFence,
  ): Promise<boolean> {
    return (await this.applyBatch(projection, [{ position, write }], fence)) === 1;
  }

  /**
   * One IMMEDIATE transaction for the whole batch: the write lock is taken before the checkpoint is read, so another
   * process's commit cannot make the read snapshot stale (a deferred transaction would then fail with SQLITE_BUSY at
   * its first write instead of waiting), nor the lease's epoch checked against `fence`. It runs synchronously, so no
   * other work of this process joins it.
   */
  async applyBatch(projection: string, events: BatchedWrite[], fence?: LeaseFence): Promise<number> {
    return this.applyBatchNow(projection, events, fence);
  }

  /** {@link apply}, synchronously: the bulk worker thread (bulkApply.ts) runs it on its own connection. */
  applyNow(projection: string, position: bigint, write: (tx: ReadModelTx) => void, fence?: LeaseFence): boolean {
    return this.applyBatchNow(projection, [{ position, write }], fence) === 1;
  }

  /** See {@link applyBatch}. */
  private applyBatchNow(projection: string, events: BatchedWrite[], fence?: LeaseFence): number {
    if (events.length === 0) return 0;
    // Inside an enclosing transaction (a rebuild's batch) this is a savepoint and the outer commit decides.
    if (this.db.inTransaction) return this.batchTx.immediate(projection, events, fence);
    // Read models are derived: their commit need not wait for an fsync of its own. The events they come from were
    // fsynced when appended, the checkpoint commits with the writes, and the next fsync of the WAL (the next append's
    // commit, or a checkpoint) makes them durable; if power fails before that, they are projected again on start.
    // That halves the fsyncs of a write request (one for its append, none for its projection).
    this.relaxedSyncStmt.run();
    try {
      return this.batchTx.immediate(projection, events, fence);
    } finally {
      this.fullSyncStmt.run();
    }
  }

  private applyInTransaction(projection: string, events: BatchedWrite[], fence: LeaseFence | undefined): number {
    if (fence) this.leases.checkFence(fence);
    const checkpoint = this.readCheckpoint(projection);
    let applied = 0;
    let last = checkpoint;
    for (const { position, write } of events) {
      if (position <= last) continue;
      // The event's position is visible to the history index triggers while its writes run (historyStore.ts).
      this.history.during(position, () => write(this.tx));
      last = position;
      applied++;
    }
    if (applied > 0) this.saveCheckpointStmt.run(projection, last);
    return applied;
  }

  async reset(): Promise<void> {
    this.db.transaction(() => emptyReadModels(this.db))();
  }

  /**
   * Replay mode for `rebuild` (replayMode.ts): empties the read models like {@link reset}, and leaves the counts and
   * the indexes no projection write reads to {@link endReplay}, which computes them set-wise after the last event.
   */
  async beginReplay(): Promise<void> {
    beginReplay(this.db);
  }

  async endReplay(): Promise<void> {
    completeReplay(this.db);
  }

  async dump(): Promise<Record<string, unknown[]>> {
    const tables = prepared(
      this.db,
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rm\\_%' ESCAPE '\\'
        AND name NOT LIKE '%fts\\_%' ESCAPE '\\' AND name != 'rm_checkpoints'
        ORDER BY name`,
    ).all() as { name: string }[];
    const out: Record<string, unknown[]> = {};
    for (const { name } of tables) {
      const rows = prepared(this.db, `SELECT * FROM "${name}"`).all() as Record<string, unknown>[];
      out[name] = rows.map((r) => JSON.stringify(r)).sort();
    }
    return out;
  }

  async dispose(): Promise<void> {
    /* the database handle belongs to whoever opened it */
  }
}
