import type { Database } from 'better-sqlite3';
import type { Paging } from '../../../domain/paging';
import { limitSql } from './sqlHelpers';

/**
 * A listing for a viewer who reads only part of a parent's children, without a walk over the others.
 *
 * The parent's sort index walks every child in order, and the ACL check then drops those the viewer may not read: a
 * page cost as many rows as the walk passed, so a user who reads 1 child in 100, or whose children sort last, paid
 * for all the siblings (20k children, 1 in 100 readable: 7 ms for the first page, 20 ms for the last). Children are
 * grouped by *read class* instead (readClassCounts.ts: `public`, or the ACL as the document holds it), which the
 * maintained counts already list per parent: `rm_folders_parent_class_sort` orders each parent's children by class,
 * then by the listing's sort key, and a page is a merge of the classes the viewer reads, one index range each, in one
 * compound `SELECT … UNION ALL … ORDER BY … LIMIT`. SQLite merges the ranges in order and stops at the page's end.
 *
 * The index keys a class by a 32-bit hash of its text (the text itself would put each ACL's JSON in every entry).
 * Two classes may share a hash: every row still passes the viewer's exact ACL check, so a collision only costs the
 * rows of the other class, never a wrong answer. The hash is an SQL function of this application, registered on every
 * connection to the file (openDatabase.ts), since SQLite evaluates it on every write of a folder row.
 */
const READ_CLASS_HASH_FUNCTION = 'rm_read_class_hash';

/** The read class of a folder row (`prefix`: the row's name in a trigger or a query, none in an index). */
export function readClassSql(prefix?: string): string {
  const p = prefix ? `${prefix}.` : '';
  return `CASE WHEN ${p}public THEN 'public' ELSE ${p}doc -> '$.access' END`;
}

const readClassHashSql = (prefix?: string) => `${READ_CLASS_HASH_FUNCTION}(${readClassSql(prefix)})`;

export const READ_CLASS_SORT_INDEX = 'rm_folders_parent_class_sort';

export const READ_CLASS_SORT_INDEX_DDL = `CREATE INDEX IF NOT EXISTS ${READ_CLASS_SORT_INDEX}
  ON rm_folders (parent_id, parent_type, ${readClassHashSql()}, lower_name, id)`;

/** FNV-1a over the UTF-16 code units of a read class: the same on every connection and in the application. */
export function readClassHash(readClass: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < readClass.length; i++) {
    hash ^= readClass.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

/** On a connection as it opens (openDatabase.ts, which this module cannot import: it imports this one). */
export function registerReadClassHash(db: Database): void {
  db.function(READ_CLASS_HASH_FUNCTION, { deterministic: true }, (readClass: unknown) =>
    typeof readClass === 'string' ? readClassHash(readClass) : null,
  );
}

/** Most classes merged in one page; a parent whose readable children span more is listed by the walk. */
export const MAX_MERGED_CLASSES = 16;

/**
 * The page of a parent's children in the given read classes, by `lowerName` (ties by id) in `paging`'s direction:
 * the SQL and its arguments. Each arm selects `columns` of `f` (the folder row) and the sort key; `readable` is the
 * viewer's exact READ check on `f`, kept in every arm.
 */
export function readClassesPageSql(
  columns: string,
  readClasses: string[],
  parent: { type: string; id: string },
  readable: { sql: string; args: unknown[] },
  paging: Paging,
): { sql: string; args: unknown[] } {
  const hashes = [...new Set(readClasses.map(readClassHash))];
  const arm = `SELECT ${columns}, f.lower_name AS sort_key FROM rm_folders f
    WHERE f.parent_id = ? AND f.parent_type = ? AND ${readClassHashSql('f')} = ? AND ${readable.sql}`;
  const dir = paging.sortdir === -1 ? 'DESC' : 'ASC';
  const limit = limitSql(paging);
  return {
    sql: `${hashes.map(() => arm).join(' UNION ALL ')} ORDER BY sort_key ${dir}, id ${dir}${limit.sql}`,
    args: [...hashes.flatMap((hash) => [parent.id, parent.type, hash, ...readable.args]), ...limit.args],
  };
}
