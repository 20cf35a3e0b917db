import type { Document } from 'mongodb';
import type {
  ApiKeyDoc,
  ApiKeyQueries,
  ApiKeyWrites,
  Page,
  TokenDoc,
  TokenQueries,
  TokenWrites,
  UserDoc,
  UserQueries,
  UserSearch,
  UserWrites,
} from '../../../ports/readModel';
import type { ReadSource } from './generations';
import type { OperationLog } from './writes';
import { defined, escapeRegex, hidden, sortOf, windowOf } from './queryHelpers';
import { withMemberships } from './groupsStore';
import type { Paging } from '../../../domain/paging';

/**
 * Users, tokens and API keys. Users carry `_lowerName` ("last first", lower-cased) for the user list's sort and
 * search, as the SQLite adapter's `lower_name` column; tokens are keyed by their hash (`_id` = `hash`).
 */
const USER_OUT = hidden('_lowerName');
const TOKEN_OUT = hidden('_id');
const KEY_OUT = hidden();

export class MongoUsers implements UserQueries {
  constructor(private readonly source: ReadSource) {}

  /** A stored user with its group memberships (kept as membership documents, see groupsStore.ts). */
  private async one(filter: Document): Promise<UserDoc | null> {
    const user = (await (await this.source.get('users')).findOne(filter, { projection: USER_OUT })) as UserDoc | null;
    return user ? withMemberships(this.source, user) : null;
  }
  get(id: string) {
    return this.one({ _id: id });
  }
  getByLogin(login: string) {
    return this.one({ login });
  }
  getByEmail(email: string) {
    return this.one({ email: email.toLowerCase() });
  }
  async list({ text, prefix, matchEmail, paging }: UserSearch): Promise<Page<UserDoc>> {
    const users = await this.source.get('users');
    const like = text ? { $regex: escapeRegex(text.toLowerCase()), $options: 'i' } : null;
    const filter =
      !text || !like
        ? {}
        : prefix
          ? userPrefixFilter(text)
          : { $or: [{ login: like }, { _lowerName: like }, ...(matchEmail ? [{ email: like }] : [])] };
    const [rows, total] = await Promise.all([
      users
        .find(filter, { projection: USER_OUT, sort: sortOf(paging, { lastName: '_lowerName' }), ...windowOf(paging) })
        .toArray(),
      users.countDocuments(filter),
    ]);
    return {
      rows: await Promise.all((rows as unknown as UserDoc[]).map((u) => withMemberships(this.source, u))),
      total,
    };
  }
  async count() {
    return (await this.source.get('users')).countDocuments({});
  }
  async admins() {
    const rows = await (
      await this.source.get('users')
    )
      .find({ admin: true }, { projection: USER_OUT, sort: { _id: 1 } })
      .toArray();
    return Promise.all((rows as unknown as UserDoc[]).map((u) => withMemberships(this.source, u)));
  }
}

export function userWrites(log: OperationLog): UserWrites {
  return {
    put(doc) {
      const stored = { ...defined(doc), _lowerName: `${doc.lastName} ${doc.firstName}`.toLowerCase() };
      log.record(async (w) => w.put('users', stored));
    },
    setPasswordHash(id, passwordHash) {
      log.record(async (w) => w.update('users', { _id: id }, { $set: { passwordHash } }));
    },
    addSize(id, delta) {
      log.record(async (w) => w.increment('users', id, 'size', delta));
    },
    update(id, fields) {
      // A profile change always carries both names (UserProfileUpdated), which the list's sort key is made of.
      const lowerName =
        fields.firstName !== undefined && fields.lastName !== undefined
          ? { _lowerName: `${fields.lastName} ${fields.firstName}`.toLowerCase() }
          : {};
      const set = {
        ...fields,
        ...(fields.email !== undefined ? { email: fields.email.toLowerCase() } : {}),
        ...lowerName,
      };
      log.record(async (w) => w.update('users', { _id: id }, { $set: set }));
    },
    delete(id) {
      log.record(async (w) => {
        w.remove('users', { _id: id });
        w.remove('groupMembers', { userId: id }, true);
      });
    },
  };
}

export class MongoTokens implements TokenQueries {
  constructor(private readonly source: ReadSource) {}
  async get(hash: string) {
    return (await (
      await this.source.get('tokens')
    ).findOne({ _id: hash }, { projection: TOKEN_OUT })) as TokenDoc | null;
  }
}

export function tokenWrites(log: OperationLog): TokenWrites {
  return {
    put(doc) {
      const stored = { _id: doc.hash, ...defined(doc) };
      log.record(async (w) => w.put('tokens', stored));
    },
    delete(hash) {
      log.record(async (w) => w.remove('tokens', { _id: hash }));
    },
    deleteForApiKey(apiKeyId) {
      log.record(async (w) => w.remove('tokens', { apiKeyId }, true));
    },
    deleteForUser(userId) {
      log.record(async (w) => w.remove('tokens', { userId }, true));
    },
  };
}

export class MongoApiKeys implements ApiKeyQueries {
  constructor(private readonly source: ReadSource) {}
  async get(id: string) {
    return (await (await this.source.get('apiKeys')).findOne({ _id: id }, { projection: KEY_OUT })) as ApiKeyDoc | null;
  }
  async getByKey(key: string) {
    return (await (await this.source.get('apiKeys')).findOne({ key }, { projection: KEY_OUT })) as ApiKeyDoc | null;
  }
  async listForUser(userId: string, paging: Paging): Promise<Page<ApiKeyDoc>> {
    const keys = await this.source.get('apiKeys');
    const [rows, total] = await Promise.all([
      keys.find({ userId }, { projection: KEY_OUT, sort: sortOf(paging), ...windowOf(paging) }).toArray(),
      keys.countDocuments({ userId }),
    ]);
    return { rows: rows as unknown as ApiKeyDoc[], total };
  }
}

export function apiKeyWrites(log: OperationLog): ApiKeyWrites {
  return {
    put(doc) {
      const stored = defined(doc);
      log.record(async (w) => w.put('apiKeys', stored));
    },
    delete(id) {
      log.record(async (w) => w.remove('apiKeys', { _id: id }));
    },
  };
}

/** Girder's User.prefixSearchFields: the login as typed (logins are stored lower-cased), first and last name in any case. */
function userPrefixFilter(text: string) {
  const start = `^${escapeRegex(text)}`;
  const anyCase = { $regex: start, $options: 'i' };
  return { $or: [{ login: { $regex: start } }, { firstName: anyCase }, { lastName: anyCase }] };
}
