import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type {
  ApiKeyDoc,
  ApiKeyQueries,
  ApiKeyWrites,
  Page,
  TokenDoc,
  TokenQueries,
  TokenWrites,
  UserDoc,
  UserFields,
  UserQueries,
  UserSearch,
  UserWrites,
} from '../../../ports/readModel';
import { caseInsensitivePrefixSql, caseSensitivePrefixSql, pagingSql } from './sqlHelpers';
import { AclRows } from './aclRows';
import { addUserSize } from './sizes';
import { ensureGroupTables, withMemberships } from './groupsStore';
import type { Paging } from '../../../domain/paging';

const DDL = `
CREATE TABLE IF NOT EXISTS rm_users (
  id TEXT PRIMARY KEY, login TEXT NOT NULL UNIQUE, email TEXT NOT NULL, lower_name TEXT NOT NULL,
  created TEXT NOT NULL, doc TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS rm_users_email ON rm_users (email);
CREATE TABLE IF NOT EXISTS rm_tokens (
  hash TEXT PRIMARY KEY, user_id TEXT NOT NULL, api_key_id TEXT, expires TEXT NOT NULL, doc TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS rm_tokens_api_key ON rm_tokens (api_key_id);
CREATE TABLE IF NOT EXISTS rm_api_keys (
  id TEXT PRIMARY KEY, user_id TEXT NOT NULL, key TEXT NOT NULL UNIQUE, name TEXT NOT NULL, created TEXT NOT NULL,
  doc TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS rm_api_keys_user ON rm_api_keys (user_id);
`;

const parse = <T>(row: { doc: string } | undefined): T | null => (row ? (JSON.parse(row.doc) as T) : null);

export class SqliteUsers implements UserQueries, UserWrites {
  private readonly acl: AclRows;
  constructor(private readonly db: SqliteDatabase) {
    db.exec(DDL);
    ensureGroupTables(db);
    this.acl = new AclRows(db);
  }
  /** A stored user with its group memberships (kept in the group membership rows, see groupsStore.ts). */
  private user(row: { doc: string } | undefined): UserDoc | null {
    const doc = parse<UserDoc>(row);
    return doc ? withMemberships(this.db, doc) : null;
  }
  async get(id: string) {
    return this.user(prepared(this.db, 'SELECT doc FROM rm_users WHERE id = ?').get(id) as { doc: string } | undefined);
  }
  async getByLogin(login: string) {
    return this.user(
      prepared(this.db, 'SELECT doc FROM rm_users WHERE login = ?').get(login) as { doc: string } | undefined,
    );
  }
  async getByEmail(email: string) {
    return this.user(
      prepared(this.db, 'SELECT doc FROM rm_users WHERE email = ?').get(email.toLowerCase()) as
        { doc: string } | undefined,
    );
  }
  async list({ text, prefix, matchEmail, paging }: UserSearch): Promise<Page<UserDoc>> {
    const { where, args } = !text
      ? { where: '', args: [] }
      : prefix
        ? userPrefixSql(text)
        : userTextSql(text, matchEmail);
    const total = (prepared(this.db, `SELECT COUNT(*) AS n FROM rm_users ${where}`).get(...args) as { n: number }).n;
    const page = pagingSql(
      paging,
      { lastName: 'lower_name', login: 'login', created: 'created', _id: 'id' },
      'rm_users',
    );
    const rows = prepared(this.db, `SELECT doc FROM rm_users ${where}${page.sql}`).all(...args, ...page.args) as {
      doc: string;
    }[];
    return { rows: rows.map((r) => withMemberships(this.db, JSON.parse(r.doc) as UserDoc)), total };
  }
  async count() {
    return (prepared(this.db, 'SELECT COUNT(*) AS n FROM rm_users').get() as { n: number }).n;
  }
  async admins() {
    const rows = prepared(
      this.db,
      "SELECT doc FROM rm_users WHERE json_extract(doc, '$.admin') = 1 ORDER BY id",
    ).all() as {
      doc: string;
    }[];
    return rows.map((r) => withMemberships(this.db, JSON.parse(r.doc) as UserDoc));
  }
  put(doc: UserDoc): void {
    prepared(
      this.db,
      'INSERT OR REPLACE INTO rm_users (id, login, email, lower_name, created, doc) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(
      doc._id,
      doc.login,
      doc.email.toLowerCase(),
      `${doc.lastName} ${doc.firstName}`.toLowerCase(),
      doc.created,
      JSON.stringify(doc),
    );
    this.acl.replace(doc._id, doc.access);
  }
  setPasswordHash(id: string, passwordHash: string): void {
    prepared(this.db, "UPDATE rm_users SET doc = json_set(doc, '$.passwordHash', ?) WHERE id = ?").run(
      passwordHash,
      id,
    );
  }
  update(id: string, fields: UserFields): void {
    const row = prepared(this.db, 'SELECT doc FROM rm_users WHERE id = ?').get(id) as { doc: string } | undefined;
    const doc = parse<UserDoc>(row);
    if (!doc) return;
    const next = { ...doc, ...fields };
    prepared(this.db, 'UPDATE rm_users SET email = ?, lower_name = ?, doc = ? WHERE id = ?').run(
      next.email.toLowerCase(),
      `${next.lastName} ${next.firstName}`.toLowerCase(),
      JSON.stringify(next),
      id,
    );
  }
  delete(id: string): void {
    prepared(this.db, 'DELETE FROM rm_users WHERE id = ?').run(id);
    prepared(this.db, 'DELETE FROM rm_group_members WHERE user_id = ?').run(id);
    this.acl.remove(id);
  }
  /** Adds `delta` to the user's recursive size (files under the user's folders). */
  addSize(id: string, delta: number): void {
    addUserSize(this.db, id, delta);
  }
}

