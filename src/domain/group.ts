import { z } from 'zod';
import type { Decider, DomainEvent } from './decider';
import type { Level, Viewer } from './access';
import { AccessDeniedError, RestError, ValidationError } from './errors';
import { hasOwnKey, ownValue } from './ownMap';

/**
 * Groups (Girder's Group model), one `group-<id>` stream each. The stream owns the whole membership: members with
 * their level in the group (READ member, WRITE moderator, ADMIN administrator), outstanding invitations (with the
 * level the user gets on accepting) and requests to join. The read model projects membership into the user
 * documents' `groups`/`groupInvites`, which is what access checks on folders and collections resolve group entries
 * with.
 */
export const groupStream = (id: string): string => `group-${id}`;

const levelSchema = z.union([z.literal(0), z.literal(1), z.literal(2)]);
export const ADD_ALLOWED = ['default', 'no', 'yesmod', 'yesadmin'] as const;
export type AddAllowed = (typeof ADD_ALLOWED)[number];

// ---- events: the zod schemas are the published contract for subscribers ----

const GroupCreatedSchema = z.object({
  groupId: z.string(),
  name: z.string(),
  description: z.string(),
  public: z.boolean(),
  creatorId: z.string(),
  created: z.string(),
});
/** `PUT /group/:id`: the fields given are replaced; `updated` always advances. */
const GroupUpdatedSchema = z.object({
  groupId: z.string(),
  name: z.string().optional(),
  description: z.string().optional(),
  public: z.boolean().optional(),
  addAllowed: z.enum(ADD_ALLOWED).optional(),
  updated: z.string(),
});
/** The user is a member at `level` (added, accepted an invitation, request granted, or level changed). */
const GroupMemberSetSchema = z.object({ groupId: z.string(), userId: z.string(), level: levelSchema });
/** The user is invited (replacing an earlier invitation); on joining they become a member at `level`. */
const GroupUserInvitedSchema = z.object({ groupId: z.string(), userId: z.string(), level: levelSchema });
const GroupJoinRequestedSchema = z.object({ groupId: z.string(), userId: z.string() });
/** The user's membership, invitation and request, whichever existed, are gone. */
const GroupUserRemovedSchema = z.object({ groupId: z.string(), userId: z.string() });
const GroupDeletedSchema = z.object({ groupId: z.string(), name: z.string() });
/** `PUT /resource/:id/timestamp` (site administrators): the created and/or updated time replaced, as given. */
const GroupTimestampsSetSchema = z.object({
  groupId: z.string(),
  created: z.string().optional(),
  updated: z.string().optional(),
});

type GroupCreatedData = z.infer<typeof GroupCreatedSchema>;
type GroupUpdatedData = z.infer<typeof GroupUpdatedSchema>;
type GroupMemberSetData = z.infer<typeof GroupMemberSetSchema>;
type GroupUserInvitedData = z.infer<typeof GroupUserInvitedSchema>;

export type GroupEvent =
  | DomainEvent<'GroupCreated', GroupCreatedData>
  | DomainEvent<'GroupUpdated', GroupUpdatedData>
  | DomainEvent<'GroupMemberSet', GroupMemberSetData>
  | DomainEvent<'GroupUserInvited', GroupUserInvitedData>
  | DomainEvent<'GroupJoinRequested', z.infer<typeof GroupJoinRequestedSchema>>
  | DomainEvent<'GroupUserRemoved', z.infer<typeof GroupUserRemovedSchema>>
  | DomainEvent<'GroupDeleted', z.infer<typeof GroupDeletedSchema>>
  | DomainEvent<'GroupTimestampsSet', z.infer<typeof GroupTimestampsSetSchema>>;

const groupEventSchemas = {
  GroupCreated: GroupCreatedSchema,
  GroupUpdated: GroupUpdatedSchema,
  GroupMemberSet: GroupMemberSetSchema,
  GroupUserInvited: GroupUserInvitedSchema,
  GroupJoinRequested: GroupJoinRequestedSchema,
  GroupUserRemoved: GroupUserRemovedSchema,
  GroupDeleted: GroupDeletedSchema,
  GroupTimestampsSet: GroupTimestampsSetSchema,
} as const;

