import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type {
  FolderDoc,
  FolderPlacement,
  FolderRestoreWrite,
  HistoryQueries,
  HistoryWrites,
  ItemDoc,
  RemovedFolder,
  RemovedItem,
} from '../../../ports/readModel';
import { KEPT_SUBTREE, keepRemoved, restoreKept, RESTORE_TEMP_DDL } from './removedRows';
import type { ParentType, RootType } from '../../../domain/parents';

/**
 * History support of the embedded read models (docs/events.md): what audit, point-in-time reads and restore need
 * beyond the live tables, maintained inside each event's read-model transaction like every other table, so a rebuild
 * produces exactly the same rows (the `verify` CLI compares them too).
 *
 * 1. Removed rows. A folder delete or clear removes a whole subtree set-wise (docs/subtree-operations.md); just before,
 *    `keepRemoved` copies the rows it is about to remove into `rm_deleted_folders`, `rm_deleted_items` and
 *    `rm_deleted_files`, keyed by the operation's log position and stamped with its time. `restoreFolder` moves a
 *    folder's part of them back (FolderRestored), and the blob reclaimer keeps the bytes those files reference for
 *    BLOB_RETENTION_DAYS. A restore walks the removed subtree down from the restored folder through the kept
 *    folders' parents (a recursive query on `rm_deleted_folders_parent`), so no ancestry table is kept (the DDL drops
 *    `rm_deleted_folder_ancestors` from files of earlier versions). The writes are in removedRows.ts.
 *
 * 2. Tree placement over time, for point-in-time listings: `rm_folder_tree(folder_id, from_position, to_position,
 *    parent…, base parent…)` holds one row per interval during which a folder sat under one parent (and root). The
 *    alternative, reading `$all` up to `at` and replaying every folder event in memory, costs the whole log per request
 *    and would have to re-implement the set-wise rules of copies (which descendants the copier could read then) and
 *    subtree deletes. An index maintained from the read model's own changes is correct for every way a folder enters
 *    or leaves a parent (create, move, copy, delete, clear, the delete races, restore) by construction: it is written
 *    by TEMP triggers on `rm_folders` that fire on any insert, delete, or change of the positional columns, so no
 *    writer has to remember it. `rm_folder_sizes(folder_id, position, size)` records a folder's size (the items
 *    directly in it, a sum over other aggregates' streams that the folder's own events do not carry) the same way.
 *
 * The triggers are TEMP (per connection) and only fire inside `apply` (the event's position is known then through the
 * `rm_event_position()` SQL function): connections that do not project, and `reset()`, leave the index alone.
 */
export const HISTORY_DDL = `
CREATE TABLE IF NOT EXISTS rm_deleted_folders (
  position INTEGER NOT NULL, id TEXT NOT NULL, root_id TEXT NOT NULL, operation TEXT NOT NULL, deleted_at TEXT NOT NULL,
  parent_type TEXT NOT NULL, parent_id TEXT NOT NULL, name TEXT NOT NULL, lower_name TEXT NOT NULL, base_parent_type TEXT NOT NULL,
  base_parent_id TEXT NOT NULL, public INTEGER NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL, size INTEGER NOT NULL, doc TEXT NOT NULL,
  PRIMARY KEY (position, id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rm_deleted_folders_id ON rm_deleted_folders (id, position);
CREATE INDEX IF NOT EXISTS rm_deleted_folders_parent ON rm_deleted_folders (position, parent_id);
DROP TABLE IF EXISTS rm_deleted_folder_ancestors;
CREATE TABLE IF NOT EXISTS rm_deleted_items (
  position INTEGER NOT NULL, id TEXT NOT NULL, deleted_at TEXT NOT NULL, folder_id TEXT NOT NULL, name TEXT NOT NULL, lower_name TEXT NOT NULL,
  base_parent_type TEXT NOT NULL, base_parent_id TEXT NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL, size INTEGER NOT NULL,
  doc TEXT NOT NULL, PRIMARY KEY (position, id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rm_deleted_items_folder ON rm_deleted_items (position, folder_id);
CREATE INDEX IF NOT EXISTS rm_deleted_items_id ON rm_deleted_items (id, position);
CREATE TABLE IF NOT EXISTS rm_deleted_files (
  position INTEGER NOT NULL, id TEXT NOT NULL, deleted_at TEXT NOT NULL, item_id TEXT NOT NULL, name TEXT NOT NULL, blob_id TEXT NOT NULL,
  size INTEGER NOT NULL, created TEXT NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (position, id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rm_deleted_files_item ON rm_deleted_files (position, item_id);
CREATE INDEX IF NOT EXISTS rm_deleted_files_blob ON rm_deleted_files (blob_id, deleted_at);
CREATE INDEX IF NOT EXISTS rm_deleted_files_at ON rm_deleted_files (deleted_at);
CREATE TABLE IF NOT EXISTS rm_folder_tree (
  folder_id TEXT NOT NULL, from_position INTEGER NOT NULL, to_position INTEGER, parent_type TEXT NOT NULL, parent_id TEXT NOT NULL,
  base_parent_type TEXT NOT NULL, base_parent_id TEXT NOT NULL, PRIMARY KEY (folder_id, from_position)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rm_folder_tree_parent ON rm_folder_tree (parent_id, from_position);
CREATE TABLE IF NOT EXISTS rm_folder_sizes (
  folder_id TEXT NOT NULL, position INTEGER NOT NULL, size INTEGER NOT NULL, PRIMARY KEY (folder_id, position)) WITHOUT ROWID;
`;

