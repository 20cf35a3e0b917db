import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from './openDatabase';
import type { ReadStatement } from './offLoopReads';

/**
 * Statements prepared once per connection and SQL text. Compiling a statement costs more than running most of the
 * indexed queries of a request (it showed as ~10 % of `POST /folder`'s CPU), so the read-model adapters ask for their
 * statements here instead of calling `db.prepare` per call.
 *
 * Values are bound, never spliced, except a page's row count (sqlLimit.ts); the texts are one of a bounded set
 * of shapes times the page sizes clients ask for, and the cache keeps the {@link MAX_CACHED} most recently used. A
 * statement's modes (safeIntegers, pluck, raw, expand) belong to the caller that set them: each hit resets them to
 * better-sqlite3's defaults, and call sites set the modes they need after asking, as they did after prepare.
 */
const caches = new WeakMap<SqliteDatabase, Map<string, Statement>>();

/** Statements kept per connection: far more than the service's shapes, a bound for clients' varied page sizes. */
export const MAX_CACHED = 1000;

export function prepared<P extends unknown[] | object = unknown[], R = unknown>(
  db: SqliteDatabase,
  sql: string,
): Statement<P, R> {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  let stmt = cache.get(sql);
  if (!stmt) {
    stmt = db.prepare(sql);
    cache.set(sql, stmt);
    // A Map iterates in insertion order: its first key is the least recently used (a hit moves its key last).
    if (cache.size > MAX_CACHED) {
      const [oldest] = cache.keys();
      cache.delete(oldest);
    }
    return stmt as unknown as Statement<P, R>;
  }
  cache.delete(sql);
  cache.set(sql, stmt);
  stmt.safeIntegers(false);
  if (stmt.reader) {
    stmt.pluck(false);
    stmt.raw(false);
    stmt.expand(false);
  }
  return stmt as unknown as Statement<P, R>;
}

/**
 * The rows of a read, through the cache. `raw`: each row an array of its column values, which better-sqlite3 builds at
 * about half the cost of a row object (it sets an object's columns one named property at a time: a 50-row page of six
 * columns, ~140 µs as objects, ~70 µs as arrays).
 */
export function readRows(db: SqliteDatabase, statement: ReadStatement): unknown[] {
  return prepared(db, statement.sql)
    .raw(statement.raw === true)
    .all(...statement.args);
}
