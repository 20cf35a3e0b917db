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
import { ensureFolderTables } from './foldersTable';
import { SqliteFolderReads } from './foldersReads';
import { SqliteFolderWrites } from './foldersWrites';
import { SqliteFiles, SqliteItems } from './itemsStore';
import { SqliteSubtree } from './subtreeStore';
import { SqliteHistory } from './historyStore';
import { SqliteLeases } from './leasesStore';
import { gateWrites, type WriteGate } from '../../sqlite/writeGate';
import { BatchBudget } from './batchBudget';
import { HeavyReads } from './heavyReads';
import type { OffLoopReads } from '../../sqlite/offLoopReads';
import {
  beginReplay,
  completeDerivedState,
  completeReadClassCounts,
  completeReplay,
  replayPending,
} from './replayMode';
import { accountsVersionReader } from './accountsVersion';
import { emptyReadModels } from './emptyReadModels';
import { deferringCreations, planningCreations, ReplayFolderCreations } from './replayFolderCreations';
import { ReplayWriter } from './replayWriter';

/** The table of each kind of row a projection write may be conditional on (`ReadModelTx.ifPresent`). */
const TABLES: Record<RowRef['kind'], string> = {
  folder: 'rm_folders',
  collection: 'rm_collections',
  item: 'rm_items',
  file: 'rm_files',
};

