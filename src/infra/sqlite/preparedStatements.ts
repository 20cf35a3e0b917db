import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from './openDatabase';

/**
 * Statements prepared once per connection and SQL text. Compiling a statement costs more than running most of the
 * indexed queries of a request (it showed as ~10 % of `POST /folder`'s CPU), so the read-model adapters ask for their
 * statements here instead of calling `db.prepare` per call.
 *
 * Values are bound, never spliced, except a page's row count ({@link sqlLimit}); the texts are one of a bounded set
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
 * A `LIMIT` row count written into the SQL text rather than bound.
 *
 * SQLite plans with the value of a bound `LIMIT ?` (it sizes the result and pushes the limit into the plan), and so
 * marks the statement to be compiled again whenever that parameter is bound, which better-sqlite3 does on every run:
 * a page read through a prepared `LIMIT ?` was parsed and planned anew each time (the projector's read of new events,
 * ~10 µs of every `POST /folder`; a listing page, ~40 µs). With the count in the text, a statement stays compiled for
 * the next page of that size. `OFFSET ?` stays bound: SQLite does not plan with it.
 */
export function sqlLimit(rows: number): string {
  if (!Number.isSafeInteger(rows) || rows < 0) throw new RangeError(`not a row count: ${rows}`);
  return `LIMIT ${rows}`;
}
