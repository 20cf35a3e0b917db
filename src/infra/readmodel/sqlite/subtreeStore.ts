import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type {
  FolderCopyWrite,
  SubtreeOp,
  SubtreeOperation,
  SubtreeQueries,
  SubtreeWrites,
} from '../../../ports/readModel';
import { addRootSize } from './sizes';
import { toBit } from './sqlHelpers';
import { sqlLimit } from '../../sqlite/sqlLimit';
import { insertSearchRow, nextSearchRowid } from './searchRows';
import { deriveId } from '../../../domain/ids';
import { childBase, descendantsSql, ensureWalkIndex, parentBase } from './folderTree';
import { clearRemoval, collectRemoval, collectRemovalUnderRoot } from './removalSet';
import type { RootType } from '../../../domain/parents';

/**
 * Subtree operations (docs/subtree-operations.md): one event deletes, empties or copies a whole subtree, and this
 * store applies it as a handful of set-based statements inside that event's read-model transaction, on the subtree's
 * folders walked down once (folderTree.ts). Working sets live in TEMP tables of this connection (emptied before and
 * after each operation; their writes roll back with the transaction).
 *
 * Copies get ids `derive_id(opId, sourceId)` (a SQL function registered here, see {@link deriveId}), so replaying the
 * log produces the very same ids.
 *
 * `rm_subtree_ops` is the history index: one row per folder an operation touched, with the event's log position and
 * the folder whose stream holds the event (the collection, for the folders a collection delete removed).
 */
const DDL = `
CREATE TABLE IF NOT EXISTS rm_subtree_ops (
  folder_id TEXT NOT NULL, position INTEGER NOT NULL, operation TEXT NOT NULL, root_id TEXT NOT NULL,
  PRIMARY KEY (folder_id, position, operation)) WITHOUT ROWID;
`;

const TEMP_DDL = `
CREATE TEMP TABLE IF NOT EXISTS copy_map (src TEXT PRIMARY KEY, dst TEXT NOT NULL) WITHOUT ROWID;
CREATE TEMP TABLE IF NOT EXISTS copy_items (src TEXT PRIMARY KEY, dst TEXT NOT NULL, folder_dst TEXT NOT NULL) WITHOUT ROWID;
`;

/** Folders per chunk of a subtree-wide read: a few milliseconds of work each (see subtreeCount). */
const SUBTREE_CHUNK = 500;

const TEMP_TABLES = ['copy_map', 'copy_items'];

const prepared = new WeakSet<SqliteDatabase>();

/** Creates the working tables and the `derive_id` function on a connection, once per connection. */
function ensureSubtreeSql(db: SqliteDatabase): void {
  if (prepared.has(db)) return;
  db.exec(TEMP_DDL);
  db.function('derive_id', { deterministic: true }, (opId: unknown, sourceId: unknown) =>
    deriveId(String(opId), String(sourceId)),
  );
  prepared.add(db);
}

function clearTemp(db: SqliteDatabase): void {
  for (const table of TEMP_TABLES) db.prepare(`DELETE FROM temp.${table}`).run();
}

/** The collected removal (removalSet.ts) happens: its items, and the folders it marks `remove`, leave every table. */
function removeCollected(db: SqliteDatabase, root: { type: RootType; id: string }): void {
  // The root user/collection holds the recursive size: it loses the sizes of every folder losing its items.
  const total = db.prepare('SELECT COALESCE(SUM(size), 0) FROM temp.removal_folders').pluck().get() as number;
  addRootSize(db, root.type, root.id, -total);
  db.prepare('DELETE FROM rm_files WHERE item_id IN (SELECT id FROM temp.removal_items)').run();
  // Search rows by their keys (searchRows.ts), collected with the rows that hold them.
  db.prepare('DELETE FROM rm_items_fts WHERE rowid IN (SELECT search_rowid FROM temp.removal_items)').run();
  db.prepare('DELETE FROM rm_items WHERE id IN (SELECT id FROM temp.removal_items)').run();
  const removed = 'SELECT id FROM temp.removal_folders WHERE remove = 1';
  db.prepare(`DELETE FROM rm_acl WHERE resource_id IN (${removed})`).run();
  db.prepare(
    'DELETE FROM rm_folders_fts WHERE rowid IN (SELECT search_rowid FROM temp.removal_folders WHERE remove = 1)',
  ).run();
  db.prepare(`DELETE FROM rm_folders WHERE id IN (${removed})`).run();
  clearRemoval(db);
}