const close = (table: string) => `
  UPDATE main.${table} SET to_position = rm_event_position() WHERE folder_id = old.id AND to_position IS NULL;`;
const place = `
  INSERT OR REPLACE INTO main.rm_folder_tree (folder_id, from_position, to_position, parent_type, parent_id, base_parent_type, base_parent_id)
  VALUES (new.id, rm_event_position(), NULL, new.parent_type, new.parent_id, new.base_parent_type, new.base_parent_id);`;
const sized = `
  INSERT OR REPLACE INTO main.rm_folder_sizes (folder_id, position, size) VALUES (new.id, rm_event_position(), new.size);`;

const TRIGGERS = `
CREATE TEMP TRIGGER IF NOT EXISTS rm_history_folder_inserted AFTER INSERT ON main.rm_folders
WHEN rm_event_position() IS NOT NULL BEGIN ${place} ${sized} END;
CREATE TEMP TRIGGER IF NOT EXISTS rm_history_folder_placed AFTER UPDATE OF parent_type, parent_id, base_parent_type, base_parent_id ON main.rm_folders
WHEN rm_event_position() IS NOT NULL AND (old.parent_type IS NOT new.parent_type OR old.parent_id IS NOT new.parent_id
  OR old.base_parent_type IS NOT new.base_parent_type OR old.base_parent_id IS NOT new.base_parent_id)
BEGIN ${close('rm_folder_tree')} ${place} END;
CREATE TEMP TRIGGER IF NOT EXISTS rm_history_folder_sized AFTER UPDATE OF size ON main.rm_folders
WHEN rm_event_position() IS NOT NULL AND old.size IS NOT new.size BEGIN ${sized} END;
CREATE TEMP TRIGGER IF NOT EXISTS rm_history_folder_deleted AFTER DELETE ON main.rm_folders
WHEN rm_event_position() IS NOT NULL BEGIN ${close('rm_folder_tree')} END;
`;

/** Per connection: the position of the event being applied (null outside `apply`), read by `rm_event_position()`. */
interface ConnectionState {
  position: bigint | null;
}
const connections = new WeakMap<SqliteDatabase, ConnectionState>();

function connectionState(db: SqliteDatabase): ConnectionState {
  let state = connections.get(db);
  if (!state) {
    const created: ConnectionState = { position: null };
    state = created;
    connections.set(db, created);
    db.function('rm_event_position', () => created.position);
    db.exec(RESTORE_TEMP_DDL);
    db.exec(TRIGGERS);
  }
  return state;
}

interface FolderRow {
  id: string;
  parent_type: ParentType;
  parent_id: string;
  base_parent_type: RootType;
  base_parent_id: string;
  doc: string;
}

function folderDoc(row: FolderRow): FolderDoc {
  return {
    ...(JSON.parse(row.doc) as FolderDoc),
    parentCollection: row.parent_type,
    parentId: row.parent_id,
    baseParentType: row.base_parent_type,
    baseParentId: row.base_parent_id,
  };
}

export class SqliteHistory implements HistoryQueries, HistoryWrites {
  private readonly state: ConnectionState;

  constructor(private readonly db: SqliteDatabase) {
    db.exec(HISTORY_DDL);
    this.state = connectionState(db);
  }

  /**
   * Runs one event's projection writes with its position visible to the history triggers; `null` runs writes that the
   * triggers must not record (rows whose history the writer records itself: replayFolderCreations.ts).
   */
  during<T>(position: bigint | null, write: () => T): T {
    const previous = this.state.position;
    this.state.position = position;
    try {
      return write();
    } finally {
      this.state.position = previous;
    }
  }

  // ---- queries ----

  async removedFolder(id: string): Promise<RemovedFolder | null> {
    if (prepared(this.db, 'SELECT 1 FROM rm_folders WHERE id = ?').get(id)) return null;
    const row = prepared(
      this.db,
      `SELECT position, root_id, operation, deleted_at, id, parent_type, parent_id,
        base_parent_type, base_parent_id, doc
         FROM rm_deleted_folders WHERE id = ? ORDER BY position DESC LIMIT 1`,
    )
      .safeIntegers(true)
      .get(id) as
      | (FolderRow & { position: bigint; root_id: string; operation: 'deleted' | 'cleared'; deleted_at: string })
      | undefined;
    if (!row) return null;
    return {
      doc: folderDoc(row),
      position: row.position,
      rootId: row.root_id,
      operation: row.operation,
      at: row.deleted_at,
    };
  }

