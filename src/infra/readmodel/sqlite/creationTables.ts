import { prepared } from '../../sqlite/preparedStatements';
import { RowBuffer } from './rowBuffer';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import { FOLDER_ROW_COLUMNS } from './foldersTable';

/**
 * The rows that folder creations of a replay write (replayFolderCreations.ts), one buffer per table, and how they are
 * written: on the connection that buffered them, or handed over to the replay's writer thread (replayWriter.ts),
 * whose connection writes them with buffers of its own.
 */
export interface CreatedRows {
  /** The folders created: their ACL rows are deleted before the new ones are written, as `AclRows.replace` does. */
  ids: string[];
  /** Each table's values, in the order of {@link CREATION_TABLES}. */
  tables: unknown[][];
}

/** The tables a creation writes, in the order they are written: each as an INSERT without VALUES, and its width. */
const CREATION_TABLES: [insert: string, columns: number][] = [
  [`INSERT INTO rm_folders (${FOLDER_ROW_COLUMNS.join(', ')})`, FOLDER_ROW_COLUMNS.length],
  ['INSERT OR REPLACE INTO rm_acl (resource_id, principal_type, principal_id, level)', 4],
  ['INSERT INTO rm_folders_fts (rowid, id, name, description)', 4],
  [
    `INSERT OR REPLACE INTO rm_folder_tree (folder_id, from_position, to_position, parent_type, parent_id,
      base_parent_type, base_parent_id)`,
    7,
  ],
  ['INSERT OR REPLACE INTO rm_folder_sizes (folder_id, position, size)', 3],
];

/** The creation tables' buffers on one connection. */
export class CreationTables {
  readonly folders: RowBuffer;
  readonly acl: RowBuffer;
  readonly search: RowBuffer;
  readonly placements: RowBuffer;
  readonly sizes: RowBuffer;
  private readonly buffers: RowBuffer[];

  constructor(private readonly db: SqliteDatabase) {
    this.buffers = CREATION_TABLES.map(([insert, columns]) => new RowBuffer(db, insert, columns));
    [this.folders, this.acl, this.search, this.placements, this.sizes] = this.buffers;
  }

  /** Hands over the rows added since the last take (null when there are none). */
  take(ids: string[]): CreatedRows | null {
    if (ids.length === 0) return null;
    return { ids, tables: this.buffers.map((rows) => rows.take()) };
  }

  /** Writes created rows (taken from this connection's buffers or another's), in creation order. */
  write(rows: CreatedRows): void {
    prepared(this.db, 'DELETE FROM rm_acl WHERE resource_id IN (SELECT value FROM json_each(?))').run(
      JSON.stringify(rows.ids),
    );
    rows.tables.forEach((values, table) => this.buffers[table].write(values));
  }

  /** Forgets the rows not written. */
  clear(): void {
    for (const rows of this.buffers) rows.clear();
  }
}
