import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { FolderDoc, FolderListing, FolderQueries, FolderWrites, Page, PositionIn } from '../../../ports/readModel';
import type { AccessList, Level, Viewer } from '../../../domain/access';
import { ftsQuery, pagingSql, readableSql, tableExists, toBit } from './sqlHelpers';
import { listingScans, type HeavyReads, type ListedTable } from './heavyReads';
import { AclRows } from './aclRows';
import { addFolderSize, followFolderMove } from './sizes';
import { removeSubtree } from './subtreeStore';
import {
  ancestorsSql,
  descendantsSql,
  dropClosureTable,
  ensureWalkIndex,
  parentBase,
  type FolderBase,
  PARENT_SORT_INDEX,
  selfAndDescendantsSql,
} from './folderTree';
import { notStored } from '../notStored';
import { ensureReadClassCounts, readableChildCount } from './readClassCounts';
import { MAX_MERGED_CLASSES, READ_CLASS_SORT_INDEX_DDL, readClassesPageSql } from './readClassIndex';
import { deleteSearchRow, ensureSearchKeys, insertSearchRow, replaceSearchRow } from './searchRows';
import type { Paging } from '../../../domain/paging';
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
 * alone: a page, and the rows an offset skips, never touch the table (the former index lacked the parent type and
 * the id, so every skipped row was read from the table and ties were sorted).
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

