import type { Document } from 'mongodb';
import type { GroupDoc, GroupMembership, GroupQueries, GroupWrites, Page, UserDoc } from '../../../ports/readModel';
import type { Paging } from '../../../domain/paging';
import type { ReadSource } from './generations';
import type { OperationLog } from './writes';
import { defined, escapeRegex, hidden, namePrefixFilter, setFields, sortOf, windowOf } from './queryHelpers';

/**
 * Groups (`groups`, Girder's documents without membership) and memberships (`groupMembers`, one document per user
 * and group: `{_id: "<group>:<user>", groupId, userId, kind, level}`). Users read their `groups`/`groupInvites` from
 * the memberships, ordered by their last change (the write stamp `_rev`).
 */
type GroupFields = Omit<GroupDoc, 'members' | 'invites' | 'requests'>;
const GROUP_OUT = hidden('_lowerName');
const USER_OUT = hidden('_lowerName');

export async function withMemberships(source: ReadSource, user: UserDoc): Promise<UserDoc> {
  const rows = await (
    await source.get('groupMembers')
  )
    .find({ userId: user._id, kind: { $ne: 'request' } }, { sort: { _rev: 1 } })
    .toArray();
  return {
    ...user,
    groups: rows.filter((r) => r.kind === 'member').map((r) => r.groupId as string),
    groupInvites: rows
      .filter((r) => r.kind === 'invite')
      .map((r) => ({ groupId: r.groupId as string, level: r.level as number })),
  };
}

export class MongoGroups implements GroupQueries {
  constructor(private readonly source: ReadSource) {}

  private async complete(doc: Document): Promise<GroupDoc> {
    const rows = await (
      await this.source.get('groupMembers')
    )
      .find({ groupId: doc._id }, { sort: { _rev: 1 } })
      .toArray();
    const of = (kind: GroupMembership['kind']) => rows.filter((r) => r.kind === kind);
    return {
      ...(doc as GroupFields),
      members: of('member').map((r) => ({ id: r.userId as string, level: r.level as 0 | 1 | 2 })),
      invites: of('invite').map((r) => ({ id: r.userId as string, level: r.level as 0 | 1 | 2 })),
      requests: of('request').map((r) => r.userId as string),
    };
  }

  async get(id: string) {
    const doc = await (await this.source.get('groups')).findOne({ _id: id }, { projection: GROUP_OUT });
    return doc ? this.complete(doc) : null;
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
    const clauses: Document[] = [];
    if (visibleTo !== null) clauses.push({ $or: [{ public: true }, { _id: { $in: visibleTo } }] });
    if (text !== undefined && exact) clauses.push({ name: text });
    else if (text !== undefined && prefix)
      clauses.push(namePrefixFilter(text)); // Girder: the name, or its lower-cased form.
    else if (text !== undefined) {
      const like = { $regex: escapeRegex(text), $options: 'i' };
      clauses.push({ $or: [{ name: like }, { description: like }] });
    }
    const filter = clauses.length ? { $and: clauses } : {};
    const groups = await this.source.get('groups');
    const [rows, total] = await Promise.all([
      groups
        .find(filter, { projection: GROUP_OUT, sort: sortOf(paging, { lowerName: '_lowerName' }), ...windowOf(paging) })
        .toArray(),
      groups.countDocuments(filter),
    ]);
    return { rows: await Promise.all(rows.map((r) => this.complete(r))), total };
  }

  async listUsers(groupId: string, kind: 'member' | 'invite', paging: Paging): Promise<Page<UserDoc>> {
    const ids = (await (await this.source.get('groupMembers')).find({ groupId, kind }).toArray()).map(
      (r) => r.userId as string,
    );
    const users = await this.source.get('users');
    const filter = { _id: { $in: ids } };
    const [rows, total] = await Promise.all([
      users
        .find(filter, { projection: USER_OUT, sort: sortOf(paging, { lastName: '_lowerName' }), ...windowOf(paging) })
        .toArray(),
      users.countDocuments(filter),
    ]);
    return { rows: await Promise.all(rows.map((u) => withMemberships(this.source, u as unknown as UserDoc))), total };
  }
}

export function groupWrites(log: OperationLog): GroupWrites {
  return {
    put(doc) {
      const stored = { ...defined(doc), _lowerName: doc.name.toLowerCase() };
      log.record(async (w) => w.put('groups', stored));
    },
    update(id, fields) {
      const { _id, ...rest } = fields as Partial<GroupFields>;
      const update = setFields({
        ...rest,
        ...(rest.name !== undefined ? { _lowerName: rest.name.toLowerCase() } : {}),
      });
      if (Object.keys(update).length) log.record(async (w) => w.update('groups', { _id: id }, update));
    },
    delete(id) {
      log.record(async (w) => {
        w.remove('groups', { _id: id });
        w.remove('groupMembers', { groupId: id }, true);
      });
    },
    setMembership(m) {
      const stored = { _id: `${m.groupId}:${m.userId}`, ...m };
      log.record(async (w) => w.put('groupMembers', stored));
    },
    removeMembership(groupId, userId) {
      log.record(async (w) => w.remove('groupMembers', { _id: `${groupId}:${userId}` }));
    },
  };
}
