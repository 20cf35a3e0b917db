import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { LeaseRecord, Leases } from '../../../ports/readModel';

/**
 * Leases as rows of `ops_leases` in the service's SQLite file (outside the `rm_` tables, so a rebuild's `reset()`
 * keeps them). Every process that opens the file sees the same rows, and each statement is atomic, so two processes
 * on one DATA_DIR never both hold a lease. Times are this host's clock in milliseconds (every process on one SQLite
 * file runs on the same host).
 */
export class SqliteLeases implements Leases {
  private readonly acquireStmt: Statement<{ name: string; holder: string; expires: number; now: number; replacing: string | null }>;
  private readonly renewStmt: Statement<[number, string, string]>;
  private readonly releaseStmt: Statement<[string, string]>;
  private readonly getStmt: Statement<[string], { holder: string; expires_at: number }>;

  constructor(db: SqliteDatabase, private readonly now: () => number = Date.now) {
    db.exec('CREATE TABLE IF NOT EXISTS ops_leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at INTEGER NOT NULL)');
    // Inserts a free lease; takes over one that is expired, ours, or held by a holder known to be gone.
    this.acquireStmt = db.prepare(
      `INSERT INTO ops_leases (name, holder, expires_at) VALUES (@name, @holder, @expires)
       ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
       WHERE ops_leases.holder = excluded.holder OR ops_leases.expires_at <= @now OR ops_leases.holder = @replacing`,
    );
    this.renewStmt = db.prepare('UPDATE ops_leases SET expires_at = ? WHERE name = ? AND holder = ?');
    this.releaseStmt = db.prepare('DELETE FROM ops_leases WHERE name = ? AND holder = ?');
    this.getStmt = db.prepare('SELECT holder, expires_at FROM ops_leases WHERE name = ?');
  }

  async acquire(name: string, holder: string, ttlMs: number, replacing?: string): Promise<boolean> {
    const now = this.now();
    return this.acquireStmt.run({ name, holder, expires: now + ttlMs, now, replacing: replacing ?? null }).changes === 1;
  }

  async renew(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.renewNow(name, holder, ttlMs);
  }

  /** `renew` as one synchronous statement, for use inside a write transaction (bulk work renews as it commits). */
  renewNow(name: string, holder: string, ttlMs: number): boolean {
    return this.renewStmt.run(this.now() + ttlMs, name, holder).changes === 1;
  }

  async release(name: string, holder: string): Promise<void> {
    this.releaseStmt.run(name, holder);
  }

  async get(name: string): Promise<LeaseRecord | null> {
    const row = this.getStmt.get(name);
    return row ? { holder: row.holder, expiresAt: new Date(row.expires_at) } : null;
  }
}