export class SqliteTokens implements TokenQueries, TokenWrites {
  constructor(private readonly db: SqliteDatabase) {
    db.exec(DDL);
  }
  async get(hash: string) {
    return parse<TokenDoc>(
      prepared(this.db, 'SELECT doc FROM rm_tokens WHERE hash = ?').get(hash) as { doc: string } | undefined,
    );
  }
  put(doc: TokenDoc): void {
    // `user_id` is NOT NULL in existing databases: an anonymous session token's empty id matches no user.
    prepared(
      this.db,
      'INSERT OR REPLACE INTO rm_tokens (hash, user_id, api_key_id, expires, doc) VALUES (?, ?, ?, ?, ?)',
    ).run(doc.hash, doc.userId ?? '', doc.apiKeyId ?? null, doc.expires, JSON.stringify(doc));
  }
  delete(hash: string): void {
    prepared(this.db, 'DELETE FROM rm_tokens WHERE hash = ?').run(hash);
  }
  deleteForApiKey(apiKeyId: string): void {
    prepared(this.db, 'DELETE FROM rm_tokens WHERE api_key_id = ?').run(apiKeyId);
  }
  deleteForUser(userId: string): void {
    prepared(this.db, 'DELETE FROM rm_tokens WHERE user_id = ?').run(userId);
  }
}

export class SqliteApiKeys implements ApiKeyQueries, ApiKeyWrites {
  constructor(private readonly db: SqliteDatabase) {
    db.exec(DDL);
  }
  async get(id: string) {
    return parse<ApiKeyDoc>(
      prepared(this.db, 'SELECT doc FROM rm_api_keys WHERE id = ?').get(id) as { doc: string } | undefined,
    );
  }
  async getByKey(key: string) {
    return parse<ApiKeyDoc>(
      prepared(this.db, 'SELECT doc FROM rm_api_keys WHERE key = ?').get(key) as { doc: string } | undefined,
    );
  }
  async listForUser(userId: string, paging: Paging): Promise<Page<ApiKeyDoc>> {
    const total = (
      prepared(this.db, 'SELECT COUNT(*) AS n FROM rm_api_keys WHERE user_id = ?').get(userId) as { n: number }
    ).n;
    const page = pagingSql(paging, { name: 'name', created: 'created', _id: 'id' }, 'rm_api_keys');
    const rows = prepared(this.db, `SELECT doc FROM rm_api_keys WHERE user_id = ?${page.sql}`).all(
      userId,
      ...page.args,
    ) as { doc: string }[];
    return { rows: rows.map((r) => JSON.parse(r.doc) as ApiKeyDoc), total };
  }
  put(doc: ApiKeyDoc): void {
    prepared(
      this.db,
      'INSERT OR REPLACE INTO rm_api_keys (id, user_id, key, name, created, doc) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(doc._id, doc.userId, doc.key, doc.name, doc.created, JSON.stringify(doc));
  }
  delete(id: string): void {
    prepared(this.db, 'DELETE FROM rm_api_keys WHERE id = ?').run(id);
  }
}

/** Girder's User.prefixSearchFields: the login as typed (logins are stored lower-cased), first and last name in any case. */
function userPrefixSql(text: string): { where: string; args: unknown[] } {
  const parts = [
    caseSensitivePrefixSql('login', text),
    caseInsensitivePrefixSql("json_extract(doc, '$.firstName')", text),
    caseInsensitivePrefixSql("json_extract(doc, '$.lastName')", text),
  ];
  return { where: `WHERE ${parts.map((p) => p.sql).join(' OR ')}`, args: parts.flatMap((p) => p.args) };
}

/** The user search's text mode: the login or the name contains the text, or the e-mail for a site administrator. */
function userTextSql(text: string, matchEmail: boolean | undefined): { where: string; args: unknown[] } {
  const like = `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const email = matchEmail ? ` OR email LIKE ? ESCAPE '\\'` : '';
  return {
    where: `WHERE login LIKE ? ESCAPE '\\' OR lower_name LIKE ? ESCAPE '\\'${email}`,
    args: matchEmail ? [like, like, like] : [like, like],
  };
}
