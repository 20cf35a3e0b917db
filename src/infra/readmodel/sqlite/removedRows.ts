import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { FolderRestoreWrite } from '../../../ports/readModel';
import { addRootSize } from './sizes';
import { notStored } from '../notStored';
import { collectRemoval } from './removalSet';
import { childBase, type FolderBase } from './folderTree';
import { nextSearchRowid } from './searchRows';

/*
 * The removed rows of the embedded read model (historyStore.ts, point 1): what a folder delete or clear keeps in
 * `rm_deleted_folders`, `rm_deleted_items` and `rm_deleted_files` just before it removes a subtree, and the restore
 * that moves a folder's part of them back. Both run synchronously inside the event's read-model transaction.
 */

/** The working sets of a restore: the restored folders and their items (per connection, emptied after each use). */
export const RESTORE_TEMP_DDL = `
CREATE TEMP TABLE IF NOT EXISTS history_set (id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TEMP TABLE IF NOT EXISTS history_items (id TEXT PRIMARY KEY) WITHOUT ROWID;
`;

/**
 * `kept_subtree(id)`: the folder `@id` and the folders kept with it by the delete or clear at `@dp` that were under
 * it, walked down through the kept rows' parents.
 */
export const KEPT_SUBTREE = `
  WITH RECURSIVE kept_subtree (id) AS (
    SELECT id FROM rm_deleted_folders WHERE position = @dp AND id = @id
    UNION ALL
    SELECT d.id FROM kept_subtree k
    JOIN rm_deleted_folders d ON d.position = @dp AND d.parent_id = k.id AND d.parent_type = 'folder')`;

const FOLDER_COLUMNS =
  'parent_type, parent_id, name, lower_name, base_parent_type, base_parent_id, public, created, updated, size, doc';
const ITEM_COLUMNS = 'folder_id, name, lower_name, base_parent_type, base_parent_id, created, updated, size, doc';
const FILE_COLUMNS = 'item_id, name, blob_id, size, created, doc';

/**
 * Keeps the rows a delete (`keepRoot` false) or clear (true) of `folderId` at `position` is about to remove, stamped
 * with its time `at`.
 */
export function keepRemoved(
  db: SqliteDatabase,
  folderId: string,
  keepRoot: boolean,
  position: bigint,
  at: string,
): void {
  if (!prepared(db, 'SELECT 1 FROM rm_folders WHERE id = ?').get(folderId)) return;
  // The removal's working set, which the removal that follows reuses (removalSet.ts). Kept: the removed folders
  // (every descendant, and the folder itself unless only its contents go), their items and files. (The items
  // directly in a cleared folder go too but are not kept: only a removed folder can be restored, and they belong
  // to none.)
  collectRemoval(db, folderId, keepRoot, position);
  const args = { position, root: folderId, operation: keepRoot ? 'cleared' : 'deleted', at };
  prepared(
    db,
    `INSERT OR REPLACE INTO rm_deleted_folders (position, id, root_id, operation, deleted_at, ${FOLDER_COLUMNS})
     SELECT @position, f.id, @root, @operation, @at, ${prefixed('f', FOLDER_COLUMNS)}
     FROM temp.removal_folders s CROSS JOIN rm_folders f ON f.id = s.id WHERE s.remove = 1`,
  ).run(args);
  const cleared = keepRoot ? folderId : '';
  prepared(
    db,
    `INSERT OR REPLACE INTO rm_deleted_items (position, id, deleted_at, ${ITEM_COLUMNS})
     SELECT @position, i.id, @at, ${prefixed('i', ITEM_COLUMNS)}
     FROM temp.removal_items h CROSS JOIN rm_items i ON i.id = h.id WHERE h.folder_id != @cleared`,
  ).run({ position, at, cleared });
  // In id order (the items' order scatters the files' ids): appended to the primary key and the `deleted_at` index.
  prepared(
    db,
    `INSERT OR REPLACE INTO rm_deleted_files (position, id, deleted_at, ${FILE_COLUMNS})
     SELECT @position, fl.id, @at, ${prefixed('fl', FILE_COLUMNS)}
     FROM temp.removal_items h CROSS JOIN rm_files fl ON fl.item_id = h.id WHERE h.folder_id != @cleared
     ORDER BY fl.id`,
  ).run({ position, at, cleared });
}

