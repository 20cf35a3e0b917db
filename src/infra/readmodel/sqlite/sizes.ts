import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { RootType } from '../../../domain/parents';

/**
 * Size bookkeeping shared by the stores (Girder §0): a folder's `size` is the sum of the items directly in it, a root
 * user's or collection's `size` the sum of everything under it. The value lives in the JSON document (and in the
 * `size` column where the table has one); both change together, so a later field update that re-reads the document
 * keeps it.
 */
const bump = (column: boolean) =>
  `${column ? 'size = size + @delta, ' : ''}doc = json_set(doc, '$.size', COALESCE(json_extract(doc, '$.size'), 0) + @delta)`;

export function addFolderSize(db: SqliteDatabase, id: string, delta: number): void {
  if (delta !== 0) prepared(db, `UPDATE rm_folders SET ${bump(true)} WHERE id = @id`).run({ id, delta });
}

export function addUserSize(db: SqliteDatabase, id: string, delta: number): void {
  if (delta !== 0) prepared(db, `UPDATE rm_users SET ${bump(false)} WHERE id = @id`).run({ id, delta });
}

export function addCollectionSize(db: SqliteDatabase, id: string, delta: number): void {
  if (delta !== 0) prepared(db, `UPDATE rm_collections SET ${bump(true)} WHERE id = @id`).run({ id, delta });
}

export function addRootSize(db: SqliteDatabase, type: RootType, id: string, delta: number): void {
  if (type === 'user') addUserSize(db, id, delta);
  else addCollectionSize(db, id, delta);
}

/**
 * After a folder subtree moved from one root to another: the subtree's recursive size (the sum of its folders' sizes,
 * each being its direct items) leaves the old root for the new one, and the subtree's items take the new base parent.
 * `subtreeSql` selects the subtree's folder ids with named parameter `@id`.
 */
export function followFolderMove(
  db: SqliteDatabase,
  subtreeSql: string,
  id: string,
  from: { type: RootType; id: string } | undefined,
  to: { type: RootType; id: string },
): void {
  prepared(
    db,
    `UPDATE rm_items SET base_parent_type = @type, base_parent_id = @base WHERE folder_id IN (${subtreeSql})`,
  ).run({
    id,
    type: to.type,
    base: to.id,
  });
  if (!from || (from.type === to.type && from.id === to.id)) return;
  const { total } = prepared(
    db,
    `SELECT COALESCE(SUM(size), 0) AS total FROM rm_folders WHERE id IN (${subtreeSql})`,
  ).get({ id }) as {
    total: number;
  };
  addRootSize(db, from.type, from.id, -total);
  addRootSize(db, to.type, to.id, total);
}
