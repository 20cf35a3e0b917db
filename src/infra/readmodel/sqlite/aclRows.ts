import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { AccessList } from '../../../domain/access';

export const ACL_DDL = `
CREATE TABLE IF NOT EXISTS rm_acl (
  resource_id TEXT NOT NULL,
  principal_type TEXT NOT NULL,
  principal_id TEXT NOT NULL,
  level INTEGER NOT NULL,
  PRIMARY KEY (resource_id, principal_type, principal_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rm_acl_principal ON rm_acl (principal_id, level, resource_id);
`;

/** Mirrors an ACL into rm_acl rows so that permission filters are indexed joins, not JSON scans. */
export class AclRows {
  private readonly deleteRows;
  private readonly insertRow;
  constructor(db: SqliteDatabase) {
    db.exec(ACL_DDL);
    this.deleteRows = db.prepare('DELETE FROM rm_acl WHERE resource_id = ?');
    this.insertRow = db.prepare(
      'INSERT OR REPLACE INTO rm_acl (resource_id, principal_type, principal_id, level) VALUES (?, ?, ?, ?)',
    );
  }
  replace(resourceId: string, access: AccessList): void {
    this.deleteRows.run(resourceId);
    for (const entry of access.users) this.insertRow.run(resourceId, 'user', entry.id, entry.level);
    for (const entry of access.groups) this.insertRow.run(resourceId, 'group', entry.id, entry.level);
  }
  remove(resourceId: string): void {
    this.deleteRows.run(resourceId);
  }
}
