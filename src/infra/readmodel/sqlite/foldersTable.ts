import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { FolderDoc } from '../../../ports/readModel';
import { tableExists, toBit } from './sqlHelpers';
import type { ListedTable } from './heavyReads';
import { dropClosureTable, PARENT_SORT_INDEX, type FolderBase } from './folderTree';
import { ensureReadClassCounts } from './readClassCounts';
import { READ_CLASS_SORT_INDEX_DDL } from './readClassIndex';
import { ensureSearchKeys } from './searchRows';
import type { ParentType, RootType } from '../../../domain/parents';

/**
 * Folders: positional fields live in columns (parent, base parent), the rest in a JSON document; subtrees and
 * ancestors are walked through the parent links (folderTree.ts); text search is an FTS5 index with the porter stemmer,
 * its rows keyed by `search_rowid` (searchRows.ts).
 *
 * `rm_folder_child_counts` holds each parent's number of child folders, kept by triggers on `rm_folders` (so every
 * write path, set-wise subtree work included, keeps it right, and a rebuild rebuilds it): a listing that every child
 * passes (a site admin's, without a name or text filter) reads its `Girder-Total-Count` there instead of counting
 * the siblings. `rm_folder_read_counts` (readClassCounts.ts) does the same for everyone else: counts per parent and
 * read class, from which a viewer's readable total is a sum over a few rows; when it equals the parent's total (the
 * viewer reads every child, the usual case), the page is read without the ACL filter too.
 *
 * `rm_folders_parent_sort` serves the default listing (a parent's children by `lowerName`, ties by id) from the index
 * alone: a page, and the rows an offset skips, never touch the table. It holds the parent type and the id for that:
 * without them each skipped row would be read from the table, and ties sorted.
 */
export const FOLDERS_DDL = `
CREATE TABLE IF NOT EXISTS rm_folders (
  id TEXT PRIMARY KEY, parent_type TEXT NOT NULL, parent_id TEXT NOT NULL, name TEXT NOT NULL,
  lower_name TEXT NOT NULL, base_parent_type TEXT NOT NULL, base_parent_id TEXT NOT NULL, public INTEGER NOT NULL,
  created TEXT NOT NULL, updated TEXT NOT NULL, size INTEGER NOT NULL, doc TEXT NOT NULL,
  search_rowid INTEGER);
CREATE INDEX IF NOT EXISTS rm_folders_parent_name ON rm_folders (parent_id, parent_type, name);
DROP INDEX IF EXISTS rm_folders_parent_lower;
${PARENT_SORT_INDEX};
${READ_CLASS_SORT_INDEX_DDL};
CREATE INDEX IF NOT EXISTS rm_folders_base ON rm_folders (base_parent_id);
CREATE TABLE IF NOT EXISTS rm_folder_child_counts (
  parent_id TEXT NOT NULL, parent_type TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (parent_id, parent_type)) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS rm_folders_count_insert AFTER INSERT ON rm_folders BEGIN
  INSERT INTO rm_folder_child_counts (parent_id, parent_type, n) VALUES (new.parent_id, new.parent_type, 1)
  ON CONFLICT (parent_id, parent_type) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS rm_folders_count_delete AFTER DELETE ON rm_folders BEGIN
  UPDATE rm_folder_child_counts SET n = n - 1 WHERE parent_id = old.parent_id AND parent_type = old.parent_type;
END;
CREATE TRIGGER IF NOT EXISTS rm_folders_count_move AFTER UPDATE OF parent_id, parent_type ON rm_folders
WHEN old.parent_id IS NOT new.parent_id OR old.parent_type IS NOT new.parent_type BEGIN
  UPDATE rm_folder_child_counts SET n = n - 1 WHERE parent_id = old.parent_id AND parent_type = old.parent_type;
  INSERT INTO rm_folder_child_counts (parent_id, parent_type, n) VALUES (new.parent_id, new.parent_type, 1)
  ON CONFLICT (parent_id, parent_type) DO UPDATE SET n = n + 1;
END;
CREATE VIRTUAL TABLE IF NOT EXISTS rm_folders_fts USING fts5(id UNINDEXED, name, description, tokenize = 'porter unicode61');
`;

