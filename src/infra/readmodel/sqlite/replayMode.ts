import type { SqliteDatabase } from '../../sqlite/openDatabase';
import { FOLDERS_DDL } from './foldersTable';
import { ACL_DDL } from './aclRows';
import { HISTORY_DDL } from './historyStore';
import { ensureReadClassCounts } from './readClassCounts';
import { READ_CLASS_SORT_INDEX } from './readClassIndex';
import { emptyReadModels } from './emptyReadModels';
import { tableExists } from './sqlHelpers';

/**
 * Replay mode of the embedded read models (`rebuild` only; the live projector and `verify` never enter it).
 *
 * While the whole log is replayed into emptied read models, the derived state that is a function of the final rows
 * is not maintained row by row but computed set-wise once, after the last chunk (one sort and one B-tree build each
 * instead of one B-tree insert per event):
 *  - the per-read-class counts (`rm_folder_read_counts`, a pure function of `rm_folders`): table and triggers are
 *    dropped, and `ensureReadClassCounts` creates and counts them again;
 *  - the child-folder counts (`rm_folder_child_counts`): the insert trigger is dropped; the delete and move triggers
 *    are replaced by ones that only record the parent that lost a child (a row with n = 0, as the live triggers leave
 *    one behind: a row exists for every parent that ever had a child folder), and the counts are set from a
 *    `GROUP BY` at the end, so the table equals the live one, zero rows included;
 *  - the full-text indexes (FTS5 flushes its pending terms to disk at every statement savepoint, i.e. at every
 *    insert with triggers: ~45% of a replay's CPU): a plain table of the same name and columns takes the replay's
 *    writes, and the FTS table is loaded from it in one statement, rowids included (they are the keys the live rows
 *    hold, searchRows.ts);
 *  - secondary indexes that no projection write reads (the listing sort index, the parent+name index the
 *    commands' sibling lookups use, the read-class listing index, the ACL principal index, the point-in-time parent
 *    index): dropped, and created again by their `CREATE INDEX IF NOT EXISTS`. Subtree events walk a subtree down
 *    the listing sort index (folderTree.ts): the first of them in the log creates it again (`ensureWalkIndex`), and
 *    the replay maintains it from there on; a log without any never does.
 * The history TEMP triggers stay (their rows carry each event's position), and so does the base parent index. Folder creations, most of a log, are not written one statement at a time but
 * buffered and written per table with multi-row inserts, their history rows included (replayFolderCreations.ts); a
 * batch of creations alone is written by the replay's writer thread on its own connection (replayWriter.ts).
 *
 * Interrupted replays heal: the replay triggers mark the file as "derived state pending", and opening the read
 * models (`SqliteReadModel`'s constructor) completes it before anything else reads or projects; the checkpoint of the
 * last committed chunk then says where projection resumes.
 */
const FTS_TABLES = ['rm_folders_fts', 'rm_items_fts', 'rm_collections_fts'];
const FTS_DDL = (name: string) =>
  `CREATE VIRTUAL TABLE IF NOT EXISTS ${name} USING fts5(id UNINDEXED, name, description, tokenize = 'porter unicode61')`;
const REPLAY_MARK = 'rm_folders_count_replay_delete';
const DEFERRED_INDEXES = ['rm_folders_parent_name', READ_CLASS_SORT_INDEX, 'rm_acl_principal', 'rm_folder_tree_parent'];
const LIVE_TRIGGERS = [
  'rm_folders_count_insert',
  'rm_folders_count_delete',
  'rm_folders_count_move',
  'rm_folders_read_count_insert',
  'rm_folders_read_count_delete',
  'rm_folders_read_count_update',
];
const REPLAY_TRIGGERS = `
CREATE TRIGGER ${REPLAY_MARK} AFTER DELETE ON rm_folders BEGIN
  INSERT OR IGNORE INTO rm_folder_child_counts (parent_id, parent_type, n) VALUES (old.parent_id, old.parent_type, 0);
END;
CREATE TRIGGER rm_folders_count_replay_move AFTER UPDATE OF parent_id, parent_type ON rm_folders
WHEN old.parent_id IS NOT new.parent_id OR old.parent_type IS NOT new.parent_type BEGIN
  INSERT OR IGNORE INTO rm_folder_child_counts (parent_id, parent_type, n) VALUES (old.parent_id, old.parent_type, 0);
END;
`;

