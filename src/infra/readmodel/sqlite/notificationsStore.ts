import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { NotificationOwner, NotificationRecord, NotificationStore } from '../../../ports/notificationStore';

/*
 * Operational state, not a read model: the table is prefixed `ops_` (not `rm_`) so that read-model reset, rebuild
 * and dumps, which must be reproducible from the event log alone, never touch it.
 */
const DDL = `
CREATE TABLE IF NOT EXISTS ops_notifications (
  id TEXT PRIMARY KEY, user_id TEXT, token_id TEXT, updated_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL,
  doc TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS ops_notifications_user ON ops_notifications (user_id, updated_ms);
CREATE INDEX IF NOT EXISTS ops_notifications_token ON ops_notifications (token_id, updated_ms);
CREATE INDEX IF NOT EXISTS ops_notifications_expires ON ops_notifications (expires_ms);
CREATE INDEX IF NOT EXISTS ops_notifications_updated ON ops_notifications (updated_ms);
`;

function epochMs(field: string, value: string): number {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new Error(`notification ${field} is not a date: ${value}`);
  return ms;
}

/** Notification records in the embedded SQLite file, indexed by owner and `updated`, swept on `expires`. */
export class SqliteNotificationStore implements NotificationStore {
  constructor(private readonly db: SqliteDatabase) {
    db.exec(DDL);
  }

  async save(record: NotificationRecord): Promise<void> {
    prepared(
      this.db,
      `INSERT INTO ops_notifications (id, user_id, token_id, updated_ms, expires_ms, doc) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET user_id = excluded.user_id, token_id = excluded.token_id,
           updated_ms = excluded.updated_ms, expires_ms = excluded.expires_ms, doc = excluded.doc`,
    ).run(
      record._id,
      record.userId ?? null,
      record.userId === undefined ? (record.tokenId ?? null) : null,
      epochMs('updated', record.updated),
      epochMs('expires', record.expires),
      JSON.stringify(record),
    );
  }

  async listFor(owner: NotificationOwner, sinceMs: number | null, nowMs: number): Promise<NotificationRecord[]> {
    const [column, key] = owner.userId ? ['user_id', owner.userId] : ['token_id', owner.tokenId];
    if (!key) return [];
    const since = sinceMs === null ? '' : ' AND updated_ms > ?';
    const args: unknown[] = [key, nowMs, ...(sinceMs === null ? [] : [sinceMs])];
    const rows = prepared(
      this.db,
      `SELECT doc FROM ops_notifications WHERE ${column} = ? AND expires_ms > ?${since} ORDER BY updated_ms, id`,
    ).all(...args) as { doc: string }[];
    return rows.map((row) => JSON.parse(row.doc) as NotificationRecord);
  }

  async changedSince(sinceMs: number, nowMs: number): Promise<NotificationRecord[]> {
    const rows = prepared(
      this.db,
      'SELECT doc FROM ops_notifications WHERE updated_ms > ? AND expires_ms > ? ORDER BY updated_ms, id',
    ).all(sinceMs, nowMs) as { doc: string }[];
    return rows.map((row) => JSON.parse(row.doc) as NotificationRecord);
  }

  async deleteExpired(nowMs: number): Promise<number> {
    return prepared(this.db, 'DELETE FROM ops_notifications WHERE expires_ms <= ?').run(nowMs).changes;
  }
}
