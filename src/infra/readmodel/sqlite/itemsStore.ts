import type { AssetstoreRefs } from '../../../domain/assetstoreBlobRef';
import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type {
  FileDoc,
  FileQueries,
  FileWrites,
  ItemDoc,
  ItemListing,
  ItemQueries,
  ItemWrites,
  Page,
  PositionIn,
  PrefixSearch,
} from '../../../ports/readModel';
import type { Level, Viewer } from '../../../domain/access';
import { ftsQuery, namePrefixSql, pagingSql, readableSql, tableExists } from './sqlHelpers';
import { listingScans, type HeavyReads, type ListedTable } from './heavyReads';
import { notStored } from '../notStored';
import { parentBase } from './folderTree';
import { deleteSearchRow, ensureSearchKeys, insertSearchRow, replaceSearchRow } from './searchRows';
import type { Paging } from '../../../domain/paging';
import type { RootType } from '../../../domain/parents';
import { sqlLimit } from '../../sqlite/sqlLimit';

/**
 * Items and files. Items keep their position (folder, base parent) and size in columns and the rest in a JSON
 * document; text search is an FTS5 index with the porter stemmer, its rows keyed by `search_rowid` (searchRows.ts).
 * Files keep everything in the JSON document, with the columns the queries need (item, name, blob) beside it, and
 * an index on the document's `sha512` (an expression index: databases made before it need no new column).
 * `rm_files.blob_id` is the blob reference count: a blob may be deleted once no row names it.
 *
 * `rm_folder_item_counts` holds each folder's number of items, kept by triggers on `rm_items` (every write path,
 * set-wise subtree work included, keeps it right): an item listing's `Girder-Total-Count` reads it instead of counting
 * the folder's items (a million of them took ~74 ms on the event loop per page).
 *
 * Sizes are maintained here, never read by projections: a file's size is added to its item, the item's folder
 * (`size` = items directly in the folder) and the item's root user or collection (`size` = everything under it).
 */
const countIn = (row: 'new') => `
  INSERT INTO rm_folder_item_counts (folder_id, n) VALUES (${row}.folder_id, 1)
  ON CONFLICT (folder_id) DO UPDATE SET n = n + 1;`;
// A folder's row goes with its last item, so the table is a function of rm_items alone (a replay gives the same rows).
const countOut = (row: 'old') => `
  UPDATE rm_folder_item_counts SET n = n - 1 WHERE folder_id = ${row}.folder_id;
  DELETE FROM rm_folder_item_counts WHERE folder_id = ${row}.folder_id AND n = 0;`;

const DDL = `
CREATE TABLE IF NOT EXISTS rm_items (
  id TEXT PRIMARY KEY, folder_id TEXT NOT NULL, name TEXT NOT NULL, lower_name TEXT NOT NULL,
  base_parent_type TEXT NOT NULL, base_parent_id TEXT NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL,
  size INTEGER NOT NULL, doc TEXT NOT NULL, search_rowid INTEGER);
CREATE INDEX IF NOT EXISTS rm_items_folder_lower ON rm_items (folder_id, lower_name);
CREATE INDEX IF NOT EXISTS rm_items_folder_name ON rm_items (folder_id, name);
CREATE INDEX IF NOT EXISTS rm_items_base ON rm_items (base_parent_id);
CREATE VIRTUAL TABLE IF NOT EXISTS rm_items_fts USING fts5(id UNINDEXED, name, description, tokenize = 'porter unicode61');
CREATE TABLE IF NOT EXISTS rm_folder_item_counts (folder_id TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS rm_items_count_insert AFTER INSERT ON rm_items BEGIN ${countIn('new')} END;
CREATE TRIGGER IF NOT EXISTS rm_items_count_delete AFTER DELETE ON rm_items BEGIN ${countOut('old')} END;
CREATE TRIGGER IF NOT EXISTS rm_items_count_move AFTER UPDATE OF folder_id ON rm_items
WHEN old.folder_id IS NOT new.folder_id BEGIN ${countOut('old')} ${countIn('new')} END;
CREATE TABLE IF NOT EXISTS rm_files (
  id TEXT PRIMARY KEY, item_id TEXT NOT NULL, name TEXT NOT NULL, blob_id TEXT NOT NULL, size INTEGER NOT NULL,
  created TEXT NOT NULL, doc TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS rm_files_item ON rm_files (item_id, name);
CREATE INDEX IF NOT EXISTS rm_files_blob ON rm_files (blob_id);
CREATE INDEX IF NOT EXISTS rm_files_sha512 ON rm_files (doc ->> '$.sha512') WHERE doc ->> '$.sha512' IS NOT NULL;
`;