export const COLUMNS = {
  lowerName: 'lower_name',
  name: 'name',
  created: 'created',
  updated: 'updated',
  size: 'size',
  _id: 'id',
  parentId: 'parent_id',
  parentCollection: 'parent_type',
  baseParentId: 'base_parent_id',
  public: 'public',
  baseParentType: 'base_parent_type',
};

/** A folder as read: {@link FOLDER_COLUMNS}' values in order (raw rows, readRows), then any column a query adds. */
export type FolderRow = [
  id: string,
  parentType: ParentType,
  parentId: string,
  baseParentType: RootType,
  baseParentId: string,
  doc: string,
  ...more: unknown[],
];

export const FOLDER_COLUMNS = 'f.id, f.parent_type, f.parent_id, f.base_parent_type, f.base_parent_id, f.doc';
export const SELECT = `SELECT ${FOLDER_COLUMNS} FROM rm_folders f`;
export const LISTED: ListedTable = { table: 'rm_folders', alias: 'f', columns: FOLDER_COLUMNS, sortColumns: COLUMNS };

/** Creates the folder tables (or brings a file from an earlier version up to date). */
export function ensureFolderTables(db: SqliteDatabase): void {
  const countsExisted = tableExists(db, 'rm_folder_child_counts');
  db.exec(FOLDERS_DDL);
  dropClosureTable(db);
  // A file from before the counts table: count once, the triggers keep it from here on.
  if (!countsExisted) {
    db.exec(
      `INSERT INTO rm_folder_child_counts (parent_id, parent_type, n) SELECT parent_id, parent_type, COUNT(*)
        FROM rm_folders GROUP BY parent_id, parent_type`,
    );
  }
  ensureReadClassCounts(db);
  ensureSearchKeys(db, 'rm_folders');
}

export function toDoc(row: FolderRow): FolderDoc {
  // The columns are set on the parsed object, not spread with it into a new one: the same keys in the same order, at
  // a fifth of the cost per row (a listing decodes fifty).
  const doc = JSON.parse(row[5]) as FolderDoc;
  doc.parentCollection = row[1];
  doc.parentId = row[2];
  doc.baseParentType = row[3];
  doc.baseParentId = row[4];
  return doc;
}

/** One folder row by a statement of {@link FOLDER_COLUMNS}. */
export function folderRow(db: SqliteDatabase, sql: string, ...args: unknown[]): FolderRow | undefined {
  return prepared<unknown[], FolderRow>(db, sql)
    .raw(true)
    .get(...args);
}

/** What the JSON column holds: everything but the positional fields kept in columns. */
export function jsonPart(doc: Partial<FolderDoc>): Record<string, unknown> {
  const { parentCollection, parentId, baseParentType, baseParentId, ...rest } = doc;
  return rest;
}

/** A folder as a creation writes it: the base parent is derived from the parent. */
export type NewFolder = Omit<FolderDoc, 'baseParentType' | 'baseParentId'>;

/** The columns of an `rm_folders` row, in the order of {@link folderRowValues}. */
export const FOLDER_ROW_COLUMNS = [
  'id',
  'parent_type',
  'parent_id',
  'name',
  'lower_name',
  'base_parent_type',
  'base_parent_id',
  'public',
  'created',
  'updated',
  'size',
  'doc',
  'search_rowid',
] as const;

/** The `rm_folders` row of a new folder (see {@link FOLDER_ROW_COLUMNS}), with the key of its search row. */
export function folderRowValues(doc: NewFolder, base: FolderBase, searchRowid: number): unknown[] {
  return [
    doc._id,
    doc.parentCollection,
    doc.parentId,
    doc.name,
    doc.name.toLowerCase(),
    base.type,
    base.id,
    toBit(doc.public),
    doc.created,
    doc.updated,
    doc.size,
    JSON.stringify(jsonPart(doc)),
    searchRowid,
  ];
}
