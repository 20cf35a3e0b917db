import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import { descendantsSql, ensureWalkIndex } from './folderTree';
import type { RootType } from '../../../domain/parents';

/**
 * The working set of a subtree removal, in TEMP tables of the connection: the folders (`remove` = 0 for a cleared
 * folder that stays), with the size and search key each removal step needs, and the items in them.
 *
 * A delete or clear first keeps the rows it removes (historyStore.ts `keepRemoved`), then removes them
 * (subtreeStore.ts), one after the other in the event's transaction: both read this one set, collected once, instead
 * of walking the subtree and joining its items twice (a tenth of a 100k-folder delete). `removal_of` says which
 * removal the set holds; it is a TEMP row like the set, so a rolled-back transaction takes both away together.
 */
const TEMP_DDL = `
CREATE TEMP TABLE IF NOT EXISTS removal_folders (
  id TEXT PRIMARY KEY, remove INTEGER NOT NULL, size INTEGER NOT NULL, search_rowid INTEGER) WITHOUT ROWID;
CREATE TEMP TABLE IF NOT EXISTS removal_items (id TEXT PRIMARY KEY, folder_id TEXT NOT NULL, search_rowid INTEGER) WITHOUT ROWID;
CREATE TEMP TABLE IF NOT EXISTS removal_of (folder_id TEXT NOT NULL, keep_root INTEGER NOT NULL, position INTEGER NOT NULL);
`;

const ready = new WeakSet<SqliteDatabase>();

function ensureTables(db: SqliteDatabase): void {
  if (ready.has(db)) return;
  db.exec(TEMP_DDL);
  ready.add(db);
}

/** Empties the working set. */
export function clearRemoval(db: SqliteDatabase): void {
  ensureTables(db);
  for (const table of ['removal_folders', 'removal_items', 'removal_of'])
    prepared(db, `DELETE FROM temp.${table}`).run();
}

/** The items of the folders collected, with their folders and search keys. */
function collectItems(db: SqliteDatabase): void {
  prepared(
    db,
    `INSERT INTO temp.removal_items (id, folder_id, search_rowid)
     SELECT i.id, i.folder_id, i.search_rowid FROM temp.removal_folders s CROSS JOIN rm_items i ON i.folder_id = s.id`,
  ).run();
}

/**
 * Collects the removal of a stored folder's subtree (with `keepRoot`, of what is under it only) for the event at
 * `position` (null: a removal no other step shares), unless the set already holds it.
 */
export function collectRemoval(db: SqliteDatabase, folderId: string, keepRoot: boolean, position: bigint | null): void {
  ensureTables(db);
  if (
    position !== null &&
    prepared(db, 'SELECT 1 FROM temp.removal_of WHERE folder_id = ? AND keep_root = ? AND position = ?').get(
      folderId,
      keepRoot ? 1 : 0,
      position,
    )
  )
    return;
  clearRemoval(db);
  ensureWalkIndex(db);
  prepared(
    db,
    `INSERT INTO temp.removal_folders (id, remove, size, search_rowid)
     SELECT f.id, 1, f.size, f.search_rowid FROM (${descendantsSql('@id')}) d CROSS JOIN rm_folders f ON f.id = d.id
     UNION ALL SELECT id, @remove, size, search_rowid FROM rm_folders WHERE id = @id`,
  ).run({ id: folderId, remove: keepRoot ? 0 : 1 });
  collectItems(db);
  if (position !== null)
    prepared(db, 'INSERT INTO temp.removal_of (folder_id, keep_root, position) VALUES (?, ?, ?)').run(
      folderId,
      keepRoot ? 1 : 0,
      position,
    );
}

/** Collects the removal of every folder rooted under a user or collection. */
export function collectRemovalUnderRoot(db: SqliteDatabase, rootType: RootType, rootId: string): void {
  clearRemoval(db);
  prepared(
    db,
    `INSERT INTO temp.removal_folders (id, remove, size, search_rowid)
     SELECT id, 1, size, search_rowid FROM rm_folders WHERE base_parent_id = ? AND base_parent_type = ?`,
  ).run(rootId, rootType);
  collectItems(db);
}
