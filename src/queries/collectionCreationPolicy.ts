import type { UserDoc } from '../ports/readModel';
import { SettingKey, settingValue } from '../domain/settings';
import type { LogDeps, ReadModelDeps } from './readDeps';
import { settingsNow } from './settingQueries';

/** The stored collection creation policy (its validator guarantees this shape). */
interface CollectionCreationPolicy {
  open: boolean;
  groups: string[];
  users: string[];
}

async function collectionCreationPolicy(deps: LogDeps): Promise<CollectionCreationPolicy> {
  return settingValue(await settingsNow(deps), SettingKey.COLLECTION_CREATE_POLICY) as CollectionCreationPolicy;
}

/**
 * Girder's `Collection.hasCreatePrivilege`: site administrators always; everyone when the policy is open; else the
 * users it lists and the members of the groups it lists.
 */
export async function mayCreateCollections(deps: LogDeps, user: UserDoc): Promise<boolean> {
  if (user.admin) return true;
  const policy = await collectionCreationPolicy(deps);
  if (policy.open) return true;
  return policy.users.includes(user._id) || policy.groups.some((g) => user.groups.includes(g));
}

/**
 * `GET /system/setting/collection_creation_policy/access`: the policy's users and groups as an access list for the
 * access widget, with their names; ids that no longer resolve are left out.
 */
export async function collectionCreationPolicyAccess(deps: LogDeps & ReadModelDeps<'users' | 'groups'>): Promise<{
  users: { id: string; login: string; name: string }[];
  groups: { id: string; name: string; description: string }[];
}> {
  const policy = await collectionCreationPolicy(deps);
  const users = [];
  for (const id of policy.users) {
    const user = await deps.readModel.users.get(id);
    if (user) users.push({ id, login: user.login, name: `${user.firstName} ${user.lastName}` });
  }
  const groups = [];
  for (const id of policy.groups) {
    const group = await deps.readModel.groups.get(id);
    if (group) groups.push({ id, name: group.name, description: group.description });
  }
  return { users, groups };
}
