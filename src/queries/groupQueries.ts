import type { ReadModelDeps } from './readDeps';
import type { GroupDoc, UserDoc } from '../ports/readModel';
import type { Paging } from '../domain/paging';
import { RestError } from '../domain/errors';
import { userView } from './views';
import { type Viewer } from '../domain/access';
import { groupAccessLevel } from '../domain/group';

/** What these reads touch (src/queries/readDeps.ts). */
type Deps = ReadModelDeps<'users' | 'groups'>;

/** Girder's group filter: the READ fields, `_modelType` and the caller's `_accessLevel`. */
export function groupView(group: GroupDoc, viewer: Viewer | null): Record<string, unknown> {
  return {
    _id: group._id,
    _modelType: 'group',
    _accessLevel: groupAccessLevel(group, viewer),
    name: group.name,
    description: group.description,
    public: group.public,
    created: group.created,
    updated: group.updated,
    addAllowed: group.addAllowed,
  };
}

/**
 * The group with `access` (Girder's getFullAccessList: members with their level, login and name) and, unless left
 * out, `requests` (users asking to join: id, login, name).
 */
export async function groupWithAccess(
  deps: Deps,
  group: GroupDoc,
  viewer: Viewer | null,
  withRequests = true,
): Promise<Record<string, unknown>> {
  const named = async (id: string) => {
    const user = await deps.readModel.users.get(id);
    return user ? { id, login: user.login, name: `${user.firstName} ${user.lastName}` } : null;
  };
  const users = [];
  for (const member of group.members) {
    const user = await named(member.id);
    if (user) users.push({ ...user, level: member.level, flags: [] });
  }
  const view: Record<string, unknown> = { ...groupView(group, viewer), access: { users, groups: [] } };
  if (withRequests) view.requests = (await Promise.all(group.requests.map(named))).filter((r) => r !== null);
  return view;
}

/** Group ids whose non-public groups the viewer may list: their groups and invitations (null: all, for admins). */
export function visibleGroupIds(user: UserDoc | null): string[] | null {
  if (!user) return [];
  if (user.admin) return null;
  return [...user.groups, ...user.groupInvites.map((invite) => invite.groupId)];
}

/** A group by id (null when there is none). */
export async function groupById(deps: Deps, id: string): Promise<GroupDoc | null> {
  return deps.readModel.groups.get(id);
}

/** A group re-read after a write (a concurrent delete may have removed it since). */
export async function currentGroup(deps: Deps, id: string): Promise<GroupDoc> {
  const group = await deps.readModel.groups.get(id);
  if (!group) throw new RestError(`Invalid group id (${id}).`);
  return group;
}

/** `GET /group`: one page of the groups `user` may list (public ones, theirs, their invitations; all for admins). */
export async function listGroups(
  deps: Deps,
  user: UserDoc | null,
  viewer: Viewer | null,
  input: { text?: string; exact: boolean; paging: Paging },
): Promise<{ rows: Record<string, unknown>[]; total: number }> {
  const page = await deps.readModel.groups.list({
    text: input.text,
    exact: input.exact,
    visibleTo: visibleGroupIds(user),
    paging: input.paging,
  });
  return { rows: page.rows.map((g) => groupView(g, viewer)), total: page.total };
}

/** `GET /group/:id/member` and `GET /group/:id/invitation`: one page of the group's users of one kind. */
export async function groupUsers(
  deps: Deps,
  groupId: string,
  kind: 'invite' | 'member',
  viewer: Viewer | null,
  paging: Paging,
): Promise<{ rows: Record<string, unknown>[]; total: number }> {
  const page = await deps.readModel.groups.listUsers(groupId, kind, paging);
  return { rows: page.rows.map((u) => userView(u, viewer)), total: page.total };
}