/**
 * FolderRestored: the folder `r.folderId`, removed by the operation at `r.deletedPosition`, and what that operation
 * removed below it, are back under `r.parentType/r.parentId` (the folder renamed `r.name`); `position` is the
 * restore's. Nothing happens when the folder is live again or nothing of it is kept (a replayed event).
 */
export function restoreKept(db: SqliteDatabase, r: FolderRestoreWrite, position: bigint): void {
  const dp = r.deletedPosition;
  if (prepared(db, 'SELECT 1 FROM rm_folders WHERE id = ?').get(r.folderId)) return;
  if (!prepared(db, 'SELECT 1 FROM rm_deleted_folders WHERE position = ? AND id = ?').get(dp, r.folderId)) return;
  const base = childBase(db, r.parentType, r.parentId);
  // The projection guards the write on the new parent (src/projections/lateEvents.ts).
  if (!base) throw notStored('new parent', r.parentId, r.folderId);
  clearWorkingSets(db);
  prepared(db, `${KEPT_SUBTREE} INSERT INTO temp.history_set (id) SELECT id FROM kept_subtree`).run({
    dp,
    id: r.folderId,
  });
  restoreFolderRows(db, r, base);
  restoreAclAndSearchRows(db);
  restoreItemsAndFiles(db, dp, base);
  addRootSize(db, base.type, base.id, restoredSize(db));
  forgetKept(db, dp);
  prepared(
    db,
    `INSERT OR IGNORE INTO rm_subtree_ops (folder_id, position, operation, root_id)
     SELECT id, @position, 'restored', @root FROM temp.history_set`,
  ).run({ position, root: r.folderId });
  clearWorkingSets(db);
}

/**
 * The folders, as kept, under the new root; the restored folder itself under its new parent with its new name. Their
 * search keys (searchRows.ts) are numbered from the next free one, in id order.
 */
function restoreFolderRows(db: SqliteDatabase, r: FolderRestoreWrite, base: FolderBase): void {
  const lower = r.name.toLowerCase();
  prepared(
    db,
    `INSERT INTO rm_folders (id, ${FOLDER_COLUMNS}, search_rowid)
     SELECT d.id,
       CASE WHEN d.id = @id THEN @parentType ELSE d.parent_type END,
       CASE WHEN d.id = @id THEN @parentId ELSE d.parent_id END,
       CASE WHEN d.id = @id THEN @name ELSE d.name END, CASE WHEN d.id = @id THEN @lower ELSE d.lower_name END,
       @baseType, @baseId, d.public, d.created, d.updated, d.size,
       CASE WHEN d.id = @id THEN json_set(d.doc, '$.name', @name, '$.lowerName', @lower) ELSE d.doc END,
       @searchFrom + ROW_NUMBER() OVER (ORDER BY d.id) - 1
     FROM temp.history_set s CROSS JOIN rm_deleted_folders d ON d.position = @dp AND d.id = s.id`,
  ).run({
    id: r.folderId,
    dp: r.deletedPosition,
    parentType: r.parentType,
    parentId: r.parentId,
    name: r.name,
    lower,
    baseType: base.type,
    baseId: base.id,
    searchFrom: nextSearchRowid(db, 'rm_folders'),
  });
}

/**
 * ACL and search rows of the restored folders, from their documents; the search rows under the folders' keys, in
 * their order (FTS5 writes ascending rowids without flushing).
 */