  async removedItem(id: string): Promise<RemovedItem | null> {
    if (prepared(this.db, 'SELECT 1 FROM rm_items WHERE id = ?').get(id)) return null;
    const row = prepared(
      this.db,
      `SELECT position, deleted_at, id, folder_id, base_parent_type, base_parent_id, size, doc
         FROM rm_deleted_items WHERE id = ? ORDER BY position DESC LIMIT 1`,
    )
      .safeIntegers(true)
      .get(id) as
      | {
          position: bigint;
          deleted_at: string;
          id: string;
          folder_id: string;
          base_parent_type: RootType;
          base_parent_id: string;
          size: bigint;
          doc: string;
        }
      | undefined;
    if (!row) return null;
    const doc: ItemDoc = {
      ...(JSON.parse(row.doc) as ItemDoc),
      folderId: row.folder_id,
      baseParentType: row.base_parent_type,
      baseParentId: row.base_parent_id,
      size: Number(row.size),
    };
    return { doc, position: row.position, at: row.deleted_at };
  }

  async restorable(folderId: string, position: bigint): Promise<{ folderIds: string[]; blobIds: string[] }> {
    const folderIds = prepared(this.db, `${KEPT_SUBTREE} SELECT id FROM kept_subtree`)
      .pluck()
      .all({ dp: position, id: folderId }) as string[];
    if (folderIds.length === 0) return { folderIds, blobIds: [] };
    const blobIds = prepared(
      this.db,
      `SELECT DISTINCT fl.blob_id FROM rm_deleted_files fl
        JOIN rm_deleted_items i ON i.position = fl.position AND i.id = fl.item_id
         WHERE fl.position = @position AND i.folder_id IN (SELECT value FROM json_each(@ids))`,
    )
      .pluck()
      .all({ position, ids: JSON.stringify(folderIds) }) as string[];
    return { folderIds, blobIds };
  }

  async isBlobRetained(blobId: string, since: string): Promise<boolean> {
    return (
      prepared(this.db, 'SELECT 1 FROM rm_deleted_files WHERE blob_id = ? AND deleted_at >= ? LIMIT 1').get(
        blobId,
        since,
      ) !== undefined
    );
  }

  async blobIdsRemovedBetween(from: string, to: string): Promise<string[]> {
    return prepared(this.db, 'SELECT DISTINCT blob_id FROM rm_deleted_files WHERE deleted_at >= ? AND deleted_at < ?')
      .pluck()
      .all(from, to) as string[];
  }

  async placementAt(folderId: string, position: bigint): Promise<FolderPlacement | null> {
    const row = prepared(
      this.db,
      `SELECT folder_id, parent_type, parent_id, base_parent_type, base_parent_id, from_position, to_position
        FROM rm_folder_tree
         WHERE folder_id = @id AND from_position <= @at AND (to_position IS NULL OR to_position > @at)
         ORDER BY from_position DESC LIMIT 1`,
    )
      .safeIntegers(true)
      .get({ id: folderId, at: position }) as
      | {
          folder_id: string;
          parent_type: ParentType;
          parent_id: string;
          base_parent_type: RootType;
          base_parent_id: string;
          from_position: bigint;
          to_position: bigint | null;
        }
      | undefined;
    if (!row) return null;
    return {
      folderId: row.folder_id,
      parentType: row.parent_type,
      parentId: row.parent_id,
      baseParentType: row.base_parent_type,
      baseParentId: row.base_parent_id,
      from: row.from_position,
      to: row.to_position,
    };
  }

  async childrenAt(parentType: ParentType, parentId: string, position: bigint): Promise<string[]> {
    return prepared(
      this.db,
      `SELECT DISTINCT folder_id FROM rm_folder_tree
         WHERE parent_id = @parent AND parent_type = @type AND from_position <= @at
         AND (to_position IS NULL OR to_position > @at)`,
    )
      .pluck()
      .all({ parent: parentId, type: parentType, at: position }) as string[];
  }

  async sizeAt(folderId: string, position: bigint): Promise<number> {
    const size = prepared(
      this.db,
      'SELECT size FROM rm_folder_sizes WHERE folder_id = ? AND position <= ? ORDER BY position DESC LIMIT 1',
    )
      .pluck()
      .get(folderId, position) as number | undefined;
    return size ?? 0;
  }

  // ---- projection writes (synchronous, inside the event's transaction: removedRows.ts) ----

  keepRemoved(folderId: string, keepRoot: boolean, position: bigint, at: string): void {
    keepRemoved(this.db, folderId, keepRoot, position, at);
  }

  restoreFolder(r: FolderRestoreWrite, position: bigint): void {
    restoreKept(this.db, r, position);
  }
}
