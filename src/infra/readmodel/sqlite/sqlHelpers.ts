import type { Viewer } from '../../../domain/access';
import type { Paging } from '../../../domain/paging';
import type { Database } from 'better-sqlite3';
import { sqlLimit } from '../../sqlite/sqlLimit';
import { ownValue } from '../../../domain/ownMap';

/** Whether the file has a table of that name (a table created by a later version than the file's is not there yet). */
export const tableExists = (db: Database, name: string): boolean =>
  db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;

/** Columns that listings may sort on directly; any other field is read from the JSON document. */
export type SortColumns = Record<string, string>;

/**
 * ORDER BY / LIMIT / OFFSET for a Girder paging spec. Unknown sort fields are JSON paths bound as parameters
 * (never spliced into SQL). Ties are broken by id so that pages are stable.
 */
export function pagingSql(paging: Paging, columns: SortColumns, table: string): { sql: string; args: unknown[] } {
  const dir = paging.sortdir === -1 ? 'DESC' : 'ASC';
  const { key, args } = sortKeySql(paging.sort, columns, table);
  const limit = limitSql(paging);
  return { sql: ` ORDER BY ${key} ${dir}, ${table}.id ${dir}${limit.sql}`, args: [...args, ...limit.args] };
}

/** The expression a listing sorts `table`'s rows by: a column, or the field's JSON path in the document. */
function sortKeySql(sort: string, columns: SortColumns, table: string): { key: string; args: unknown[] } {
  // An own-property lookup: a sort named `constructor` or `__proto__` is a JSON path like any other field.
  const column = ownValue(columns, sort);
  if (column !== undefined) return { key: `${table}.${column}`, args: [] };
  return { key: `json_extract(${table}.doc, ?)`, args: [jsonPath(sort)] };
}

/**
 * The rows of `table` (as `alias`) that come before row `id` in {@link pagingSql}'s order (Girder's findPosition):
 * a `JOIN` that reads that row's sort key once (as `me.k`, empty when there is no such row) and the condition.
 * NULL sorts first ascending and last descending, as SQLite's ORDER BY does; equal keys are ordered by id.
 */
export function beforeRowSql(
  paging: Paging,
  columns: SortColumns,
  table: string,
  alias: string,
  id: string,
): { join: string; joinArgs: unknown[]; condition: string; args: unknown[] } {
  const own = sortKeySql(paging.sort, columns, 'me');
  const { key, args } = sortKeySql(paging.sort, columns, alias);
  const condition =
    paging.sortdir === -1
      ? `(${key} > me.k OR (me.k IS NULL AND ${key} IS NOT NULL) OR (${key} IS me.k AND ${alias}.id > me.id))`
      : `(${key} < me.k OR (${key} IS NULL AND me.k IS NOT NULL) OR (${key} IS me.k AND ${alias}.id < me.id))`;
  return {
    join: `JOIN (SELECT ${own.key} AS k, me.id AS id FROM ${table} me WHERE me.id = ?) me`,
    joinArgs: [...own.args, id],
    condition,
    args: [...args, ...args, ...args],
  };
}

/** The page's `LIMIT … OFFSET …` (none when it asks for every row from the start). */
export function limitSql(paging: Paging): { sql: string; args: unknown[] } {
  // The count in the text, so that the statement is not compiled again on every run (sqlLimit).
  if (paging.limit > 0) return { sql: ` ${sqlLimit(paging.limit)} OFFSET ?`, args: [Math.max(0, paging.offset)] };
  if (paging.offset > 0) return { sql: ' LIMIT -1 OFFSET ?', args: [paging.offset] };
  return { sql: '', args: [] };
}

/**
 * `meta.a.b` → `$."meta"."a"."b"`. SQLite reads a quoted path label as a JSON string (backslash escapes, `\u0000`),
 * so each segment is written as one (JSON.stringify): a `"`, a backslash or a NUL in a metadata key names that key,
 * never a malformed path (which SQLite refuses with an error, a 500).
 */
function jsonPath(field: string): string {
  return (
    '$' +
    field
      .split('.')
      .map((part) => `.${JSON.stringify(part)}`)
      .join('')
  );
}

/**
 * The READ permission filter of a resource table, inside the query (Girder: admin → no filter; else public OR a
 * user entry OR a group entry with level >= READ). `rm_acl` holds one row per ACL entry.
 */