/** Where a subtree operation is recorded in the history index: the event's position and the folder in the request. */
interface HistoryAt {
  position: bigint;
  rootId: string;
}

/**
 * Removes a folder's subtree (with `keepRoot`, only what is under it: its items and descendants), sizes adjusted, and
 * records `deleted` history rows for the removed folders when `history` is given (the removal set its rows were
 * kept from is then reused). Returns false when the folder is not in the read model. Also used by the folder store
 * for a folder moved into a parent that a subtree delete removed earlier in log order.
 */
export function removeSubtree(db: SqliteDatabase, folderId: string, keepRoot: boolean, history?: HistoryAt): boolean {
  const folder = parentBase(db, folderId);
  if (!folder) return false;
  collectRemoval(db, folderId, keepRoot, history?.position ?? null);
  if (history) {
    db.prepare(
      `INSERT OR IGNORE INTO rm_subtree_ops (folder_id, position, operation, root_id)
       SELECT id, @position, CASE remove WHEN 1 THEN 'deleted' ELSE 'cleared' END, @root FROM temp.removal_folders`,
    ).run({ position: history.position, root: history.rootId });
  }
  removeCollected(db, folder);
  if (keepRoot)
    db.prepare("UPDATE rm_folders SET size = 0, doc = json_set(doc, '$.size', 0) WHERE id = ?").run(folderId);
  return true;
}

export class SqliteSubtree implements SubtreeQueries, SubtreeWrites {
  constructor(private readonly db: SqliteDatabase) {
    db.exec(DDL);
    ensureSubtreeSql(db);
  }

  // ---- queries ----

  // Subtree-wide reads run on the service's event loop (progress totals, the blob ids a delete may free): they walk
  // the subtree a chunk of folders at a time and let the loop run between chunks, so a 100k-folder subtree never holds
  // it. They are therefore not one snapshot: a write projected meanwhile may or may not be seen, which both callers
  // tolerate (a progress total; blob ids that are checked again before any byte is reclaimed, and a startup sweep).

  async subtreeCount(folderId: string): Promise<number> {
    if (!this.db.prepare('SELECT 1 FROM rm_folders WHERE id = ?').get(folderId)) return 0;
    const items = this.db
      .prepare('SELECT COUNT(*) FROM rm_items WHERE folder_id IN (SELECT value FROM json_each(?))')
      .pluck();
    let n = 0;
    for await (const folders of this.subtreeChunks(folderId))
      n += folders.length + (items.get(JSON.stringify(folders)) as number);
    return n;
  }

  async blobIdsInSubtree(folderId: string): Promise<string[]> {
    const blobs = this.db
      .prepare(
        `SELECT DISTINCT fl.blob_id FROM rm_items i JOIN rm_files fl ON fl.item_id = i.id
         WHERE i.folder_id IN (SELECT value FROM json_each(?))`,
      )
      .pluck();
    const found = new Set<string>();
    for await (const folders of this.subtreeChunks(folderId))
      for (const blobId of blobs.all(JSON.stringify(folders)) as string[]) found.add(blobId);
    return [...found];
  }

