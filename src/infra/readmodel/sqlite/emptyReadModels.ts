import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';

/**
 * Deletes every row of the read models (the `rm_` tables, checkpoints included; FTS5 shadow tables are emptied
 * through their virtual table). Runs inside the caller's transaction.
 */
export function emptyReadModels(db: SqliteDatabase): void {
  const tables = prepared(
    db,
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rm\\_%' ESCAPE '\\' AND name NOT LIKE '%fts\\_%' ESCAPE '\\'",
  ).all() as { name: string }[];
  for (const { name } of tables) prepared(db, `DELETE FROM "${name}"`).run();
}
