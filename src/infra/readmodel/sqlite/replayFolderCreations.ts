import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { ReadModelTx } from '../../../ports/readModel';
import { notStored } from '../notStored';
import { FOLDER_ROW_COLUMNS, folderRowValues, parentBase, type FolderBase, type NewFolder } from './foldersStore';
import type { SqliteHistory } from './historyStore';

/**
 * Folder creations of a replay, written set-wise (replay mode only, replayMode.ts). A live creation runs about ten
 * statements per folder (the parent's presence, base and ancestors, the row with its history triggers, the ancestry,
 * the ACL and the search rows); in a replay, where most of the log is creations, that per-statement overhead was
 * most of the CPU. Here a creation only computes its row (the same values as the live insert) and stages it, a
 * batch of rows per statement, in a TEMP table; {@link flush} then writes every derived row with one statement per
 * table:
 *  - `rm_folders`, in creation order (rowids as the live inserts give them);
 *  - the ancestry, walked up the parent chain (the closure of the live inserts: parent at depth 1, then its ancestors);
 *  - the ACL rows from the document's `access` (users, then groups, the last entry of a principal winning, as the
 *    live `INSERT OR REPLACE` per entry);
 *  - the search rows in creation order (the same rowids);
 *  - the history rows the live insert trigger writes (placement and size at the event's position).
 * A staged creation must be in the tables before anything else reads or writes them, so every write of the
 * transaction other than a creation flushes first ({@link deferringCreations}), and the batch flushes before its
 * checkpoint is written: what commits is what the live path commits.
 */
const STAGED_COLUMNS = ['position', ...FOLDER_ROW_COLUMNS, 'description'] as const;
/** Rows per staging statement (14 bound values each). */
const ROWS_PER_STATEMENT = 64;

const STAGING_DDL = `CREATE TEMP TABLE IF NOT EXISTS replay_folders (seq INTEGER PRIMARY KEY, ${STAGED_COLUMNS.join(', ')})`;
const stageSql = (rows: number) =>
  `INSERT INTO temp.replay_folders (${STAGED_COLUMNS.join(', ')}) VALUES ${Array.from(
    { length: rows },
    () => `(${STAGED_COLUMNS.map(() => '?').join(', ')})`,
  ).join(', ')}`;

const FLUSH_SQL = [
  `INSERT INTO rm_folders (${FOLDER_ROW_COLUMNS.join(', ')})
    SELECT ${FOLDER_ROW_COLUMNS.join(', ')} FROM temp.replay_folders ORDER BY seq`,
  `WITH RECURSIVE up (folder_id, ancestor_id, depth) AS (
    SELECT id, parent_id, 1 FROM temp.replay_folders WHERE parent_type = 'folder'
    UNION ALL
    SELECT up.folder_id, f.parent_id, up.depth + 1 FROM up JOIN rm_folders f ON f.id = up.ancestor_id
    WHERE f.parent_type = 'folder')
  INSERT INTO rm_folder_ancestors (folder_id, ancestor_id, depth) SELECT folder_id, ancestor_id, depth FROM up`,
  'DELETE FROM rm_acl WHERE resource_id IN (SELECT id FROM temp.replay_folders)',
  `INSERT OR REPLACE INTO rm_acl (resource_id, principal_type, principal_id, level)
    SELECT s.id, 'user', e.value ->> '$.id', e.value ->> '$.level'
    FROM temp.replay_folders s, json_each(s.doc, '$.access.users') e ORDER BY s.seq, e.key`,
  `INSERT OR REPLACE INTO rm_acl (resource_id, principal_type, principal_id, level)
    SELECT s.id, 'group', e.value ->> '$.id', e.value ->> '$.level'
    FROM temp.replay_folders s, json_each(s.doc, '$.access.groups') e ORDER BY s.seq, e.key`,
  'INSERT INTO rm_folders_fts (id, name, description) SELECT id, name, description FROM temp.replay_folders ORDER BY seq',
  `INSERT OR REPLACE INTO rm_folder_tree (folder_id, from_position, to_position, parent_type, parent_id, base_parent_type, base_parent_id)
    SELECT id, position, NULL, parent_type, parent_id, base_parent_type, base_parent_id FROM temp.replay_folders ORDER BY seq`,
  `INSERT OR REPLACE INTO rm_folder_sizes (folder_id, position, size)
    SELECT id, position, size FROM temp.replay_folders ORDER BY seq`,
  'DELETE FROM temp.replay_folders',
];