  /**
   * The folder and its descendants, about {@link SUBTREE_CHUNK} folder ids at a time, yielding in between. Walked down
   * the listing index a page of one parent's children at a time, so that no step between two yields reads more than
   * a chunk, however many children a folder has or however many leaves come in a row.
   */
  private async *subtreeChunks(folderId: string): AsyncGenerator<string[]> {
    // Keyset pages of the listing index; a parent's first page starts after ('', ''), before every child.
    const page = this.db
      .prepare(
        `SELECT lower_name, id FROM rm_folders WHERE parent_id = @parent AND parent_type = 'folder'
         AND (lower_name, id) > (@name, @id) ORDER BY lower_name, id ${sqlLimit(SUBTREE_CHUNK)}`,
      )
      .raw(true);
    const parents = [folderId];
    let chunk = [folderId];
    let pages = 0;
    for (let parent = parents.pop(); parent !== undefined; parent = parents.pop()) {
      let after: [string, string] | undefined = ['', ''];
      do {
        const [name, id] = after;
        const rows = page.all({ parent, name, id }) as [string, string][];
        for (const [, id] of rows) {
          chunk.push(id);
          parents.push(id);
        }
        after = rows.length === SUBTREE_CHUNK ? rows[rows.length - 1] : undefined;
        if (chunk.length >= SUBTREE_CHUNK || ++pages >= SUBTREE_CHUNK) {
          yield chunk;
          chunk = [];
          pages = 0;
          await new Promise((resolve) => setImmediate(resolve));
        }
      } while (after);
    }
    if (chunk.length > 0) yield chunk;
  }

  async subtreeOpsFor(folderId: string): Promise<SubtreeOp[]> {
    const rows = this.db
      .prepare(
        'SELECT folder_id, position, operation, root_id FROM rm_subtree_ops WHERE folder_id = ? ORDER BY position, operation',
      )
      .safeIntegers(true)
      .all(folderId) as { folder_id: string; position: bigint; operation: SubtreeOperation; root_id: string }[];
    return rows.map((r) => ({
      folderId: r.folder_id,
      position: r.position,
      operation: r.operation,
      rootId: r.root_id,
    }));
  }

  // ---- projection writes (synchronous, inside the adapter's transaction) ----

  deleteFolder(folderId: string, position: bigint): void {
    removeSubtree(this.db, folderId, false, { position, rootId: folderId });
  }

  clearContents(folderId: string, position: bigint): void {
    removeSubtree(this.db, folderId, true, { position, rootId: folderId });
  }

  deleteUnderRoot(rootType: RootType, rootId: string, position: bigint): void {
    // Every folder rooted there (each one's base parent is the root, however deep): the whole forest goes at once.
    collectRemovalUnderRoot(this.db, rootType, rootId);
    this.db
      .prepare(
        `INSERT OR IGNORE INTO rm_subtree_ops (folder_id, position, operation, root_id)
         SELECT id, @position, 'deleted', @root FROM temp.removal_folders`,
      )
      .run({ position, root: rootId });
    removeCollected(this.db, { type: rootType, id: rootId });
  }