export function readableSql(table: string, viewer: Viewer | null, level = 0): { sql: string; args: unknown[] } {
  if (viewer?.admin) return { sql: '1', args: [] };
  const publicClause = level === 0 ? `${table}.public = 1` : '0';
  if (!viewer) return { sql: publicClause, args: [] };
  return {
    sql: `(${publicClause} OR EXISTS (SELECT 1 FROM rm_acl a WHERE a.resource_id = ${table}.id AND a.level >= ? AND
      ((a.principal_type = 'user' AND a.principal_id = ?) OR (a.principal_type = 'group' AND a.principal_id IN (SELECT value FROM json_each(?))))))`,
    args: [level, viewer.id, JSON.stringify(viewer.groups)],
  };
}

/**
 * Turns user search text into an FTS5 query with MongoDB `$text` semantics: any of the words matches, a quoted
 * phrase must match as a phrase, a word prefixed with `-` excludes. Every term is quoted so that FTS syntax in user
 * input is inert. Returns null when nothing searchable remains.
 */
export function ftsQuery(text: string): string | null {
  const phrases: string[] = [];
  const excluded: string[] = [];
  const words: string[] = [];
  const quote = (t: string) => `"${t.replace(/"/g, '""')}"`;
  const rest = text.replace(/"([^"]*)"/g, (_, phrase: string) => {
    if (phrase.trim()) phrases.push(quote(phrase.trim()));
    return ' ';
  });
  for (const token of rest.split(/\s+/).filter(Boolean)) {
    const cleaned = token
      .replace(/^-+/, '')
      .replace(/[^\p{L}\p{N}_]+/gu, ' ')
      .trim();
    if (!cleaned) continue;
    for (const part of cleaned.split(/\s+/)) (token.startsWith('-') ? excluded : words).push(quote(part));
  }
  let query = phrases.length ? phrases.join(' AND ') : words.length ? `(${words.join(' OR ')})` : '';
  if (!query) return null;
  if (excluded.length) query += ` NOT (${excluded.join(' OR ')})`;
  return query;
}

/**
 * Girder's prefix search on a table with `name` and `lower_name` (`PrefixSearch` in the read-model port): the name
 * starts with the prefix as typed, or the lower-cased name does. Compared by `substr`, not LIKE or GLOB, so no
 * character of the prefix is a wildcard and each comparison keeps its case.
 */
export function namePrefixSql(alias: string, prefix: string): { sql: string; args: unknown[] } {
  return {
    sql: `(substr(${alias}.name, 1, length(?)) = ? OR substr(${alias}.lower_name, 1, length(?)) = ?)`,
    args: [prefix, prefix, prefix, prefix],
  };
}

/**
 * Lower-casing as JavaScript (and MongoDB's `i` option) does it, for every script: SQLite's own `lower()` folds ASCII
 * only, so `lower('Émile')` would never equal the JavaScript-lowered `'émile'`. Registered on every connection
 * (openDatabase.ts); any SQL that lowers a stored value to compare it with a lowered parameter uses it.
 */
export const UNICODE_LOWER = 'unicode_lower';

export function registerUnicodeLower(db: Database): void {
  db.function(UNICODE_LOWER, { deterministic: true }, (text: unknown) =>
    typeof text === 'string' ? text.toLowerCase() : text,
  );
}

/**
 * Girder's case-insensitive prefix (a `('field', 'i')` entry of a model's `prefixSearchFields`): the lower-cased
 * value starts with the lower-cased prefix. Compared by `substr`, so no character of the prefix is a wildcard.
 */
export function caseInsensitivePrefixSql(expression: string, prefix: string): { sql: string; args: unknown[] } {
  const lowered = prefix.toLowerCase();
  return { sql: `substr(${UNICODE_LOWER}(${expression}), 1, length(?)) = ?`, args: [lowered, lowered] };
}

/** Girder's case-sensitive prefix (a plain entry of `prefixSearchFields`): the value starts with the prefix as typed. */
export function caseSensitivePrefixSql(expression: string, prefix: string): { sql: string; args: unknown[] } {
  return { sql: `substr(${expression}, 1, length(?)) = ?`, args: [prefix, prefix] };
}

export const toBit = (value: boolean | undefined): number => (value ? 1 : 0);
