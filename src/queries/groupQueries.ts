import type { Services } from '../services';
import type { GroupDoc, UserDoc } from '../ports/readModel';
import { type Viewer } from '../domain/access';
import { groupAccessLevel } from '../domain/group';

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
  services: Services,
  group: GroupDoc,
  viewer: Viewer | null,
  withRequests = true,
): Promise<Record<string, unknown>> {
  const named = async (id: string) => {
    const user = await services.readModel.users.get(id);
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