const COLUMNS = {
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
type FolderRow = [
  id: string,
  parentType: ParentType,
  parentId: string,
  baseParentType: RootType,
  baseParentId: string,
  doc: string,
  ...more: unknown[],
];

const FOLDER_COLUMNS = 'f.id, f.parent_type, f.parent_id, f.base_parent_type, f.base_parent_id, f.doc';
const SELECT = `SELECT ${FOLDER_COLUMNS} FROM rm_folders f`;
const LISTED: ListedTable = { table: 'rm_folders', alias: 'f', columns: FOLDER_COLUMNS, sortColumns: COLUMNS };

/** Sorts an index of a parent's children serves (rm_folders_parent_sort, rm_folders_parent_name). */
const INDEX_SERVED_SORTS = new Set(['lowerName', 'name']);

/**
 * The WHERE clauses of a parent's listing: its children the viewer may read, with the name or text asked for; null
 * when the text can match nothing.
 */
function childClauses(o: {
  parentType: ParentType;
  parentId: string;
  viewer: Viewer | null;
  name?: string;
  text?: string;
}): { clauses: string[]; args: unknown[] } | null {
  const filter = readableSql('f', o.viewer);
  const clauses = ['f.parent_id = ?', 'f.parent_type = ?', filter.sql];
  const args: unknown[] = [o.parentId, o.parentType, ...filter.args];
  if (o.name !== undefined) {
    clauses.push('f.name = ?');
    args.push(o.name);
  }
  if (o.text !== undefined) {
    const query = ftsQuery(o.text);
    if (query === null) return null;
    clauses.push('f.id IN (SELECT id FROM rm_folders_fts WHERE rm_folders_fts MATCH ?)');
    args.push(query);
  }
  return { clauses, args };
}

function toDoc(row: FolderRow): FolderDoc {
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
function folderRow(db: SqliteDatabase, sql: string, ...args: unknown[]): FolderRow | undefined {
  return prepared<unknown[], FolderRow>(db, sql)
    .raw(true)
    .get(...args);
}

/** What the JSON column holds: everything but the positional fields kept in columns. */
function jsonPart(doc: Partial<FolderDoc>): Record<string, unknown> {
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

export class SqliteFolders implements FolderQueries, FolderWrites {
  private readonly acl: AclRows;
  constructor(
    private readonly db: SqliteDatabase,
    private readonly heavy: HeavyReads,
  ) {
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
    this.acl = new AclRows(db);
  }

  async get(id: string) {
    const row = folderRow(this.db, `${SELECT} WHERE f.id = ?`, id);
    return row ? toDoc(row) : null;
  }

  async getMany(ids: string[]) {
    const rows = prepared<unknown[], FolderRow>(this.db, `${SELECT} WHERE f.id IN (SELECT value FROM json_each(?))`)
      .raw(true)
      .all(JSON.stringify(ids));
    const byId = new Map(rows.map((r) => [r[0], toDoc(r)]));
    return ids.map((id) => byId.get(id)).filter((d): d is FolderDoc => d !== undefined);
  }

  async listChildren(o: {
    parentType: ParentType;
    parentId: string;
    viewer: Viewer | null;
    name?: string;
    text?: string;
    paging: Paging;
  }) {
    const filter = readableSql('f', o.viewer);
    const matching = childClauses(o);
    if (matching === null) return { rows: [], total: 0 };
    const { clauses, args } = matching;
    const heavy = listingScans(o, o.paging, INDEX_SERVED_SORTS);
    if (o.name !== undefined || o.text !== undefined)
      return this.page(`WHERE ${clauses.join(' AND ')}`, args, o.paging, { heavy });
    // Every child passes a site admin's unfiltered listing: its total is the maintained count.
    if (o.viewer?.admin)
      return this.page(`WHERE ${clauses.join(' AND ')}`, args, o.paging, {
        heavy,
        total: this.maintainedCount(o.parentType, o.parentId),
      });
    const { readable, all, readableClasses } = readableChildCount(this.db, o.parentType, o.parentId, o.viewer);
    if (readable === 0) return { rows: [], total: 0 };
    // The viewer reads every child: the page is the unfiltered walk of the parent's sort index.
    if (readable === all)
      return this.page('WHERE f.parent_id = ? AND f.parent_type = ?', [o.parentId, o.parentType], o.paging, {
        heavy,
        total: readable,
      });
    // Only some: the classes the viewer reads, merged in order (readClassIndex.ts).
    if (o.paging.sort === 'lowerName' && readableClasses.length <= MAX_MERGED_CLASSES) {
      const page = readClassesPageSql(
        FOLDER_COLUMNS,
        readableClasses,
        { type: o.parentType, id: o.parentId },
        filter,
        o.paging,
      );
      const [rows] = (await this.heavy.all([{ ...page, raw: true }], heavy)) as [FolderRow[]];
      return { rows: rows.map(toDoc), total: readable };
    }
    return this.page(`WHERE ${clauses.join(' AND ')}`, args, o.paging, { heavy, total: readable });
  }

  async positionInChildren(o: PositionIn<FolderListing>): Promise<number> {
    const matching = childClauses(o);
    if (matching === null) return 0;
    return this.heavy.position(LISTED, matching.clauses, matching.args, o.paging, o.id);
  }

  async positionInSearch(o: { text: string; viewer: Viewer | null; paging: Paging; id: string }): Promise<number> {
    const query = ftsQuery(o.text);
    if (query === null) return 0;
    const readable = readableSql('f', o.viewer);
    const clauses = ['f.id IN (SELECT id FROM rm_folders_fts WHERE rm_folders_fts MATCH ?)', readable.sql];
    return this.heavy.position(LISTED, clauses, [query, ...readable.args], o.paging, o.id);
  }

  async search(o: {
    text: string;
    viewer: Viewer | null;
    paging: Paging;
  }): Promise<Page<FolderDoc & { _textScore: number }>> {
    const query = ftsQuery(o.text);
    if (query === null) return { rows: [], total: 0 };
    const readable = readableSql('f', o.viewer);
    const where = `JOIN (SELECT id AS hit_id, -bm25(rm_folders_fts, 0, 10, 1) AS score
    FROM rm_folders_fts WHERE rm_folders_fts MATCH ?) s
      ON s.hit_id = f.id WHERE ${readable.sql}`;
    const args = [query, ...readable.args];
    const page = pagingSql(o.paging, COLUMNS, 'f');
    const { rows, total } = await this.heavy.page<FolderRow>(
      {
        sql: `SELECT ${FOLDER_COLUMNS}, s.score FROM rm_folders f ${where}${page.sql}`,
        args: [...args, ...page.args],
        raw: true,
      },
      { sql: `SELECT COUNT(*) AS n FROM rm_folders f ${where}`, args },
      { heavy: true },
    );
    return { rows: rows.map((r) => ({ ...toDoc(r), _textScore: r[6] as number })), total };
  }

  async countChildren(o: { parentType: ParentType; parentId: string; viewer: Viewer | null }) {
    if (o.viewer?.admin) return this.maintainedCount(o.parentType, o.parentId);
    return readableChildCount(this.db, o.parentType, o.parentId, o.viewer).readable;
  }

  /** The parent's number of child folders as the triggers keep it (every child, whoever asks). */
  private maintainedCount(parentType: ParentType, parentId: string): number {
    const row = prepared(this.db, 'SELECT n FROM rm_folder_child_counts WHERE parent_id = ? AND parent_type = ?').get(
      parentId,
      parentType,
    ) as { n: number } | undefined;
    return row?.n ?? 0;
  }

  async childNamed(parentType: ParentType, parentId: string, name: string) {
    const row = folderRow(
      this.db,
      `${SELECT} WHERE f.parent_id = ? AND f.parent_type = ? AND f.name = ? LIMIT 1`,
      parentId,
      parentType,
      name,
    );
    return row ? toDoc(row) : null;
  }

  async siblingNamed(parentType: ParentType, parentId: string, name: string, exceptItemId?: string) {
    // One statement (one read transaction) for both tables; 'folder' sorts first, so a folder wins.
    const kind = prepared(
      this.db,
      `SELECT 'folder' AS kind FROM rm_folders WHERE parent_id = ? AND parent_type = ? AND name = ?
        UNION ALL SELECT 'item' FROM rm_items WHERE ? = 'folder' AND folder_id = ? AND name = ? AND id IS NOT ?
        ORDER BY kind LIMIT 1`,
    )
      .pluck()
      .get(parentId, parentType, name, parentType, parentId, name, exceptItemId ?? null) as
      'folder' | 'item' | undefined;
    return kind ?? null;
  }

  /** Items directly in the folder: rows of `rm_items` with that `folder_id`. */
  async itemCount(folderId: string) {
    return (prepared(this.db, 'SELECT COUNT(*) AS n FROM rm_items WHERE folder_id = ?').get(folderId) as { n: number })
      .n;
  }

  async ancestorIds(id: string) {
    return prepared(this.db, `SELECT id FROM (${ancestorsSql('?')}) ORDER BY depth DESC`)
      .pluck()
      .all(id) as string[];
  }

  async isSelfOrDescendant(folderId: string, candidateId: string) {
    if (folderId === candidateId) return true;
    return !!prepared(this.db, `SELECT 1 FROM (${ancestorsSql('?')}) WHERE id = ? LIMIT 1`).get(candidateId, folderId);
  }

  async idsUnder(
    ancestorId: string,
    filter: { lacking?: { viewer: Viewer; level: Level }; outside?: string[] } = {},
  ): Promise<string[]> {
    // Those `outside` are left out with what lies under them: the walk does not enter them.
    const outside = filter.outside?.length ? JSON.stringify(filter.outside) : null;
    ensureWalkIndex(this.db);
    const under = descendantsSql('?', outside ? { descendInto: 'c.id NOT IN (SELECT value FROM json_each(?))' } : {});
    // (Positional parameters, in the order they appear: the walk's first step and its recursive step each take the
    // list.)
    const args: unknown[] = outside ? [ancestorId, outside, outside] : [ancestorId];
    let sql = `SELECT u.id FROM (${under}) u`;
    if (filter.lacking) {
      const readable = readableSql('f', filter.lacking.viewer, filter.lacking.level);
      sql += ` JOIN rm_folders f ON f.id = u.id WHERE NOT ${readable.sql}`;
      args.push(...readable.args);
    }
    return prepared(this.db, sql)
      .pluck()
      .all(...args) as string[];
  }

  /**
   * A page and its total (`known.total` when the caller has it; counted otherwise). `known.heavy`: a read whose cost
   * grows with the matching rows, for {@link HeavyReads}.
   */
  private async page(
    where: string,
    args: unknown[],
    paging: Paging,
    known: { heavy: boolean; total?: number },
  ): Promise<Page<FolderDoc>> {
    const { rows, total } = await this.heavy.listing<FolderRow>(LISTED, where, args, paging, known);
    return { rows: rows.map(toDoc), total };
  }

  // ---- projection writes (synchronous, inside the adapter's transaction) ----

  insert(doc: NewFolder): void {
    let base: FolderBase;
    if (doc.parentCollection === 'folder') {
      const parent = parentBase(this.db, doc.parentId);
      // The projection guards the write on the parent (src/projections/lateEvents.ts).
      if (!parent) throw notStored('parent folder', doc.parentId, doc._id);
      base = parent;
    } else {
      base = { type: doc.parentCollection, id: doc.parentId };
    }
    const searchRowid = insertSearchRow(this.db, 'rm_folders', doc._id, doc.name, doc.description);
    prepared(
      this.db,
      `INSERT INTO rm_folders (${FOLDER_ROW_COLUMNS.join(', ')}) VALUES (${FOLDER_ROW_COLUMNS.map(() => '?').join(', ')})`,
    ).run(...folderRowValues(doc, base, searchRowid));
    this.acl.replace(doc._id, doc.access);
  }

  update(id: string, fields: Partial<FolderDoc>): void {
    const row = prepared(this.db, 'SELECT doc FROM rm_folders WHERE id = ?').get(id) as { doc: string } | undefined;
    if (!row) return;
    // A field given as undefined is removed (an update's field semantics).
    const merged = { ...(JSON.parse(row.doc) as FolderDoc), ...jsonPart(fields) };
    const removed = new Set(
      Object.entries(fields as Record<string, unknown>).flatMap(([key, value]) => (value === undefined ? [key] : [])),
    );
    const doc = Object.fromEntries(Object.entries(merged).filter(([key]) => !removed.has(key))) as unknown as FolderDoc;
    prepared(
      this.db,
      'UPDATE rm_folders SET name = ?, lower_name = ?, public = ?, updated = ?, size = ?, doc = ? WHERE id = ?',
    ).run(doc.name, doc.name.toLowerCase(), toBit(doc.public), doc.updated, doc.size, JSON.stringify(doc), id);
    if (fields.name !== undefined || fields.description !== undefined)
      replaceSearchRow(this.db, 'rm_folders', id, doc.name, doc.description);
    if (fields.access) this.acl.replace(id, fields.access);
  }

  move(id: string, parentType: ParentType, parentId: string, updated: string): void {
    ensureWalkIndex(this.db);
    const subtree = selfAndDescendantsSql('@id');
    const previousBase = prepared(
      this.db,
      'SELECT base_parent_type AS type, base_parent_id AS id FROM rm_folders WHERE id = ?',
    ).get(id) as { type: RootType; id: string } | undefined;
    // The projection guards the write on the folder and its new parent (src/projections/lateEvents.ts).
    if (!previousBase) throw notStored('folder', id, id);
    let base: { type: RootType; id: string } = { type: parentType as RootType, id: parentId };
    if (parentType === 'folder') {
      const parent = parentBase(this.db, parentId);
      if (!parent) throw notStored('new parent folder', parentId, id);
      base = parent;
    }
    prepared(
      this.db,
      `UPDATE rm_folders SET parent_type = ?, parent_id = ?, updated = ?,
        doc = json_set(doc, '$.updated', ?) WHERE id = ?`,
    ).run(parentType, parentId, updated, updated, id);
    prepared(
      this.db,
      `UPDATE rm_folders SET base_parent_type = @type, base_parent_id = @base WHERE id IN (${subtree})`,
    ).run({ id, type: base.type, base: base.id });
    // Items follow their folders' base parent; a change of root carries the subtree's recursive size along.
    followFolderMove(this.db, subtree, id, previousBase, base);
  }

  removeSubtree(id: string): void {
    removeSubtree(this.db, id, false);
  }

  /** Adds `delta` to the folder's size (items directly in it). */
  addSize(id: string, delta: number): void {
    addFolderSize(this.db, id, delta);
  }

  delete(id: string): void {
    deleteSearchRow(this.db, 'rm_folders', id);
    prepared(this.db, 'DELETE FROM rm_folders WHERE id = ?').run(id);
    this.acl.remove(id);
  }

  setAccess(ids: string[], change: { access: AccessList; public?: boolean; publicFlags?: string[] }): void {
    const targets = JSON.stringify(ids);
    const inTargets = 'IN (SELECT value FROM json_each(@targets))';
    let doc = "json_set(doc, '$.access', json(@access))";
    const args: Record<string, unknown> = { targets, access: JSON.stringify(change.access) };
    let publicColumn = '';
    if (change.public !== undefined) {
      doc = `json_set(${doc}, '$.public', json(@public))`;
      publicColumn = ', public = @publicBit';
      Object.assign(args, { public: JSON.stringify(change.public), publicBit: toBit(change.public) });
    }
    if (change.publicFlags !== undefined) {
      doc = `json_set(${doc}, '$.publicFlags', json(@publicFlags))`;
      args.publicFlags = JSON.stringify(change.publicFlags);
    }
    prepared(this.db, `UPDATE rm_folders SET doc = ${doc}${publicColumn} WHERE id ${inTargets}`).run(args);
    prepared(this.db, `DELETE FROM rm_acl WHERE resource_id ${inTargets}`).run({ targets });
    const insert = prepared(
      this.db,
      `INSERT OR REPLACE INTO rm_acl (resource_id, principal_type, principal_id, level)
       SELECT t.value, @type, json_extract(e.value, '$.id'), json_extract(e.value, '$.level')
       FROM json_each(@targets) t, json_each(@entries) e`,
    );
    insert.run({ targets, type: 'user', entries: JSON.stringify(change.access.users) });
    insert.run({ targets, type: 'group', entries: JSON.stringify(change.access.groups) });
  }

  deleteUnderRoot(rootId: string): void {
    const under = 'SELECT id FROM rm_folders WHERE base_parent_id = ?';
    prepared(this.db, `DELETE FROM rm_acl WHERE resource_id IN (${under})`).run(rootId);
    prepared(
      this.db,
      'DELETE FROM rm_folders_fts WHERE rowid IN (SELECT search_rowid FROM rm_folders WHERE base_parent_id = ?)',
    ).run(rootId);
    prepared(this.db, 'DELETE FROM rm_folders WHERE base_parent_id = ?').run(rootId);
  }
}