// ---- state ----

interface ActiveGroup {
  status: 'active';
  id: string;
  name: string;
  public: boolean;
  addAllowed: AddAllowed;
  members: Record<string, Level>;
  invites: Record<string, Level>;
  requests: string[];
}
export type GroupState = { status: 'none' | 'deleted' } | ActiveGroup;

const without = <V>(record: Record<string, V>, key: string): Record<string, V> => {
  const { [key]: _gone, ...rest } = record;
  return rest;
};

function evolve(state: GroupState, event: GroupEvent): GroupState {
  if (event.type === 'GroupCreated') {
    const d = event.data;
    return {
      status: 'active',
      id: d.groupId,
      name: d.name,
      public: d.public,
      addAllowed: 'default',
      members: {},
      invites: {},
      requests: [],
    };
  }
  if (state.status !== 'active') return state;
  switch (event.type) {
    case 'GroupUpdated': {
      const d = event.data;
      return {
        ...state,
        ...(d.name !== undefined ? { name: d.name } : {}),
        ...(d.public !== undefined ? { public: d.public } : {}),
        ...(d.addAllowed !== undefined ? { addAllowed: d.addAllowed } : {}),
      };
    }
    case 'GroupTimestampsSet':
      return state;
    case 'GroupMemberSet': {
      const { userId, level } = event.data;
      return {
        ...state,
        members: { ...state.members, [userId]: level },
        invites: without(state.invites, userId),
        requests: state.requests.filter((id) => id !== userId),
      };
    }
    case 'GroupUserInvited': {
      const { userId, level } = event.data;
      return {
        ...state,
        invites: { ...state.invites, [userId]: level },
        requests: state.requests.filter((id) => id !== userId),
      };
    }
    case 'GroupJoinRequested':
      return state.requests.includes(event.data.userId)
        ? state
        : { ...state, requests: [...state.requests, event.data.userId] };
    case 'GroupUserRemoved': {
      const { userId } = event.data;
      return {
        ...state,
        members: without(state.members, userId),
        invites: without(state.invites, userId),
        requests: state.requests.filter((id) => id !== userId),
      };
    }
    case 'GroupDeleted':
      return { status: 'deleted' };
    default: {
      const never: never = event;
      return never;
    }
  }
}

// ---- commands ----

export type GroupCommand =
  | {
      type: 'CreateGroup';
      data: {
        groupId: string;
        name: string;
        description: string;
        public: boolean;
        creatorId: string;
        created: string;
        nameOwner: string | null;
      };
    }
  | {
      type: 'UpdateGroup';
      data: {
        name?: string;
        description?: string;
        public?: boolean;
        addAllowed?: AddAllowed;
        updated: string;
        nameOwner: string | null;
      };
    }
  /** `POST /group/:id/invitation`: with `force` the user is added at once (the route checked who may force). */
  | { type: 'InviteUser'; data: { userId: string; level: Level; force: boolean } }
  | { type: 'JoinGroup'; data: { userId: string } }
  | { type: 'SetMemberLevel'; data: { userId: string; level: Level } }
  | { type: 'RemoveUser'; data: { userId: string } }
  | { type: 'SetGroupTimestamps'; data: { created?: string; updated?: string } }
  | { type: 'DeleteGroup'; data: Record<string, never> };

/** Girder's Group.validate: the name is stripped, not empty, and unused (case-insensitively) by another group. */
function checkName(name: string, nameOwner: string | null, selfId: string): string {
  const stripped = name.trim();
  if (!stripped) throw new ValidationError('Group name must not be empty.', 'name');
  if (nameOwner !== null && nameOwner !== selfId)
    throw new ValidationError('A group with that name already exists.', 'name');
  return stripped;
}

function active(state: GroupState): ActiveGroup {
  if (state.status !== 'active') throw new RestError('The group does not exist.');
  return state;
}