  copyFolder(c: FolderCopyWrite, position: bigint): void {
    const db = this.db;
    const source = db.prepare('SELECT size FROM rm_folders WHERE id = ?').get(c.sourceId) as
      { size: number } | undefined;
    const base = childBase(db, c.parentType, c.parentId);
    // The projection copies only while both are there (src/projections/lateEvents.ts).
    if (!source || !base)
      throw new Error(
        `Projection: the source ${c.sourceId} or the destination ${c.parentId} of a copy is not in the read model.`,
      );
    if (db.prepare('SELECT 1 FROM rm_folders WHERE id = ?').get(c.folderId))
      throw new Error(`Projection: folder ${c.folderId} already exists.`);
    ensureWalkIndex(db);
    clearTemp(db);

    // 1. What is copied, decided before anything is inserted (so a copy landing inside its source is never copied):
    //    the source, and each descendant the copier may READ whose path below the source is all readable.
    db.prepare('INSERT INTO temp.copy_map (src, dst) VALUES (?, ?)').run(c.sourceId, c.folderId);
    if (c.copier.admin) {
      db.prepare(
        `INSERT INTO temp.copy_map (src, dst) SELECT id, derive_id(@op, id) FROM (${descendantsSql('@src')})`,
      ).run({ src: c.sourceId, op: c.opId });
    } else {
      // The walk does not enter a folder the copier may not read: it is left out with everything under it.
      const readable = `(c.public = 1 OR EXISTS (SELECT 1 FROM rm_acl x WHERE x.resource_id = c.id AND x.level >= 0 AND
           ((x.principal_type = 'user' AND x.principal_id = @user) OR
            (x.principal_type = 'group' AND x.principal_id IN (SELECT value FROM json_each(@groups))))))`;
      db.prepare(
        `INSERT INTO temp.copy_map (src, dst)
         SELECT id, derive_id(@op, id) FROM (${descendantsSql('@src', { descendInto: readable })})`,
      ).run({ src: c.sourceId, op: c.opId, user: c.copier.id, groups: JSON.stringify(c.copier.groups) });
    }
    db.prepare(
      'INSERT INTO temp.copy_items (src, dst, folder_dst) SELECT i.id, derive_id(@op, i.id), m.dst FROM temp.copy_map m CROSS JOIN rm_items i ON i.folder_id = m.src',
    ).run({ op: c.opId });

    // 2. Folders: the new root from the event, the copied descendants from their sources. Descendants inherit from
    //    their new parent as on creation (public, or false; its ACL, which already gives the copier ADMIN), and keep
    //    their source's name, description, metadata, publicFlags and size (all items are copied).
    const rootDoc = {
      _id: c.folderId,
      name: c.name,
      lowerName: c.name.toLowerCase(),
      description: c.description,
      creatorId: c.creatorId,
      created: c.created,
      updated: c.created,
      size: source.size,
      ...(c.public !== undefined ? { public: c.public } : {}),
      ...(c.publicFlags !== undefined ? { publicFlags: c.publicFlags } : {}),
      access: c.access,
      meta: c.meta,
    };
    const rootSearchRowid = insertSearchRow(db, 'rm_folders', c.folderId, c.name, c.description);
    db.prepare(
      `INSERT INTO rm_folders (id, parent_type, parent_id, name, lower_name, base_parent_type, base_parent_id, public, created, updated, size, doc, search_rowid)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      c.folderId,
      c.parentType,
      c.parentId,
      c.name,
      c.name.toLowerCase(),
      base.type,
      base.id,
      toBit(c.public),
      c.created,
      c.created,
      source.size,
      JSON.stringify(rootDoc),
      rootSearchRowid,
    );
    const inherited = c.public ?? false;
    const args = {
      baseType: base.type,
      baseId: base.id,
      publicBit: toBit(inherited),
      publicJson: JSON.stringify(inherited),
      created: c.created,
      creator: c.creatorId,
      access: JSON.stringify(c.access),
      searchFrom: nextSearchRowid(db, 'rm_folders'),
    };
    const docOf = (flags: boolean) =>
      `json_object('_id', m.dst, 'name', f.name, 'lowerName', f.lower_name, 'description', f.doc ->> '$.description',
        'creatorId', @creator, 'created', @created, 'updated', @created, 'size', f.size, 'public', json(@publicJson),
        ${flags ? "'publicFlags', json(f.doc -> '$.publicFlags'), " : ''}'access', json(@access),
        'meta', json(COALESCE(f.doc -> '$.meta', '{}')))`;
    // The copies' search keys (searchRows.ts) are numbered from the next free one, in source id order.
    db.prepare(
      `INSERT INTO rm_folders (id, parent_type, parent_id, name, lower_name, base_parent_type, base_parent_id, public, created, updated, size, doc, search_rowid)
       SELECT m.dst, 'folder', pm.dst, f.name, f.lower_name, @baseType, @baseId, @publicBit, @created, @created, f.size,
         CASE WHEN json_type(f.doc, '$.publicFlags') IS NULL THEN ${docOf(false)} ELSE ${docOf(true)} END,
         @searchFrom + ROW_NUMBER() OVER (ORDER BY m.src) - 1
       FROM temp.copy_map m CROSS JOIN rm_folders f ON f.id = m.src CROSS JOIN temp.copy_map pm ON pm.src = f.parent_id
       WHERE m.src != @source ORDER BY m.dst`,
    ).run({ ...args, source: c.sourceId });

    // 3. Search rows (the root's is in already), under the copies' keys and in their order (FTS5 writes ascending
    //    rowids without flushing), and ACL rows.
    db.prepare(
      `INSERT INTO rm_folders_fts (rowid, id, name, description)
       SELECT f.search_rowid, f.id, f.name, f.doc ->> '$.description' FROM temp.copy_map m CROSS JOIN rm_folders f ON f.id = m.dst
       WHERE m.src != @source ORDER BY m.src`,
    ).run({ source: c.sourceId });
    const acl = db.prepare(
      `INSERT OR REPLACE INTO rm_acl (resource_id, principal_type, principal_id, level)
       SELECT m.dst, @type, e.value ->> '$.id', e.value ->> '$.level' FROM temp.copy_map m, json_each(@entries) e
       ORDER BY m.dst`,
    );
    acl.run({ type: 'user', entries: JSON.stringify(c.access.users) });
    acl.run({ type: 'group', entries: JSON.stringify(c.access.groups) });

    // 4. Items and files: every item of every copied folder; each file references the same blob (its reference count
    //    goes up, no bytes are copied). A blob referenced here is referenced by its source file in this same
    //    transaction, so a copy never brings an unreferenced (possibly reclaimed) blob back.
    db.prepare(
      `INSERT INTO rm_items (id, folder_id, name, lower_name, base_parent_type, base_parent_id, created, updated, size, doc, search_rowid)
       SELECT ci.dst, ci.folder_dst, i.name, i.lower_name, @baseType, @baseId, @created, @created, i.size,
         json_set(i.doc, '$._id', ci.dst, '$.creatorId', @creator, '$.created', @created, '$.updated', @created, '$.copyOfItem', i.id),
         @searchFrom + ROW_NUMBER() OVER (ORDER BY ci.src) - 1
       FROM temp.copy_items ci CROSS JOIN rm_items i ON i.id = ci.src ORDER BY ci.dst`,
    ).run({
      baseType: base.type,
      baseId: base.id,
      created: c.created,
      creator: c.creatorId,
      searchFrom: nextSearchRowid(db, 'rm_items'),
    });
    db.prepare(
      `INSERT INTO rm_items_fts (rowid, id, name, description)
       SELECT i.search_rowid, i.id, i.name, i.doc ->> '$.description' FROM temp.copy_items ci CROSS JOIN rm_items i ON i.id = ci.dst
       ORDER BY ci.src`,
    ).run();
    db.prepare(
      `WITH copies AS MATERIALIZED (
         SELECT derive_id(@op, fl.id) AS id, ci.dst AS item_id, fl.id AS src FROM temp.copy_items ci CROSS JOIN rm_files fl ON fl.item_id = ci.src)
       INSERT INTO rm_files (id, item_id, name, blob_id, size, created, doc)
       SELECT c.id, c.item_id, fl.name, fl.blob_id, fl.size, fl.created,
         json_set(fl.doc, '$._id', c.id, '$.itemId', c.item_id, '$.copyOfFile', fl.id, '$.copierId', @creator, '$.copied', @created)
       FROM copies c CROSS JOIN rm_files fl ON fl.id = c.src ORDER BY c.id`,
    ).run({ op: c.opId, creator: c.creatorId, created: c.created });

    // 5. Sizes: each copy has its source's size (its direct items); the root gains the copy's recursive size.
    const { total } = db
      .prepare('SELECT COALESCE(SUM(f.size), 0) AS total FROM temp.copy_map m CROSS JOIN rm_folders f ON f.id = m.src')
      .get() as { total: number };
    addRootSize(db, base.type, base.id, total);

    // 6. History index.
    const history = db.prepare(
      'INSERT OR IGNORE INTO rm_subtree_ops (folder_id, position, operation, root_id) SELECT dst, @position, @op, @root FROM temp.copy_map ORDER BY dst',
    );
    history.run({ position, op: 'copied', root: c.folderId });
    db.prepare(
      'INSERT OR IGNORE INTO rm_subtree_ops (folder_id, position, operation, root_id) SELECT src, @position, @op, @root FROM temp.copy_map',
    ).run({ position, op: 'copiedFrom', root: c.folderId });
    clearTemp(db);
  }

  recordOps(folderIds: string[], position: bigint, operation: SubtreeOperation, rootId: string): void {
    if (folderIds.length === 0) return;
    this.db
      .prepare(
        `INSERT OR IGNORE INTO rm_subtree_ops (folder_id, position, operation, root_id)
         SELECT value, @position, @operation, @root FROM json_each(@ids)`,
      )
      .run({ ids: JSON.stringify(folderIds), position, operation, root: rootId });
  }
}