const ITEM_COLUMNS = {
  lowerName: 'lower_name',
  name: 'name',
  created: 'created',
  updated: 'updated',
  size: 'size',
  _id: 'id',
  folderId: 'folder_id',
  baseParentType: 'base_parent_type',
  baseParentId: 'base_parent_id',
};
/** Sorts an index of a folder's items serves (rm_items_folder_lower, rm_items_folder_name). */
const INDEX_SERVED_SORTS = new Set(['lowerName', 'name']);
/**
 * The files of one assetstore: references from `prefix` up to the next character after its `:` (a range the blob
 * index serves), and for the default store the bare references too (no `:`).
 */
function inAssetstoreSql(refs: AssetstoreRefs): { sql: string; args: string[] } {
  const range = 'blob_id >= ? AND blob_id < ?';
  const args = [refs.prefix, `${refs.prefix.slice(0, -1)};`];
  return { sql: refs.bare ? `((${range}) OR instr(blob_id, ':') = 0)` : `(${range})`, args };
}

const FILE_COLUMNS = { name: 'name', size: 'size', created: 'created', _id: 'id', itemId: 'item_id' };

/** An item as read: {@link ITEM_READ_COLUMNS} in order (raw rows, readRows). */
type ItemRow = [
  id: string,
  folderId: string,
  baseParentType: RootType,
  baseParentId: string,
  size: number,
  doc: string,
];

const ITEM_READ_COLUMNS = 'i.id, i.folder_id, i.base_parent_type, i.base_parent_id, i.size, i.doc';
const LISTED: ListedTable = { table: 'rm_items', alias: 'i', columns: ITEM_READ_COLUMNS, sortColumns: ITEM_COLUMNS };

/** The WHERE clauses of a folder's item listing, with the name or text asked for; null when the text matches nothing. */
function inFolderClauses(o: { folderId: string; name?: string; text?: string }): {
  clauses: string[];
  args: unknown[];
} | null {
  const clauses = ['i.folder_id = ?'];
  const args: unknown[] = [o.folderId];
  if (o.name !== undefined) {
    clauses.push('i.name = ?');
    args.push(o.name);
  }
  if (o.text !== undefined) {
    const query = ftsQuery(o.text);
    if (query === null) return null;
    clauses.push('i.id IN (SELECT id FROM rm_items_fts WHERE rm_items_fts MATCH ?)');
    args.push(query);
  }
  return { clauses, args };
}

function toItem(row: ItemRow): ItemDoc {
  // Set on the parsed object rather than spread into a new one (same keys, same order, a fraction of the cost).
  const doc = JSON.parse(row[5]) as ItemDoc;
  doc.folderId = row[1];
  doc.baseParentType = row[2];
  doc.baseParentId = row[3];
  doc.size = row[4];
  return doc;
}

/** What the JSON column of an item holds: everything but the fields kept in columns. */
function itemJson(doc: Partial<ItemDoc>): Record<string, unknown> {
  const { folderId, baseParentType, baseParentId, size, ...rest } = doc;
  return rest;
}

/** The size write operations of the containers items live in. */
export interface SizeTargets {
  folders: { addSize(id: string, delta: number): void };
  users: { addSize(id: string, delta: number): void };
  collections: { addSize(id: string, delta: number): void };
}

export class SqliteItems implements ItemQueries, ItemWrites {
  constructor(
    private readonly db: SqliteDatabase,
    private readonly sizes: SizeTargets,
    private readonly heavy: HeavyReads,
  ) {
    const countsExisted = tableExists(db, 'rm_folder_item_counts');
    db.exec(DDL);
    // A file from before the counts table: count once, the triggers keep it from here on.
    if (!countsExisted)
      db.exec(
        'INSERT INTO rm_folder_item_counts (folder_id, n) SELECT folder_id, COUNT(*) FROM rm_items GROUP BY folder_id',
      );
    ensureSearchKeys(db, 'rm_items');
  }

  async get(id: string) {
    const row = prepared<unknown[], ItemRow>(this.db, `SELECT ${ITEM_READ_COLUMNS} FROM rm_items i WHERE i.id = ?`)
      .raw(true)
      .get(id);
    return row ? toItem(row) : null;
  }