const isVirtual = (db: SqliteDatabase, name: string) =>
  (
    db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) as
      { sql: string } | undefined
  )?.sql
    .toUpperCase()
    .includes('VIRTUAL TABLE') === true;

/** Whether a replay started on this file and its derived state is not computed yet. */
export function replayPending(db: SqliteDatabase): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?").get(REPLAY_MARK) !== undefined;
}

/**
 * Empties the read models and enters replay mode, in one transaction, before the first event. The live triggers,
 * the full-text tables and the deferred indexes go first, so that emptying the tables is mostly SQLite's truncation
 * (pages freed whole) instead of a trigger run, an FTS5 delete and index deletes per row: on a 50k-folder read model
 * that halved the time `reset()` took.
 */
export function beginReplay(db: SqliteDatabase): void {
  db.transaction(() => {
    for (const name of LIVE_TRIGGERS) db.exec(`DROP TRIGGER IF EXISTS ${name}`);
    db.exec(`DROP TRIGGER IF EXISTS ${REPLAY_MARK}; DROP TRIGGER IF EXISTS rm_folders_count_replay_move;`);
    db.exec('DROP TABLE IF EXISTS rm_folder_read_counts');
    for (const name of DEFERRED_INDEXES) db.exec(`DROP INDEX IF EXISTS ${name}`);
    // A plain table under the FTS table's name takes the replay's writes (inserts, updates and deletes by rowid, the
    // live rows' search keys) at B-tree cost. Its rowid is declared, as VACUUM keeps only such rowids for certain.
    for (const name of FTS_TABLES) {
      if (!isVirtual(db, name)) continue;
      db.exec(`DROP TABLE ${name}; CREATE TABLE ${name} (rowid INTEGER PRIMARY KEY, id, name, description)`);
    }
    emptyReadModels(db);
    db.exec(REPLAY_TRIGGERS);
  })();
}

/**
 * Leaves replay mode: computes the deferred state set-wise and restores the live triggers and indexes. Idempotent;
 * run after the last chunk, and on opening a file left in replay mode. Two transactions: {@link completeDerivedState},
 * then {@link completeReadClassCounts}, which ends replay mode.
 */
export function completeReplay(db: SqliteDatabase): void {
  completeDerivedState(db);
  completeReadClassCounts(db);
}

/**
 * The child counts, the deferred indexes and the full-text tables, in one transaction. Replay mode goes on (its
 * mark stays): a stop after this commits is completed on the next open, as before it.
 */
export function completeDerivedState(db: SqliteDatabase): void {
  db.transaction(() => {
    db.exec(`INSERT INTO rm_folder_child_counts (parent_id, parent_type, n)
      SELECT parent_id, parent_type, COUNT(*) FROM rm_folders WHERE true GROUP BY parent_id, parent_type
      ON CONFLICT (parent_id, parent_type) DO UPDATE SET n = excluded.n`);
    db.exec(FOLDERS_DDL);
    db.exec(ACL_DDL);
    db.exec(HISTORY_DDL);
    for (const name of FTS_TABLES) {
      if (isVirtual(db, name) || !tableExists(db, name)) continue;
      // Same rows and rowids (the live rows' search keys) as the live FTS table would hold; one bulk load, flushed
      // by size.
      db.exec(`ALTER TABLE ${name} RENAME TO ${name}_replay; ${FTS_DDL(name)};
        INSERT INTO ${name} (rowid, id, name, description) SELECT rowid, id, name, description FROM ${name}_replay ORDER BY rowid;
        DROP TABLE ${name}_replay;`);
    }
  })();
}

/**
 * The per-read-class counts, and the end of replay mode (the replay triggers dropped), in one transaction. `counted`:
 * the counts already read on another connection (`COUNT_READ_CLASSES`, by the replay's writer thread while
 * this connection ran {@link completeDerivedState}); counted here otherwise.
 */
export function completeReadClassCounts(db: SqliteDatabase, counted?: unknown[][]): void {
  db.transaction(() => {
    ensureReadClassCounts(db, counted);
    db.exec(`DROP TRIGGER IF EXISTS ${REPLAY_MARK}; DROP TRIGGER IF EXISTS rm_folders_count_replay_move;`);
  })();
}
