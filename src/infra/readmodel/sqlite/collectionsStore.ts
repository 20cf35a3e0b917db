import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { CollectionDoc, CollectionQueries, CollectionWrites, Page, PrefixSearch } from '../../../ports/readModel';
import type { Level, Viewer } from '../../../domain/access';
import { ftsQuery, namePrefixSql, pagingSql, readableSql, toBit } from './sqlHelpers';
import { AclRows } from './aclRows';
import { addCollectionSize } from './sizes';
import { deleteSearchRow, ensureSearchKeys, insertSearchRow, replaceSearchRow } from './searchRows';
import type { Paging } from '../../../domain/paging';

const DDL = `
CREATE TABLE IF NOT EXISTS rm_collections (
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, lower_name TEXT NOT NULL, public INTEGER NOT NULL,
  created TEXT NOT NULL, updated TEXT NOT NULL, size INTEGER NOT NULL, doc TEXT NOT NULL, search_rowid INTEGER);
CREATE VIRTUAL TABLE IF NOT EXISTS rm_collections_fts USING fts5(id UNINDEXED, name, description, tokenize = 'porter unicode61');
`;

const COLUMNS = {
  name: 'name',
  lowerName: 'lower_name',
  created: 'created',
  updated: 'updated',
  size: 'size',
  _id: 'id',
};

export class SqliteCollections implements CollectionQueries, CollectionWrites {
  private readonly acl: AclRows;
  constructor(private readonly db: SqliteDatabase) {
    db.exec(DDL);
    ensureSearchKeys(db, 'rm_collections');
    this.acl = new AclRows(db);
  }
  async get(id: string) {
    const row = prepared(this.db, 'SELECT doc FROM rm_collections WHERE id = ?').get(id) as { doc: string } | undefined;
    return row ? (JSON.parse(row.doc) as CollectionDoc) : null;
  }
  async getByName(name: string) {
    const row = prepared(this.db, 'SELECT doc FROM rm_collections WHERE name = ?').get(name) as
      { doc: string } | undefined;
    return row ? (JSON.parse(row.doc) as CollectionDoc) : null;
  }
  async list({
    viewer,
    text,
    level,
    paging,
  }: {
    viewer: Viewer | null;
    text?: string;
    level?: Level;
    paging: Paging;
  }): Promise<Page<CollectionDoc>> {
    const readable = readableSql('c', viewer, level);
    const clauses = [readable.sql];
    const args = [...readable.args];
    if (text !== undefined) {
      const query = ftsQuery(text);
      if (query === null) return { rows: [], total: 0 };
      clauses.push('c.id IN (SELECT id FROM rm_collections_fts WHERE rm_collections_fts MATCH ?)');
      args.push(query);
    }
    return this.page(clauses, args, paging);
  }

  async prefixSearch(o: PrefixSearch): Promise<Page<CollectionDoc>> {
    const named = namePrefixSql('c', o.prefix);
    const readable = readableSql('c', o.viewer, o.level);
    return this.page([named.sql, readable.sql], [...named.args, ...readable.args], o.paging);
  }

  /** The collections matching every clause: a page and the total. */
  private page(clauses: string[], args: unknown[], paging: Paging): Page<CollectionDoc> {
    const where = `WHERE ${clauses.join(' AND ')}`;
    const total = (
      prepared(this.db, `SELECT COUNT(*) AS n FROM rm_collections c ${where}`).get(...args) as { n: number }
    ).n;
    const page = pagingSql(paging, COLUMNS, 'c');
    const rows = prepared(this.db, `SELECT c.doc FROM rm_collections c ${where}${page.sql}`).all(
      ...args,
      ...page.args,
    ) as { doc: string }[];
    return { rows: rows.map((r) => JSON.parse(r.doc) as CollectionDoc), total };
  }
  /** Creates or replaces a collection; a replaced one keeps its search row's key (searchRows.ts). */
  put(doc: CollectionDoc): void {
    const searchRowid = this.indexed(doc);
    prepared(
      this.db,
      `INSERT OR REPLACE INTO rm_collections (id, name, lower_name, public, created, updated, size, doc, search_rowid)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      doc._id,
      doc.name,
      doc.name.toLowerCase(),
      toBit(doc.public),
      doc.created,
      doc.updated,
      doc.size,
      JSON.stringify(doc),
      searchRowid,
    );
    this.acl.replace(doc._id, doc.access);
  }
  /** Indexes the collection's name and description; returns the key of its search row (the existing one if any). */
  private indexed(doc: CollectionDoc): number {
    const key = prepared(this.db, 'SELECT search_rowid FROM rm_collections WHERE id = ?').pluck().get(doc._id) as
      number | undefined;
    if (key === undefined) return insertSearchRow(this.db, 'rm_collections', doc._id, doc.name, doc.description);
    replaceSearchRow(this.db, 'rm_collections', doc._id, doc.name, doc.description);
    return key;
  }
  update(id: string, fields: Partial<Omit<CollectionDoc, '_id'>>): void {
    const row = prepared(this.db, 'SELECT doc FROM rm_collections WHERE id = ?').get(id) as { doc: string } | undefined;
    if (!row) throw new Error(`Projection: collection ${id} is not in the read model.`);
    this.put({ ...(JSON.parse(row.doc) as CollectionDoc), ...fields, _id: id });
  }
  delete(id: string): void {
    deleteSearchRow(this.db, 'rm_collections', id);
    prepared(this.db, 'DELETE FROM rm_collections WHERE id = ?').run(id);
    this.acl.remove(id);
  }
  /** Adds `delta` to the collection's recursive size (files under its folders). */
  addSize(id: string, delta: number): void {
    addCollectionSize(this.db, id, delta);
  }
}
