import type { ReadModelDeps } from './readDeps';
import type { AccessList } from '../domain/access';

/** What these reads touch (src/queries/readDeps.ts). */
type Deps = ReadModelDeps<'users' | 'groups'>;

export interface FullAccessList {
  users: { id: string; level: number; flags: string[]; login: string; name: string }[];
  groups: { id: string; level: number; flags: string[]; name: string; description: string }[];
}

/**
 * Girder's getFullAccessList (`GET /folder/:id/access`, `GET /collection/:id/access`): user entries gain `login` and
 * `name` (`<first> <last>`), group entries the group's `name` and `description`; entries whose user or group no
 * longer exists are left out.
 */
export async function fullAccessList(deps: Deps, access: AccessList): Promise<FullAccessList> {
  const users: FullAccessList['users'] = [];
  for (const entry of access.users) {
    const user = await deps.readModel.users.get(entry.id);
    if (user)
      users.push({
        id: entry.id,
        level: entry.level,
        flags: entry.flags,
        login: user.login,
        name: `${user.firstName} ${user.lastName}`,
      });
  }
  const groups: FullAccessList['groups'] = [];
  for (const entry of access.groups) {
    const group = await deps.readModel.groups.get(entry.id);
    if (group)
      groups.push({
        id: entry.id,
        level: entry.level,
        flags: entry.flags,
        name: group.name,
        description: group.description,
      });
  }
  return { users, groups };
}