  async listInFolder(o: { folderId: string; name?: string; text?: string; paging: Paging }): Promise<Page<ItemDoc>> {
    const matching = inFolderClauses(o);
    if (matching === null) return { rows: [], total: 0 };
    const { clauses, args } = matching;
    const heavy = listingScans(o, o.paging, INDEX_SERVED_SORTS);
    // Unfiltered, every item of the folder is counted: the maintained count.
    const total = o.name === undefined && o.text === undefined ? this.maintainedCount(o.folderId) : undefined;
    return this.page(`WHERE ${clauses.join(' AND ')}`, args, o.paging, { heavy, total });
  }

  async positionInFolder(o: PositionIn<ItemListing>): Promise<number> {
    const matching = inFolderClauses(o);
    if (matching === null) return 0;
    return this.heavy.position(LISTED, matching.clauses, matching.args, o.paging, o.id);
  }

  async namedInFolder(folderId: string, name: string, except?: string): Promise<string | null> {
    const id = prepared(
      this.db,
      'SELECT id FROM rm_items WHERE folder_id = ? AND name = ? AND id IS NOT ? ORDER BY id LIMIT 1',
    )
      .pluck()
      .get(folderId, name, except ?? null) as string | undefined;
    return id ?? null;
  }

  async positionInSearch(o: { text: string; viewer: Viewer | null; paging: Paging; id: string }): Promise<number> {
    const query = ftsQuery(o.text);
    if (query === null) return 0;
    const readable = readableSql('f', o.viewer);
    const clauses = [
      'i.id IN (SELECT id FROM rm_items_fts WHERE rm_items_fts MATCH ?)',
      `i.folder_id IN (SELECT f.id FROM rm_folders f WHERE ${readable.sql})`,
    ];
    return this.heavy.position(LISTED, clauses, [query, ...readable.args], o.paging, o.id);
  }

  async search(o: { text: string; viewer: Viewer | null; level?: Level; paging: Paging }): Promise<Page<ItemDoc>> {
    const query = ftsQuery(o.text);
    if (query === null) return { rows: [], total: 0 };
    const readable = readableSql('f', o.viewer, o.level);
    const where = `JOIN rm_folders f ON f.id = i.folder_id
      WHERE i.id IN (SELECT id FROM rm_items_fts WHERE rm_items_fts MATCH ?) AND ${readable.sql}`;
    return this.page(where, [query, ...readable.args], o.paging, { heavy: true });
  }

  async prefixSearch(o: PrefixSearch): Promise<Page<ItemDoc>> {
    const named = namePrefixSql('i', o.prefix);
    const readable = readableSql('f', o.viewer, o.level);
    const where = `JOIN rm_folders f ON f.id = i.folder_id WHERE ${named.sql} AND ${readable.sql}`;
    return this.page(where, [...named.args, ...readable.args], o.paging, { heavy: true });
  }

  async countInFolder(folderId: string) {
    return this.maintainedCount(folderId);
  }

  /** The folder's number of items as the triggers keep them. */
  private maintainedCount(folderId: string): number {
    const row = prepared(this.db, 'SELECT n FROM rm_folder_item_counts WHERE folder_id = ?').get(folderId) as
      { n: number } | undefined;
    return row?.n ?? 0;
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
  ): Promise<Page<ItemDoc>> {
    const { rows, total } = await this.heavy.listing<ItemRow>(LISTED, where, args, paging, known);
    return { rows: rows.map(toItem), total };
  }

  // ---- projection writes (synchronous, inside the adapter's transaction) ----

