import type { CommandRunner } from './commandRunner';
import type { RequestMeta } from './requestMeta';
import { groupDecider, groupStream, type AddAllowed, type GroupCommand } from '../domain/group';
import { claimValue, groupNameStream, releaseValue, reservationDecider } from '../domain/uniqueName';
import { RestError } from '../domain/errors';
import { newId } from '../domain/ids';
import { girderTime } from '../domain/time';

const invalidId = (id: string) => new RestError(`Invalid group id (${id}).`);

/**
 * Creates a group with its creator as administrator. The name (case-insensitively) is claimed on its
 * `groupname-…` reservation stream in the same atomic append, so two groups can never share a name.
 */
export async function createGroup(
  commands: CommandRunner,
  input: { name: string; description: string; public: boolean; creatorId: string },
  meta: RequestMeta,
): Promise<string> {
  const groupId = newId();
  const name = input.name.trim();
  return commands.handleGroup(meta, async (attempt) => {
    const reservation = await attempt.load(groupNameStream(name), reservationDecider);
    const group = attempt.create(groupStream(groupId), groupDecider);
    group.decide({
      type: 'CreateGroup',
      data: { groupId, ...input, created: girderTime(), nameOwner: reservation.state.owner?.id ?? null },
    });
    reservation.decide(claimValue(name, 'group', groupId));
    return { append: [group, reservation], result: groupId };
  });
}

/** Renames, re-describes or re-publishes a group; a rename claims the new name and releases the old one atomically. */
export async function updateGroup(
  commands: CommandRunner,
  groupId: string,
  input: { name?: string; description?: string; public?: boolean; addAllowed?: AddAllowed },
  meta: RequestMeta,
): Promise<void> {
  await commands.handleGroup(meta, async (attempt) => {
    const group = await attempt.load(groupStream(groupId), groupDecider);
    if (group.state.status !== 'active') throw invalidId(groupId);
    const oldName = group.state.name;
    const newName = input.name?.trim();
    const renamed = newName !== undefined && newName.toLowerCase() !== oldName.toLowerCase();
    const reservation = renamed ? await attempt.load(groupNameStream(newName), reservationDecider) : null;
    group.decide({
      type: 'UpdateGroup',
      data: { ...input, updated: girderTime(), nameOwner: reservation?.state.owner?.id ?? null },
    });
    if (!renamed || !reservation) return { append: [group], result: undefined };
    const previous = await attempt.load(groupNameStream(oldName), reservationDecider);
    reservation.decide(claimValue(newName, 'group', groupId));
    previous.decide(releaseValue(groupId));
    return { append: [group, reservation, previous], result: undefined };
  });
}

/** Membership changes (invite, join, promote, demote, remove) on the group's own stream. */
export async function changeMembership(
  commands: CommandRunner,
  groupId: string,
  command: Exclude<GroupCommand, { type: 'CreateGroup' | 'UpdateGroup' | 'DeleteGroup' }>,
  meta: RequestMeta,
): Promise<void> {
  await commands.handle(groupStream(groupId), groupDecider, meta, (group) => {
    if (group.state.status !== 'active') throw invalidId(groupId);
    group.decide(command);
  });
}

/** Deletes a group and frees its name. Its ACL entries on folders and collections then match no one. */
export async function deleteGroup(commands: CommandRunner, groupId: string, meta: RequestMeta): Promise<void> {
  await commands.handleGroup(meta, async (attempt) => {
    const group = await attempt.load(groupStream(groupId), groupDecider);
    if (group.state.status !== 'active') throw invalidId(groupId);
    const name = group.state.name;
    group.decide({ type: 'DeleteGroup', data: {} });
    const reservation = await attempt.load(groupNameStream(name), reservationDecider);
    reservation.decide(releaseValue(groupId));
    return { append: [group, reservation], result: undefined };
  });
}
