import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from '../../sqlite/openDatabase';

/**
 * One number that moves whenever a user, a token or a group membership row changes, in any process writing this file:
 * triggers on those tables bump it inside the very transaction that changes them, so a reader that sees the number
 * unchanged knows those rows are as it last read them (src/queries/accountCache.ts caches callers on it).
 *
 * It lives outside the `rm_` tables on purpose: emptying the read models for a rebuild must never take it back to a
 * value a cache has already seen (the replay's own writes bump it on).
 */
const WATCHED = ['rm_users', 'rm_tokens', 'rm_group_members'];
const CHANGES = ['INSERT', 'UPDATE', 'DELETE'];

const DDL = `
CREATE TABLE IF NOT EXISTS ops_accounts_version (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
INSERT OR IGNORE INTO ops_accounts_version (id, n) VALUES (1, 0);
${WATCHED.flatMap((table) =>
  CHANGES.map(
    (change) => `CREATE TRIGGER IF NOT EXISTS ${table}_bumps_accounts_version_${change.toLowerCase()}
  AFTER ${change} ON ${table} BEGIN UPDATE ops_accounts_version SET n = n + 1 WHERE id = 1; END;`,
  ),
).join('\n')}
`;

/**
 * Creates the counter and its triggers (the watched tables must exist), and returns its reader: a statement of its
 * own, prepared once in pluck mode, as it runs on every request.
 */
export function accountsVersionReader(db: SqliteDatabase): () => number {
  db.exec(DDL);
  const read = db.prepare('SELECT n FROM ops_accounts_version WHERE id = 1').pluck() as Statement<[], number>;
  return () => read.get() as number;
}