  insert(doc: Omit<ItemDoc, 'baseParentType' | 'baseParentId' | 'size' | 'lowerName'>): void {
    const folder = parentBase(this.db, doc.folderId);
    // The projection guards the write on the folder (src/projections/lateEvents.ts).
    if (!folder) throw notStored('folder', doc.folderId, doc._id);
    const json = itemJson({ ...doc, lowerName: doc.name.toLowerCase() });
    const searchRowid = insertSearchRow(this.db, 'rm_items', doc._id, doc.name, doc.description);
    prepared(
      this.db,
      `INSERT INTO rm_items (id, folder_id, name, lower_name, base_parent_type, base_parent_id,
        created, updated, size, doc, search_rowid)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
    ).run(
      doc._id,
      doc.folderId,
      doc.name,
      doc.name.toLowerCase(),
      folder.type,
      folder.id,
      doc.created,
      doc.updated,
      JSON.stringify(json),
      searchRowid,
    );
  }

  update(id: string, fields: Partial<Pick<ItemDoc, 'name' | 'description' | 'meta' | 'created' | 'updated'>>): void {
    const row = prepared(this.db, 'SELECT doc FROM rm_items WHERE id = ?').get(id) as { doc: string } | undefined;
    if (!row) return;
    const doc = { ...(JSON.parse(row.doc) as ItemDoc), ...fields };
    doc.lowerName = doc.name.toLowerCase();
    prepared(
      this.db,
      'UPDATE rm_items SET name = ?, lower_name = ?, created = ?, updated = ?, doc = ? WHERE id = ?',
    ).run(doc.name, doc.lowerName, doc.created, doc.updated, JSON.stringify(itemJson(doc)), id);
    if (fields.name !== undefined || fields.description !== undefined)
      replaceSearchRow(this.db, 'rm_items', id, doc.name, doc.description);
  }

  move(id: string, folderId: string, name: string, updated: string): void {
    const row = this.position(id);
    const target = parentBase(this.db, folderId);
    // The projection guards the write on the item and the folder (src/projections/lateEvents.ts).
    if (!row) throw notStored('item', id, id);
    if (!target) throw notStored('folder', folderId, id);
    this.propagate(row.folder_id, row.base_parent_type, row.base_parent_id, -row.size);
    this.propagate(folderId, target.type, target.id, row.size);
    const doc = { ...(JSON.parse(row.doc) as ItemDoc), name, lowerName: name.toLowerCase(), updated };
    prepared(
      this.db,
      `UPDATE rm_items SET folder_id = ?, base_parent_type = ?, base_parent_id = ?,
        name = ?, lower_name = ?, updated = ?, doc = ?
         WHERE id = ?`,
    ).run(folderId, target.type, target.id, name, doc.lowerName, updated, JSON.stringify(itemJson(doc)), id);
    replaceSearchRow(this.db, 'rm_items', id, name, doc.description);
  }

  delete(id: string): void {
    const row = this.position(id);
    if (!row) return;
    this.propagate(row.folder_id, row.base_parent_type, row.base_parent_id, -row.size);
    prepared(this.db, 'DELETE FROM rm_files WHERE item_id = ?').run(id);
    deleteSearchRow(this.db, 'rm_items', id);
    prepared(this.db, 'DELETE FROM rm_items WHERE id = ?').run(id);
  }

  deleteInFolder(folderId: string): void {
    const ids = prepared(this.db, 'SELECT id FROM rm_items WHERE folder_id = ?').all(folderId) as { id: string }[];
    for (const { id } of ids) this.delete(id);
  }

  deleteUnderRoot(rootId: string): void {
    const under = 'SELECT id FROM rm_items WHERE base_parent_id = ?';
    prepared(this.db, `DELETE FROM rm_files WHERE item_id IN (${under})`).run(rootId);
    prepared(
      this.db,
      'DELETE FROM rm_items_fts WHERE rowid IN (SELECT search_rowid FROM rm_items WHERE base_parent_id = ?)',
    ).run(rootId);
    prepared(this.db, 'DELETE FROM rm_items WHERE base_parent_id = ?').run(rootId);
  }

  addSize(id: string, delta: number): void {
    const row = this.position(id);
    if (!row || delta === 0) return;
    prepared(this.db, 'UPDATE rm_items SET size = size + ? WHERE id = ?').run(delta, id);
    this.propagate(row.folder_id, row.base_parent_type, row.base_parent_id, delta);
  }

  private position(id: string) {
    return prepared(
      this.db,
      'SELECT folder_id, base_parent_type, base_parent_id, size, doc FROM rm_items WHERE id = ?',
    ).get(id) as
      { folder_id: string; base_parent_type: RootType; base_parent_id: string; size: number; doc: string } | undefined;
  }

  private propagate(folderId: string, rootType: RootType, rootId: string, delta: number): void {
    if (delta === 0) return;
    this.sizes.folders.addSize(folderId, delta);
    (rootType === 'user' ? this.sizes.users : this.sizes.collections).addSize(rootId, delta);
  }
}

export class SqliteFiles implements FileQueries, FileWrites {
  constructor(private readonly db: SqliteDatabase) {
    db.exec(DDL);
  }

  async get(id: string) {
    const row = prepared(this.db, 'SELECT doc FROM rm_files WHERE id = ?').get(id) as { doc: string } | undefined;
    return row ? (JSON.parse(row.doc) as FileDoc) : null;
  }

  async listForItem(itemId: string, paging: Paging): Promise<Page<FileDoc>> {
    const total = (
      prepared(this.db, 'SELECT COUNT(*) AS n FROM rm_files WHERE item_id = ?').get(itemId) as { n: number }
    ).n;
    const page = pagingSql(paging, FILE_COLUMNS, 'rm_files');
    const rows = prepared(this.db, `SELECT doc FROM rm_files WHERE item_id = ?${page.sql}`).all(
      itemId,
      ...page.args,
    ) as { doc: string }[];
    return { rows: rows.map((r) => JSON.parse(r.doc) as FileDoc), total };
  }

  async listInAssetstore(refs: AssetstoreRefs, paging: Paging): Promise<Page<FileDoc>> {
    const where = inAssetstoreSql(refs);
    const total = (
      prepared(this.db, `SELECT COUNT(*) AS n FROM rm_files WHERE ${where.sql}`).get(...where.args) as {
        n: number;
      }
    ).n;
    const page = pagingSql(paging, FILE_COLUMNS, 'rm_files');
    const rows = prepared(this.db, `SELECT doc FROM rm_files WHERE ${where.sql}${page.sql}`).all(
      ...where.args,
      ...page.args,
    ) as { doc: string }[];
    return { rows: rows.map((r) => JSON.parse(r.doc) as FileDoc), total };
  }

  async anyInAssetstore(refs: AssetstoreRefs) {
    const where = inAssetstoreSql(refs);
    return prepared(this.db, `SELECT 1 FROM rm_files WHERE ${where.sql} LIMIT 1`).get(...where.args) !== undefined;
  }

  async isBlobReferenced(blobId: string) {
    return prepared(this.db, 'SELECT 1 FROM rm_files WHERE blob_id = ? LIMIT 1').get(blobId) !== undefined;
  }

  async blobIdsInFolders(folderIds: string[]) {
    const rows = prepared(
      this.db,
      `SELECT DISTINCT fl.blob_id FROM rm_files fl JOIN rm_items i ON i.id = fl.item_id
         WHERE i.folder_id IN (SELECT value FROM json_each(?))`,
    ).all(JSON.stringify(folderIds)) as { blob_id: string }[];
    return rows.map((r) => r.blob_id);
  }

  async blobIdsUnderRoot(rootId: string) {
    const rows = prepared(
      this.db,
      'SELECT DISTINCT fl.blob_id FROM rm_files fl JOIN rm_items i ON i.id = fl.item_id WHERE i.base_parent_id = ?',
    ).all(rootId) as { blob_id: string }[];
    return rows.map((r) => r.blob_id);
  }

  async withSha512(sha512: string, viewer: Viewer | null, limit?: number): Promise<FileDoc[]> {
    const readable = readableSql('f', viewer);
    // The expression is the index's, word for word, so that the planner uses it.
    const rows = prepared(
      this.db,
      `SELECT fl.doc FROM rm_files fl JOIN rm_items i ON i.id = fl.item_id JOIN rm_folders f ON f.id = i.folder_id
         WHERE fl.doc ->> '$.sha512' = ? AND ${readable.sql} ORDER BY fl.id ${limit === undefined ? '' : sqlLimit(limit)}`,
    ).all(sha512, ...readable.args) as { doc: string }[];
    return rows.map((r) => JSON.parse(r.doc) as FileDoc);
  }

  // ---- projection writes ----

  insert(doc: FileDoc): void {
    prepared(
      this.db,
      'INSERT INTO rm_files (id, item_id, name, blob_id, size, created, doc) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).run(doc._id, doc.itemId, doc.name, doc.blobId, doc.size, doc.created, JSON.stringify(doc));
  }

  update(
    id: string,
    fields: Partial<Pick<FileDoc, 'blobId' | 'size' | 'creatorId' | 'created' | 'name' | 'mimeType' | 'sha512'>>,
  ): void {
    const row = prepared(this.db, 'SELECT doc FROM rm_files WHERE id = ?').get(id) as { doc: string } | undefined;
    if (!row) return;
    const doc = { ...(JSON.parse(row.doc) as FileDoc), ...fields };
    if (fields.name !== undefined)
      doc.exts = doc.name
        .split('.')
        .slice(1)
        .map((e) => e.toLowerCase());
    prepared(this.db, 'UPDATE rm_files SET name = ?, blob_id = ?, size = ?, created = ?, doc = ? WHERE id = ?').run(
      doc.name,
      doc.blobId,
      doc.size,
      doc.created,
      JSON.stringify(doc),
      id,
    );
  }

  delete(id: string): void {
    prepared(this.db, 'DELETE FROM rm_files WHERE id = ?').run(id);
  }
}
