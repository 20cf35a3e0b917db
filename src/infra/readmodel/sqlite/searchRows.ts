import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';

/**
 * The full-text search rows of folders, items and collections: `<table>_fts`, FTS5 tables `(id UNINDEXED, name,
 * description)`, one row per live row.
 *
 * A search row is found through its FTS5 rowid, which the live row stores in its `search_rowid` column: replacing or
 * deleting it is a rowid lookup, whatever the size of the table. (FTS5 cannot index `id`: `WHERE id = ?` scanned the
 * whole table, ~37 ms per folder at 213k folders.) The key is an explicit value because `rm_folders`, `rm_items` and
 * `rm_collections` have no INTEGER PRIMARY KEY: their own rowids are ones SQLite documents that VACUUM may renumber,
 * while a stored integer and the FTS5 rowid (the INTEGER PRIMARY KEY of its content table) never change.
 *
 * The search table allocates the keys (a new row gets the highest rowid plus one): a live row is written after its
 * search row, with that row's key. A rename or a new description re-indexes the search row under the same key, so
 * the live row is not written again for it. A search row is deleted just before its live row (whose key says which),
 * never on its own, so a key always names its own row.
 *
 * Searches still go through `id` (`WHERE <table>_fts MATCH ?` gives the ids, joined to the live table); the key is
 * for writes only, and internal: `dump()` leaves it out (a rebuild numbers the rows afresh).
 */
export type SearchedTable = 'rm_folders' | 'rm_items' | 'rm_collections';

/** Adds the search row of a live row about to be written; returns the key to store in its `search_rowid`. */
export function insertSearchRow(
  db: SqliteDatabase,
  table: SearchedTable,
  id: string,
  name: string,
  description: string,
): number {
  return Number(
    prepared(db, `INSERT INTO ${table}_fts (id, name, description) VALUES (?, ?, ?)`).run(id, name, description)
      .lastInsertRowid,
  );
}

/** Re-indexes a live row's name and description, under the same key. */
export function replaceSearchRow(
  db: SqliteDatabase,
  table: SearchedTable,
  id: string,
  name: string,
  description: string,
): void {
  prepared(
    db,
    `UPDATE ${table}_fts SET name = ?, description = ? WHERE rowid = (SELECT search_rowid FROM ${table} WHERE id = ?)`,
  ).run(name, description, id);
}

/** Deletes a live row's search row; runs before the live row is deleted (its key says which). */
export function deleteSearchRow(db: SqliteDatabase, table: SearchedTable, id: string): void {
  prepared(db, `DELETE FROM ${table}_fts WHERE rowid = (SELECT search_rowid FROM ${table} WHERE id = ?)`).run(id);
}

/**
 * The key after the highest one in use: set-wise inserts (copies, restores) number their new rows from it, in one
 * statement, and then insert the search rows under the keys the live rows got. A read of the search table's last
 * rowid (its content table's primary key, descending), not a scan.
 */
export function nextSearchRowid(db: SqliteDatabase, table: SearchedTable): number {
  const last = prepared(db, `SELECT rowid FROM ${table}_fts ORDER BY rowid DESC LIMIT 1`).pluck().get() as
    number | undefined;
  return (last ?? 0) + 1;
}

/**
 * A file from before the keys: adds the column and fills it from the search rows, matched by id once, set-wise (one
 * scan of the search table and an id lookup per row: ~1 s per 200k rows). Checked without a lock first, then again
 * under the write lock, so that processes opening an old file together migrate it once.
 */
export function ensureSearchKeys(db: SqliteDatabase, table: SearchedTable): void {
  const hasKey = () =>
    (db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(table) as string[]).includes('search_rowid');
  if (hasKey()) return;
  db.transaction(() => {
    if (hasKey()) return;
    db.exec(`ALTER TABLE ${table} ADD COLUMN search_rowid INTEGER`);
    db.exec(`UPDATE ${table} SET search_rowid = s.rowid FROM (SELECT rowid, id FROM ${table}_fts) s
      WHERE s.id = ${table}.id`);
  }).immediate();
}
