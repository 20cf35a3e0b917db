import { prepared } from '../../sqlite/preparedStatements';
import { sqlLimit } from '../../sqlite/sqlLimit';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { ParentType, RootType } from '../../../domain/parents';

/**
 * Folder ancestry is read from the folders' parent links alone: a subtree is walked down with a recursive query on the
 * `rm_folders_parent_sort` index (parent, then the children's ids, so the walk never reads the table), and a folder's
 * ancestors are walked up through the primary key. Nothing else stores the tree.
 *
 * It replaced a closure table (one row per folder and ancestor, in two indexes), and then a materialized path column
 * (measured and not kept: its index keys were as long as the tree is deep). With a subtree 8 levels deep on average,
 * the closure table wrote or deleted 16 index entries per folder: a quarter of a 100k-folder delete's time, a third of
 * a copy's, and most of the rows a rebuild wrote. Walking a 100k-folder subtree down costs ~0.2 s, once per
 * operation; walking up costs one primary-key lookup per level. A move changes one row.
 */

/**
 * The index the walk down reads (it also serves the default listing, see foldersReads.ts). A replay creates it only
 * when its first subtree event needs it (replayMode.ts): a log without any is replayed without maintaining it.
 */
export const PARENT_SORT_INDEX =
  'CREATE INDEX IF NOT EXISTS rm_folders_parent_sort ON rm_folders (parent_id, parent_type, lower_name, id)';

/** Before a walk down that may run in replay mode: the index it reads, created if it is not there. */
export function ensureWalkIndex(db: SqliteDatabase): void {
  if (!prepared(db, "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'rm_folders_parent_sort'").get())
    db.exec(PARENT_SORT_INDEX);
}

/**
 * SQL (a SELECT of `id`): the folders strictly under the folder whose id is bound to `param`. `descendInto`, a
 * condition on the child `c`, prunes the walk: a child failing it is left out with everything under it. `limit` stops
 * the walk after that many folders.
 */
export function descendantsSql(param: string, options: { descendInto?: string; limit?: number } = {}): string {
  const pruned = options.descendInto ? ` AND ${options.descendInto}` : '';
  return `WITH RECURSIVE down (id) AS (
      SELECT c.id FROM rm_folders c WHERE c.parent_id = ${param} AND c.parent_type = 'folder'${pruned}
      UNION ALL
      SELECT c.id FROM down JOIN rm_folders c ON c.parent_id = down.id AND c.parent_type = 'folder'${pruned}
      ${options.limit !== undefined ? sqlLimit(options.limit) : ''})
    SELECT id FROM down`;
}

/** SQL (a SELECT of `id`): the folder bound to `param` and every folder under it. */
export const selfAndDescendantsSql = (param: string): string =>
  `SELECT ${param} AS id UNION ALL SELECT id FROM (${descendantsSql(param)})`;

/**
 * Deepest walk up: far beyond any real tree, it only bounds a walk that met a cycle. The tree has none (moves are
 * decided one at a time against the whole tree, FOLDER_TREE_STREAM), but a request must never spin on one.
 */
const MAX_DEPTH = 1_000_000;

/**
 * SQL (a SELECT of `id, depth`): the folders above the folder bound to `param`, its parent at depth 1 (none when it
 * sits under a user or collection, or is not stored).
 */
export const ancestorsSql = (param: string): string =>
  `WITH RECURSIVE up (id, depth) AS (
      SELECT parent_id, 1 FROM rm_folders WHERE id = ${param} AND parent_type = 'folder'
      UNION ALL
      SELECT f.parent_id, up.depth + 1 FROM up JOIN rm_folders f ON f.id = up.id AND f.parent_type = 'folder'
      WHERE up.depth < ${MAX_DEPTH})
    SELECT id, depth FROM up`;

/** A file from before: the closure table that held the ancestry goes (nothing reads it). */
export function dropClosureTable(db: SqliteDatabase): void {
  db.exec('DROP TABLE IF EXISTS rm_folder_ancestors');
}

/** Where a folder is rooted: the user or collection at the top of its tree. */
export interface FolderBase {
  type: RootType;
  id: string;
}

/** The base parent (root) of a stored folder, which its new children inherit; null when it is not stored. */
export function parentBase(db: SqliteDatabase, parentId: string): FolderBase | null {
  return (
    (prepared(db, 'SELECT base_parent_type AS type, base_parent_id AS id FROM rm_folders WHERE id = ?').get(
      parentId,
    ) as FolderBase | undefined) ?? null
  );
}

/**
 * Where a new child of the parent is rooted: a folder's base parent, or the user or collection itself; null when the
 * parent is not stored.
 */
export function childBase(db: SqliteDatabase, parentType: ParentType, parentId: string): FolderBase | null {
  if (parentType === 'folder') return parentBase(db, parentId);
  const table = parentType === 'user' ? 'rm_users' : 'rm_collections';
  return prepared(db, `SELECT 1 FROM ${table} WHERE id = ?`).get(parentId) ? { type: parentType, id: parentId } : null;
}
