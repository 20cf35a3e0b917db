import type Database from 'better-sqlite3';

/**
 * Turns an embedded read-model file back into the schema from before the search keys
 * (src/infra/readmodel/sqlite/searchRows.ts): no `search_rowid` column, and search rows renumbered from `firstRowid`
 * in another order than the live rows, so that a migration can only match them by id.
 */
export function dropSearchKeys(db: Database.Database, firstRowid: number): void {
  for (const table of ['rm_folders', 'rm_items', 'rm_collections']) {
    db.exec(`ALTER TABLE ${table} DROP COLUMN search_rowid;
      CREATE TEMP TABLE old_search AS SELECT id, name, description FROM ${table}_fts;
      DELETE FROM ${table}_fts;
      INSERT INTO ${table}_fts (rowid, id, name, description)
        SELECT ${firstRowid - 1} + ROW_NUMBER() OVER (ORDER BY id DESC), id, name, description FROM old_search;
      DROP TABLE old_search;`);
  }
}