/** A replay's state (replay mode, {@link SqliteReadModel.beginReplay}). */
interface Replay {
  /** Its buffered folder creations. */
  creations: ReplayFolderCreations;
  /** The writes of a batch replayed on this thread: creations buffered, anything else flushing them first. */
  tx: ReadModelTx;
  /** The writes of a batch planned for the writer thread: creations under known folders only. */
  planning: ReadModelTx;
  /** The writer thread (a file's read models; null in memory). */
  writer: ReplayWriter | null;
  /** The checkpoint as the batches sent to the writer leave it; null: read it from the tables (writer idle). */
  sent: { projection: string; position: bigint } | null;
}

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
  readonly folders: SqliteFolderReads;
  private readonly folderWrites: SqliteFolderWrites;
  readonly items: SqliteItems;
  readonly files: SqliteFiles;
  readonly subtree: SqliteSubtree;
  readonly history: SqliteHistory;
  leases: SqliteLeases;
  readonly accountsVersion: () => number;
  /** Plans read on this connection: the projector plans only between transactions (src/projections/projection.ts). */
  readonly projectionReads: ProjectionReads;
  private readonly tx: ReadModelTx;
  /** While a replay runs (between beginReplay and endReplay). */
  private replay: Replay | null = null;
  private readonly batchTx: Transaction<
    (projection: string, events: BatchedWrite[], fence: LeaseFence | undefined) => number
  >;
  private readonly saveCheckpointStmt: Statement<[string, bigint]>;
  /** Set by {@link liveWrites}. */
  private gate: WriteGate | null = null;
  private budget: BatchBudget | null = null;
  private readonly heavyReads: HeavyReads;

  constructor(private readonly db: SqliteDatabase) {
    db.exec('CREATE TABLE IF NOT EXISTS rm_checkpoints (projection TEXT PRIMARY KEY, position INTEGER NOT NULL)');
    this.heavyReads = new HeavyReads(db);
    this.users = new SqliteUsers(db);
    this.groups = new SqliteGroups(db);
    this.tokens = new SqliteTokens(db);
    this.apiKeys = new SqliteApiKeys(db);
    this.collections = new SqliteCollections(db);
    ensureFolderTables(db);
    this.folders = new SqliteFolderReads(db, this.heavyReads);
    this.folderWrites = new SqliteFolderWrites(db);
    this.items = new SqliteItems(
      db,
      { folders: this.folderWrites, users: this.users, collections: this.collections },
      this.heavyReads,
    );
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
      folders: this.folderWrites,
      items: this.items,
      files: this.files,
      subtree: this.subtree,
      history: this.history,
    };
  }

  /**
   * The live service's projection writes, on the event loop:
   * - `gate`: this process's writes to the file (lease calls, projection transactions) wait, asynchronously, while
   *   another thread holds its write lock: bulk work in its worker, or a group commit on the append worker
   *   (src/infra/sqlite/writeGate.ts). Otherwise they would wait in SQLite's busy handler, which sleeps the event loop.
   * - `batchBudgetMs`: a batch is committed in transactions of about this long each (batchBudget.ts), with a turn of
   *   the event loop between two, so that requests and lease renewals are answered while a backlog is projected.
   */
  liveWrites(options: { gate: WriteGate; batchBudgetMs: number }): void {
    this.leases = gateWrites(this.leases, ['acquire', 'renew', 'release'], options.gate);
    this.gate = options.gate;
    this.budget = new BatchBudget(options.batchBudgetMs);
  }

  /**
   * The live service's reads that scan (heavyReads.ts: listings sorted on a key no index serves, deep offsets, text
   * filters and searches) on the reader thread of `reads` (src/infra/sqlite/offLoopReads.ts), not the event loop;
   * stopped with the read model.
   */
  readHeavyOffLoop(reads: OffLoopReads): void {
    this.heavyReads.moveOffLoop(reads);
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
   *
   * In the live service ({@link liveWrites}) a long batch is cut into consecutive transactions that each fit the
   * budget, each with its checkpoint and its fence check, a turn of the event loop apart; the events stay in order,
   * and a failure leaves the earlier transactions committed, as separate batches would.
   */
  async applyBatch(projection: string, events: BatchedWrite[], fence?: LeaseFence): Promise<number> {
    const replay = this.replay;
    if (replay?.writer && !fence && !this.db.inTransaction)
      return this.applyReplayBatch(replay, replay.writer, projection, events);
    const budget = this.budget;
    // A replay's enclosing transaction decides alone (a savepoint per batch, see applyBatchNow).
    if (!budget || this.db.inTransaction) return this.applyGated(projection, events, fence);
    let applied = 0;
    for (let start = 0; start < events.length;) {
      if (start > 0) await new Promise((resolve) => setImmediate(resolve));
      const part = events.slice(start, start + budget.limit(events.length - start));
      applied += await this.applyGated(projection, part, fence, budget);
      start += part.length;
    }
    return applied;
  }

  /**
   * A replay's batch: planned here and committed by the writer thread when it is folder creations under known
   * folders alone (most of a log); otherwise, once the writer has committed every batch sent before, replayed here as
   * any batch is, on the tables as the writer left them.
   */
  private async applyReplayBatch(
    replay: Replay,
    writer: ReplayWriter,
    projection: string,
    events: BatchedWrite[],
  ): Promise<number> {
    await writer.ready();
    const planned = this.planBatch(replay, writer, projection, events);
    if (planned !== null) return planned;
    await writer.drain();
    replay.sent = null;
    return this.applyGated(projection, events, undefined);
  }

  /** Plans a batch and sends it to the writer (the number of events applied), or null when it cannot be planned. */
  private planBatch(replay: Replay, writer: ReplayWriter, projection: string, events: BatchedWrite[]): number | null {
    if (replay.sent?.projection !== projection) {
      // The checkpoint is read from the tables only when they hold every batch sent.
      if (!writer.idle) return null;
      replay.sent = { projection, position: this.readCheckpoint(projection) };
    }
    const { creations } = replay;
    let last = replay.sent.position;
    let applied = 0;
    creations.planning = true;
    try {
      for (const { position, write } of events) {
        if (position <= last) continue;
        creations.position = position;
        write(replay.planning);
        last = position;
        applied++;
      }
    } catch {
      // A write that needs the tables (or one that fails, which the replay on this thread then reports).
      creations.discard();
      return null;
    } finally {
      creations.planning = false;
    }
    if (applied === 0) return 0;
    writer.send({ projection, position: last, rows: creations.take() });
    replay.sent.position = last;
    return applied;
  }

  /** One transaction once the write gate is free (at once without a gate); `budget` hears how long it took. */
  private async applyGated(
    projection: string,
    events: BatchedWrite[],
    fence: LeaseFence | undefined,
    budget?: BatchBudget,
  ): Promise<number> {
    const write = () => {
      const began = performance.now();
      const applied = this.applyBatchNow(projection, events, fence);
      budget?.record(events.length, performance.now() - began);
      return applied;
    };
    return this.gate ? this.gate.run(write) : write();
  }

  /** {@link apply}, synchronously: the bulk worker thread (bulkApply.ts) runs it on its own connection. */
  applyNow(projection: string, position: bigint, write: (tx: ReadModelTx) => void, fence?: LeaseFence): boolean {
    return this.applyBatchNow(projection, [{ position, write }], fence) === 1;
  }

  /**
   * {@link applyBatch}, synchronously. Inside an open transaction (an append's, src/workers/appendProjectingWorker.ts) it
   * is a savepoint: if it throws, its writes are rolled back and the enclosing transaction goes on.
   */
  applyBatchNow(projection: string, events: BatchedWrite[], fence?: LeaseFence): number {
    if (events.length === 0) return 0;
    // Inside an enclosing transaction (a rebuild's batch) this is a savepoint and the outer commit decides.
    if (this.db.inTransaction) return this.batchTx.immediate(projection, events, fence);
    // Read models are derived: their commit need not wait for an fsync of its own. The events they come from were
    // fsynced when appended, the checkpoint commits with the writes, and the next fsync of the WAL (the next append's
    // commit, or a checkpoint) makes them durable; if power fails before that, they are projected again on start.
    // That halves the fsyncs of a write request (one for its append, none for its projection).
    // Through `pragma` each time: SQLite applies a PRAGMA when it compiles it, so a prepared one run again does nothing
    // (and would leave every commit at FULL, an fsync on the event loop each).
    this.db.pragma('synchronous = NORMAL');
    try {
      return this.batchTx.immediate(projection, events, fence);
    } finally {
      this.db.pragma('synchronous = FULL');
    }
  }

  private applyInTransaction(projection: string, events: BatchedWrite[], fence: LeaseFence | undefined): number {
    if (fence) this.leases.checkFence(fence);
    const checkpoint = this.readCheckpoint(projection);
    let applied = 0;
    let last = checkpoint;
    const replay = this.replay;
    const tx = replay?.tx ?? this.tx;
    try {
      for (const { position, write } of events) {
        if (position <= last) continue;
        if (replay) replay.creations.position = position;
        // The event's position is visible to the history index triggers while its writes run (historyStore.ts).
        this.history.during(position, () => write(tx));
        last = position;
        applied++;
      }
      // A replay's buffered creations are written before the checkpoint that covers them.
      replay?.creations.flush();
    } catch (error) {
      // The transaction rolls back: forget the creations buffered in it.
      replay?.creations.discard();
      throw error;
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
    const creations = new ReplayFolderCreations(this.db, this.history);
    this.replay = {
      creations,
      tx: deferringCreations(this.tx, creations),
      planning: planningCreations(creations),
      // Started after beginReplay's schema changes, which its connection then reads.
      writer: this.db.memory ? null : new ReplayWriter(this.db.name),
      sent: null,
    };
  }

  async endReplay(): Promise<void> {
    const writer = this.replay?.writer;
    this.replay = null;
    if (!writer?.started) {
      completeReplay(this.db);
      return;
    }
    try {
      await writer.drain();
      // The read-class counts (a third of this work: a JSON lookup in every folder's document) are read on the
      // writer's connection while this one builds the indexes and the full-text tables; neither changes rm_folders.
      const counting = writer.countReadClasses();
      // Handled when awaited below; a failure meanwhile must not be reported as unhandled.
      counting.catch(() => undefined);
      completeDerivedState(this.db);
      completeReadClassCounts(this.db, await counting);
    } finally {
      await writer.close();
    }
  }

  async dump(): Promise<Record<string, unknown[]>> {
    const tables = prepared(
      this.db,
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rm\\_%' ESCAPE '\\'
        AND name NOT LIKE '%fts\\_%' ESCAPE '\\' AND name != 'rm_checkpoints'
        ORDER BY name`,
    ).all() as { name: string }[];
    const out = new Map<string, unknown[]>();
    for (const { name } of tables) {
      const rows = prepared(this.db, `SELECT * FROM "${name}"`).all() as Record<string, unknown>[];
      // The search rows' keys are internal (searchRows.ts): the search rows themselves are compared.
      for (const row of rows) delete row.search_rowid;
      out.set(name, rows.map((r) => JSON.stringify(r)).sort());
    }
    return Object.fromEntries(out);
  }

  async dispose(): Promise<void> {
    // The database handle belongs to whoever opened it; a replay's writer thread (a replay that failed) is ours.
    await this.replay?.writer?.close();
    this.replay = null;
    await this.heavyReads.close();
  }
}