function restoreAclAndSearchRows(db: SqliteDatabase): void {
  for (const type of ['user', 'group'] as const) {
    prepared(
      db,
      `INSERT OR REPLACE INTO rm_acl (resource_id, principal_type, principal_id, level)
       SELECT f.id, @type, e.value ->> '$.id', e.value ->> '$.level'
       FROM temp.history_set s CROSS JOIN rm_folders f ON f.id = s.id, json_each(f.doc, @path) e`,
    ).run({ type, path: type === 'user' ? '$.access.users' : '$.access.groups' });
  }
  prepared(
    db,
    `INSERT INTO rm_folders_fts (rowid, id, name, description)
     SELECT f.search_rowid, f.id, f.name, f.doc ->> '$.description' FROM temp.history_set s CROSS JOIN rm_folders f ON f.id = s.id
     ORDER BY s.id`,
  ).run();
}

/** The kept items of the restored folders and their files, rooted under the new root. */
function restoreItemsAndFiles(db: SqliteDatabase, dp: bigint, base: FolderBase): void {
  prepared(
    db,
    `INSERT INTO temp.history_items (id)
     SELECT i.id FROM temp.history_set s CROSS JOIN rm_deleted_items i ON i.position = @dp AND i.folder_id = s.id`,
  ).run({ dp });
  prepared(
    db,
    `INSERT INTO rm_items (id, ${ITEM_COLUMNS}, search_rowid)
     SELECT i.id, i.folder_id, i.name, i.lower_name, @baseType, @baseId, i.created, i.updated, i.size, i.doc,
       @searchFrom + ROW_NUMBER() OVER (ORDER BY i.id) - 1
     FROM temp.history_items h CROSS JOIN rm_deleted_items i ON i.position = @dp AND i.id = h.id`,
  ).run({ dp, baseType: base.type, baseId: base.id, searchFrom: nextSearchRowid(db, 'rm_items') });
  prepared(
    db,
    `INSERT INTO rm_items_fts (rowid, id, name, description)
     SELECT i.search_rowid, i.id, i.name, i.doc ->> '$.description' FROM temp.history_items h CROSS JOIN rm_items i ON i.id = h.id
     ORDER BY h.id`,
  ).run();
  prepared(
    db,
    `INSERT INTO rm_files (id, ${FILE_COLUMNS})
     SELECT fl.id, ${prefixed('fl', FILE_COLUMNS)}
     FROM temp.history_items h
     JOIN rm_deleted_files fl ON fl.position = @dp AND fl.item_id = h.id`,
  ).run({ dp });
}

/** The recursive size the new root gains: the restored folders' sizes (each folder's size is its direct items). */
function restoredSize(db: SqliteDatabase): number {
  return prepared(db, 'SELECT COALESCE(SUM(f.size), 0) FROM temp.history_set s CROSS JOIN rm_folders f ON f.id = s.id')
    .pluck()
    .get() as number;
}

/** What was kept for the restored part is no longer kept. */
function forgetKept(db: SqliteDatabase, dp: bigint): void {
  prepared(
    db,
    'DELETE FROM rm_deleted_files WHERE position = @dp AND item_id IN (SELECT id FROM temp.history_items)',
  ).run({ dp });
  prepared(db, 'DELETE FROM rm_deleted_items WHERE position = @dp AND id IN (SELECT id FROM temp.history_items)').run({
    dp,
  });
  prepared(db, 'DELETE FROM rm_deleted_folders WHERE position = @dp AND id IN (SELECT id FROM temp.history_set)').run({
    dp,
  });
}

function clearWorkingSets(db: SqliteDatabase): void {
  prepared(db, 'DELETE FROM temp.history_set').run();
  prepared(db, 'DELETE FROM temp.history_items').run();
}

/** `a, b` → `t.a, t.b`. */
function prefixed(table: string, columns: string): string {
  return columns
    .split(',')
    .map((c) => `${table}.${c.trim()}`)
    .join(', ');
}
