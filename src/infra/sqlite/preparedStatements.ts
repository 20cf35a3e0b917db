import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from './openDatabase';

/**
 * Statements prepared once per connection and SQL text. Compiling a statement costs more than running most of the
 * indexed queries of a request (it showed as ~10 % of `POST /folder`'s CPU), so the read-model adapters ask for their
 * statements here instead of calling `db.prepare` per call.
 *
 * Every SQL text of the adapters is one of a bounded set (values are always bound, never spliced), so the cache stays
 * small. A statement's modes (safeIntegers, pluck, raw, expand) belong to the caller that set them: each hit resets
 * them to better-sqlite3's defaults, and call sites set the modes they need after asking, as they did after prepare.
 */
const caches = new WeakMap<SqliteDatabase, Map<string, Statement>>();

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
    return stmt as unknown as Statement<P, R>;
  }
  stmt.safeIntegers(false);
  if (stmt.reader) {
    stmt.pluck(false);
    stmt.raw(false);
    stmt.expand(false);
  }
  return stmt as unknown as Statement<P, R>;
}
