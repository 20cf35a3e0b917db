import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { GroupDoc, GroupMembership, GroupQueries, GroupWrites, Page, UserDoc } from '../../../ports/readModel';
import type { Paging } from '../../../domain/paging';
import { UNICODE_LOWER, namePrefixSql, pagingSql } from './sqlHelpers';

const DDL = `
CREATE TABLE IF NOT EXISTS rm_groups (
  id TEXT PRIMARY KEY, name TEXT NOT NULL, lower_name TEXT NOT NULL, public INTEGER NOT NULL,
  created TEXT NOT NULL, updated TEXT NOT NULL, doc TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS rm_groups_lower_name ON rm_groups (lower_name);
CREATE TABLE IF NOT EXISTS rm_group_members (
  group_id TEXT NOT NULL, user_id TEXT NOT NULL, kind TEXT NOT NULL, level INTEGER NOT NULL, seq INTEGER NOT NULL,
  PRIMARY KEY (group_id, user_id));
CREATE INDEX IF NOT EXISTS rm_group_members_user ON rm_group_members (user_id);
`;

type GroupFields = Omit<GroupDoc, 'members' | 'invites' | 'requests'>;
type Level = 0 | 1 | 2;
const COLUMNS = { name: 'name', lowerName: 'lower_name', created: 'created', updated: 'updated', _id: 'id' };
const USER_COLUMNS = { lastName: 'lower_name', login: 'login', created: 'created', _id: 'id' };

/** Creates the membership table (users read it to fill `groups`/`groupInvites`). */
export function ensureGroupTables(db: SqliteDatabase): void {
  db.exec(DDL);
}

/** A user document with its `groups` and `groupInvites` (Girder's `{groupId, level}`) from the membership rows. */
export function withMemberships(db: SqliteDatabase, user: UserDoc): UserDoc {
  const rows = prepared(
    db,
    "SELECT group_id, kind, level FROM rm_group_members WHERE user_id = ? AND kind != 'request' ORDER BY seq",
  ).all(user._id) as { group_id: string; kind: string; level: Level }[];
  return {
    ...user,
    groups: rows.filter((r) => r.kind === 'member').map((r) => r.group_id),
    groupInvites: rows.filter((r) => r.kind === 'invite').map((r) => ({ groupId: r.group_id, level: r.level })),
  };
}

export class SqliteGroups implements GroupQueries, GroupWrites {
  constructor(private readonly db: SqliteDatabase) {
    ensureGroupTables(db);
  }

  private complete(doc: GroupFields): GroupDoc {
    const rows = prepared(
      this.db,
      'SELECT user_id, kind, level FROM rm_group_members WHERE group_id = ? ORDER BY seq',
    ).all(doc._id) as { user_id: string; kind: GroupMembership['kind']; level: Level }[];
    const of = (kind: GroupMembership['kind']) => rows.filter((r) => r.kind === kind);
    return {
      ...doc,
      members: of('member').map((r) => ({ id: r.user_id, level: r.level })),
      invites: of('invite').map((r) => ({ id: r.user_id, level: r.level })),
      requests: of('request').map((r) => r.user_id),
    };
  }

  async get(id: string) {
    const row = prepared(this.db, 'SELECT doc FROM rm_groups WHERE id = ?').get(id) as { doc: string } | undefined;
    return row ? this.complete(JSON.parse(row.doc) as GroupFields) : null;
  }

  async list({
    text,
    exact,
    prefix,
    visibleTo,
    paging,
  }: {
    text?: string;
    exact?: boolean;
    prefix?: boolean;
    visibleTo: string[] | null;
    paging: Paging;
  }): Promise<Page<GroupDoc>> {
    const clauses: string[] = [];
    const args: unknown[] = [];
    if (visibleTo !== null) {
      clauses.push('(g.public = 1 OR g.id IN (SELECT value FROM json_each(?)))');
      args.push(JSON.stringify(visibleTo));
    }
    if (text !== undefined && exact) {
      clauses.push('g.name = ?');
      args.push(text);
    } else if (text !== undefined && prefix) {
      // Girder's Group.prefixSearchFields: the name as typed, or its lower-cased form.
      const named = namePrefixSql('g', text);
      clauses.push(named.sql);
      args.push(...named.args);
    } else if (text !== undefined) {
      const like = `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      clauses.push(
        `(g.lower_name LIKE ? ESCAPE '\\' OR ${UNICODE_LOWER}(json_extract(g.doc, '$.description')) LIKE ? ESCAPE '\\')`,
      );
      args.push(like, like);
    }
    const where = clauses.length ? `WHERE ${clauses.join(' AND ')}` : '';
    const total = (prepared(this.db, `SELECT COUNT(*) AS n FROM rm_groups g ${where}`).get(...args) as { n: number }).n;
    const page = pagingSql(paging, COLUMNS, 'g');
    const rows = prepared(this.db, `SELECT g.doc FROM rm_groups g ${where}${page.sql}`).all(...args, ...page.args) as {
      doc: string;
    }[];
    return { rows: rows.map((r) => this.complete(JSON.parse(r.doc) as GroupFields)), total };
  }

  async listUsers(groupId: string, kind: 'member' | 'invite', paging: Paging): Promise<Page<UserDoc>> {
    const from = 'FROM rm_users u JOIN rm_group_members m ON m.user_id = u.id WHERE m.group_id = ? AND m.kind = ?';
    const total = (prepared(this.db, `SELECT COUNT(*) AS n ${from}`).get(groupId, kind) as { n: number }).n;
    const page = pagingSql(paging, USER_COLUMNS, 'u');
    const rows = prepared(this.db, `SELECT u.doc ${from}${page.sql}`).all(groupId, kind, ...page.args) as {
      doc: string;
    }[];
    return { rows: rows.map((r) => withMemberships(this.db, JSON.parse(r.doc) as UserDoc)), total };
  }

  put(doc: GroupFields): void {
    prepared(
      this.db,
      `INSERT OR REPLACE INTO rm_groups (id, name, lower_name, public, created, updated, doc)
        VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ).run(doc._id, doc.name, doc.name.toLowerCase(), doc.public ? 1 : 0, doc.created, doc.updated, JSON.stringify(doc));
  }

  update(id: string, fields: Partial<Omit<GroupFields, '_id'>>): void {
    const row = prepared(this.db, 'SELECT doc FROM rm_groups WHERE id = ?').get(id) as { doc: string } | undefined;
    if (!row) return;
    this.put({ ...(JSON.parse(row.doc) as GroupFields), ...fields, _id: id });
  }

  delete(id: string): void {
    prepared(this.db, 'DELETE FROM rm_groups WHERE id = ?').run(id);
    prepared(this.db, 'DELETE FROM rm_group_members WHERE group_id = ?').run(id);
  }

  setMembership(m: GroupMembership): void {
    // `seq` orders a user's groups and invitations by their last change (the MongoDB adapter orders by write stamp).
    prepared(
      this.db,
      `INSERT OR REPLACE INTO rm_group_members (group_id, user_id, kind, level, seq)
         VALUES (@groupId, @userId, @kind, @level, (SELECT COALESCE(MAX(seq), 0) + 1 FROM rm_group_members))`,
    ).run(m);
  }

  removeMembership(groupId: string, userId: string): void {
    prepared(this.db, 'DELETE FROM rm_group_members WHERE group_id = ? AND user_id = ?').run(groupId, userId);
  }
}
