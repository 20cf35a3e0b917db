import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import { FencedOffError, type LeaseFence, type LeaseRecord, type Leases } from '../../../ports/readModel';

/**
 * Leases as rows of `ops_leases` in the service's SQLite file (outside the `rm_` tables, so a rebuild's `reset()`
 * keeps them). Every process that opens the file sees the same rows, and each statement is atomic, so two processes
 * on one DATA_DIR never both hold a lease. Times are this host's clock in milliseconds (every process on one SQLite
 * file runs on the same host).
 *
 * A released lease keeps its row with an empty holder, so that its epoch (the fencing token) never goes back.
 */
export class SqliteLeases implements Leases {
  private readonly acquireStmt: Statement<{
    name: string;
    holder: string;
    expires: number;
    now: number;
    replacing: string | null;
  }>;
  private readonly renewStmt: Statement<[number, string, string]>;
  private readonly releaseStmt: Statement<[string, string]>;
  private readonly getStmt: Statement<[string], { holder: string; expires_at: number; epoch: number }>;
  private readonly epochStmt: Statement<[string], { epoch: number }>;

  constructor(
    db: SqliteDatabase,
    private readonly now: () => number = Date.now,
  ) {
    db.exec(
      'CREATE TABLE IF NOT EXISTS ops_leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at INTEGER NOT NULL)',
    );
    // Files written before leases had epochs: every lease starts at epoch 0.
    const columns = db.prepare('SELECT name FROM pragma_table_info(?)').all('ops_leases') as { name: string }[];
    if (!columns.some((column) => column.name === 'epoch'))
      db.exec('ALTER TABLE ops_leases ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0');
    // Inserts a free lease; takes over one that is expired, ours, released, or held by a holder known to be gone.
    // The epoch moves unless the taker already held the lease unexpired (asking again is not a takeover).
    this.acquireStmt = db.prepare(
      `INSERT INTO ops_leases (name, holder, expires_at, epoch) VALUES (@name, @holder, @expires, 1)
       ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at,
         epoch = CASE WHEN ops_leases.holder = excluded.holder AND ops_leases.expires_at > @now THEN ops_leases.epoch
                      ELSE ops_leases.epoch + 1 END
       WHERE ops_leases.holder = excluded.holder OR ops_leases.expires_at <= @now OR ops_leases.holder = @replacing`,
    );
    this.renewStmt = db.prepare("UPDATE ops_leases SET expires_at = ? WHERE name = ? AND holder = ? AND holder != ''");
    this.releaseStmt = db.prepare("UPDATE ops_leases SET holder = '', expires_at = 0 WHERE name = ? AND holder = ?");
    this.getStmt = db.prepare("SELECT holder, expires_at, epoch FROM ops_leases WHERE name = ? AND holder != ''");
    this.epochStmt = db.prepare('SELECT epoch FROM ops_leases WHERE name = ?');
  }

  async acquire(name: string, holder: string, ttlMs: number, replacing?: string): Promise<boolean> {
    if (holder === '') throw new Error('A lease holder needs a name.');
    const now = this.now();
    return (
      this.acquireStmt.run({ name, holder, expires: now + ttlMs, now, replacing: replacing ?? null }).changes === 1
    );
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
    return row ? { holder: row.holder, expiresAt: new Date(row.expires_at), epoch: row.epoch } : null;
  }

  /**
   * Throws {@link FencedOffError} unless the lease is still at the fence's epoch. Called inside a projection
   * transaction (sqliteReadModel.ts): SQLite serialises writers, so a takeover commits either before this check (and
   * the write is refused) or after the whole transaction.
   */
  checkFence(fence: LeaseFence): void {
    const epoch = this.epochStmt.get(fence.lease)?.epoch ?? null;
    if (epoch !== fence.epoch) throw new FencedOffError(fence, epoch);
  }
}
