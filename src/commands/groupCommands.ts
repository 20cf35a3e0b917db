import type { StreamAppend } from '../ports/eventStore';
import type { CommandRunner } from './commandRunner';
import { toNewEvents } from './commandRunner';
import type { RequestMeta } from './requestMeta';
import { groupDecider, groupStream, type AddAllowed, type GroupCommand } from '../domain/group';
import { claim, groupNameStream, release, reservationDecider } from '../domain/uniqueName';
import { decideOn } from '../domain/decider';
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
  return commands.run(async () => {
    const reservation = await commands.load(groupNameStream(name), reservationDecider);
    const { events } = decideOn(groupDecider, groupDecider.initialState(), {
      type: 'CreateGroup',
      data: { groupId, ...input, created: girderTime(), nameOwner: reservation.state.owner?.id ?? null },
    });
    return {
      appends: [
        { streamId: groupStream(groupId), expectedState: 'no_stream', events: toNewEvents(events, meta) },
        {
          streamId: groupNameStream(name),
          expectedState: reservation.expected,
          events: toNewEvents([claim(name, 'group', groupId)], meta),
        },
      ],
      result: groupId,
    };
  });
}

/** Renames, re-describes or re-publishes a group; a rename claims the new name and releases the old one atomically. */
export async function updateGroup(
  commands: CommandRunner,
  groupId: string,
  input: { name?: string; description?: string; public?: boolean; addAllowed?: AddAllowed },
  meta: RequestMeta,
): Promise<void> {
  await commands.run(async () => {
    const stream = await commands.load(groupStream(groupId), groupDecider);
    if (stream.state.status !== 'active') throw invalidId(groupId);
    const oldName = stream.state.name;
    const newName = input.name?.trim();
    const renamed = newName !== undefined && newName.toLowerCase() !== oldName.toLowerCase();
    const reservation = renamed ? await commands.load(groupNameStream(newName), reservationDecider) : null;
    const { events } = decideOn(groupDecider, stream.state, {
      type: 'UpdateGroup',
      data: { ...input, updated: girderTime(), nameOwner: reservation?.state.owner?.id ?? null },
    });
    const appends: StreamAppend[] = [
      { streamId: groupStream(groupId), expectedState: stream.expected, events: toNewEvents(events, meta) },
    ];
    if (renamed && reservation) {
      const previous = await commands.load(groupNameStream(oldName), reservationDecider);
      appends.push(
        {
          streamId: groupNameStream(newName),
          expectedState: reservation.expected,
          events: toNewEvents([claim(newName, 'group', groupId)], meta),
        },
        {
          streamId: groupNameStream(oldName),
          expectedState: previous.expected,
          events: toNewEvents([release(groupId)], meta),
        },
      );
    }
    return { appends, result: undefined };
  });
}

/** Membership changes (invite, join, promote, demote, remove) on the group's own stream. */
export async function changeMembership(
  commands: CommandRunner,
  groupId: string,
  command: Exclude<GroupCommand, { type: 'CreateGroup' | 'UpdateGroup' | 'DeleteGroup' }>,
  meta: RequestMeta,
): Promise<void> {
  await commands.run(async () => {
    const stream = await commands.load(groupStream(groupId), groupDecider);
    if (stream.state.status !== 'active') throw invalidId(groupId);
    const { events } = decideOn(groupDecider, stream.state, command);
    return {
      appends: [{ streamId: groupStream(groupId), expectedState: stream.expected, events: toNewEvents(events, meta) }],
      result: undefined,
    };
  });
}

/** Deletes a group and frees its name. Its ACL entries on folders and collections then match no one. */
export async function deleteGroup(commands: CommandRunner, groupId: string, meta: RequestMeta): Promise<void> {
  await commands.run(async () => {
    const stream = await commands.load(groupStream(groupId), groupDecider);
    if (stream.state.status !== 'active') throw invalidId(groupId);
    const name = stream.state.name;
    const { events } = decideOn(groupDecider, stream.state, { type: 'DeleteGroup', data: {} });
    const reservation = await commands.load(groupNameStream(name), reservationDecider);
    return {
      appends: [
        { streamId: groupStream(groupId), expectedState: stream.expected, events: toNewEvents(events, meta) },
        {
          streamId: groupNameStream(name),
          expectedState: reservation.expected,
          events: toNewEvents([release(groupId)], meta),
        },
      ],
      result: undefined,
    };
  });
}
