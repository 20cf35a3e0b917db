import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { FolderDoc, FolderWrites } from '../../../ports/readModel';
import type { AccessList } from '../../../domain/access';
import { toBit } from './sqlHelpers';
import { AclRows } from './aclRows';
import { addFolderSize, followFolderMove } from './sizes';
import { removeSubtree } from './subtreeStore';
import { ensureWalkIndex, parentBase, selfAndDescendantsSql, type FolderBase } from './folderTree';
import { notStored } from '../notStored';
import { deleteSearchRow, insertSearchRow, replaceSearchRow } from './searchRows';
import type { ParentType, RootType } from '../../../domain/parents';
import { FOLDER_ROW_COLUMNS, folderRowValues, jsonPart, type NewFolder } from './foldersTable';

/**
 * The folder writes of the SQLite read model, synchronous, inside the adapter's transaction (the tables:
 * foldersTable.ts; the queries: foldersReads.ts).
 */
export class SqliteFolderWrites implements FolderWrites {
  private readonly acl: AclRows;
  constructor(private readonly db: SqliteDatabase) {
    this.acl = new AclRows(db);
  }

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
      'UPDATE rm_folders SET name = ?, lower_name = ?, public = ?, created = ?, updated = ?, size = ?, doc = ? WHERE id = ?',
    ).run(
      doc.name,
      doc.name.toLowerCase(),
      toBit(doc.public),
      doc.created,
      doc.updated,
      doc.size,
      JSON.stringify(doc),
      id,
    );
    if (fields.name !== undefined || fields.description !== undefined)
      replaceSearchRow(this.db, 'rm_folders', id, doc.name, doc.description);
    if (fields.access) this.acl.replace(id, fields.access);
  }

  move(id: string, parentType: ParentType, parentId: string, updated: string): void {
    ensureWalkIndex(this.db);
    const subtree = selfAndDescendantsSql('@id');
    const previousBase = parentBase(this.db, id);
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