function decide(command: GroupCommand, state: GroupState): GroupEvent[] {
  if (command.type === 'CreateGroup') {
    const d = command.data;
    if (state.status !== 'none') throw new RestError(`Group ${d.groupId} already exists.`, 409);
    const name = checkName(d.name, d.nameOwner, d.groupId);
    const { groupId, creatorId } = d;
    return [
      {
        type: 'GroupCreated',
        data: {
          groupId,
          name,
          description: d.description.trim(),
          public: d.public,
          creatorId,
          created: d.created,
        },
      },
      // The creator is the group's first administrator (Girder's _grantCreatorAccess).
      { type: 'GroupMemberSet', data: { groupId, userId: creatorId, level: 2 } },
    ];
  }
  const group = active(state);
  const groupId = group.id;
  switch (command.type) {
    case 'UpdateGroup': {
      const d = command.data;
      const data: GroupUpdatedData = { groupId, updated: d.updated };
      if (d.name !== undefined) data.name = checkName(d.name, d.nameOwner, groupId);
      if (d.description !== undefined) data.description = d.description.trim();
      if (d.public !== undefined) data.public = d.public;
      if (d.addAllowed !== undefined) data.addAllowed = d.addAllowed;
      return [{ type: 'GroupUpdated', data }];
    }
    case 'SetGroupTimestamps':
      return [{ type: 'GroupTimestampsSet', data: { groupId, ...command.data } }];
    case 'InviteUser': {
      const { userId, level, force } = command.data;
      // Girder's addUser (force) also changes a member's level; inviteUser refuses members, and turns an
      // outstanding request to join into membership.
      if (force || group.requests.includes(userId))
        return [{ type: 'GroupMemberSet', data: { groupId, userId, level } }];
      if (hasOwnKey(group.members, userId)) throw new ValidationError('User is already in this group.');
      return [{ type: 'GroupUserInvited', data: { groupId, userId, level } }];
    }
    case 'JoinGroup': {
      const { userId } = command.data;
      const invited = ownValue(group.invites, userId);
      if (invited !== undefined) return [{ type: 'GroupMemberSet', data: { groupId, userId, level: invited } }];
      if (hasOwnKey(group.members, userId) || group.requests.includes(userId)) return [];
      return [{ type: 'GroupJoinRequested', data: { groupId, userId } }];
    }
    case 'SetMemberLevel': {
      const { userId, level } = command.data;
      if (!hasOwnKey(group.members, userId)) throw new AccessDeniedError('That user is not a group member.');
      if (ownValue(group.members, userId) === level) return [];
      return [{ type: 'GroupMemberSet', data: { groupId, userId, level } }];
    }
    case 'RemoveUser': {
      const { userId } = command.data;
      const known =
        hasOwnKey(group.members, userId) || hasOwnKey(group.invites, userId) || group.requests.includes(userId);
      return known ? [{ type: 'GroupUserRemoved', data: { groupId, userId } }] : [];
    }
    case 'DeleteGroup':
      return [{ type: 'GroupDeleted', data: { groupId, name: group.name } }];
    default: {
      const never: never = command;
      return never;
    }
  }
}

export const groupDecider: Decider<GroupState, GroupCommand, GroupEvent> = {
  initialState: () => ({ status: 'none' }),
  evolve,
  decide,
  eventSchemas: groupEventSchemas,
};

/** What a group access check needs of the group (the read-model document has these). */
export interface GroupAccessView {
  public: boolean;
  members: { id: string; level: Level }[];
  invites: { id: string; level: Level }[];
}

/**
 * Girder's Group.hasAccess: site admins pass; READ needs the group public, or membership or an invitation; WRITE
 * (moderator) and ADMIN need a membership at that level.
 */
export function groupAccessLevel(group: GroupAccessView, viewer: Viewer | null): -1 | Level {
  if (!viewer) return group.public ? 0 : -1;
  if (viewer.admin) return 2;
  const member = group.members.find((m) => m.id === viewer.id);
  if (member) return member.level;
  if (group.public || group.invites.some((i) => i.id === viewer.id)) return 0;
  return -1;
}