export class ReplayFolderCreations {
  /** The event being applied: its position goes with the rows it creates. */
  position = 0n;
  /** Staged folders (not yet in `rm_folders`) and their base parents, which their children inherit. */
  private readonly staged = new Map<string, FolderBase>();
  /** Values of the rows not yet in the staging table. */
  private values: unknown[] = [];
  private rows = 0;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly history: SqliteHistory,
  ) {
    db.exec(STAGING_DDL);
  }

  /** Whether a folder is staged (present for the writes that follow it, though not in `rm_folders` yet). */
  has(id: string): boolean {
    return this.staged.has(id);
  }

  insert(doc: NewFolder): void {
    let base: FolderBase;
    if (doc.parentCollection === 'folder') {
      const parent = this.staged.get(doc.parentId) ?? parentBase(this.db, doc.parentId);
      // The projection guards the write on the parent (src/projections/lateEvents.ts).
      if (!parent) throw notStored('parent folder', doc.parentId, doc._id);
      base = parent;
    } else {
      base = { type: doc.parentCollection, id: doc.parentId };
    }
    this.staged.set(doc._id, base);
    this.values.push(this.position, ...folderRowValues(doc, base), doc.description);
    if (++this.rows === ROWS_PER_STATEMENT) this.stage();
  }

  /** Writes every staged creation to the read-model tables. */
  flush(): void {
    if (this.staged.size === 0) return;
    this.stage();
    // The history rows are written here with each creation's position: the history triggers must not record them.
    this.history.during(null, () => {
      for (const sql of FLUSH_SQL) prepared(this.db, sql).run();
    });
    this.staged.clear();
  }

  /** Forgets what is staged (its transaction rolled back). */
  discard(): void {
    this.staged.clear();
    this.values = [];
    this.rows = 0;
  }

  private stage(): void {
    if (this.rows === 0) return;
    prepared(this.db, stageSql(this.rows)).run(...this.values);
    this.values = [];
    this.rows = 0;
  }
}

/**
 * The transaction's writes as a replay runs them: folder creations are staged, and any other write (or the presence
 * check of a row that is not a staged folder) first flushes what is staged, so it finds the tables as the live path
 * leaves them.
 */
export function deferringCreations(tx: ReadModelTx, creations: ReplayFolderCreations): ReadModelTx {
  const flushingFirst = <T extends object>(target: T): T =>
    new Proxy(target, {
      get: (object, property) => {
        creations.flush();
        return Reflect.get(object, property) as unknown;
      },
    });
  const insert = (doc: NewFolder) => creations.insert(doc);
  const deferring: ReadModelTx = {
    ifPresent: (row, then, orElse) => {
      // Staged rows change no other row's presence: checking one needs no flush (a creation under a stored parent
      // stays staged).
      if (row.kind === 'folder' && creations.has(row.id)) return then(deferring);
      tx.ifPresent(row, () => then(deferring), orElse && (() => orElse(deferring)));
    },
    users: flushingFirst(tx.users),
    groups: flushingFirst(tx.groups),
    tokens: flushingFirst(tx.tokens),
    apiKeys: flushingFirst(tx.apiKeys),
    collections: flushingFirst(tx.collections),
    folders: new Proxy(tx.folders, {
      get: (object, property) => {
        if (property === 'insert') return insert;
        creations.flush();
        return Reflect.get(object, property) as unknown;
      },
    }),
    items: flushingFirst(tx.items),
    files: flushingFirst(tx.files),
    subtree: flushingFirst(tx.subtree),
    history: flushingFirst(tx.history),
  };
  return deferring;
}
