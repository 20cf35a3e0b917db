import { projectionOf } from './projection';
import type { GroupEvent } from '../domain/group';

/**
 * Groups and their memberships (users' `groups`/`groupInvites`, which access checks resolve group ACL entries with).
 */
export const groupsProjection = projectionOf<GroupEvent>({
  GroupCreated: (event, tx) => {
    const d = event.data;
    tx.groups.put({
      _id: d.groupId,
      name: d.name,
      description: d.description,
      public: d.public,
      addAllowed: 'default',
      creatorId: d.creatorId,
      created: d.created,
      updated: d.created,
    });
  },
  GroupUpdated: (event, tx) => {
    const { groupId, ...fields } = event.data;
    tx.groups.update(groupId, fields);
  },
  GroupMemberSet: (event, tx) => tx.groups.setMembership({ ...event.data, kind: 'member' }),
  GroupUserInvited: (event, tx) => tx.groups.setMembership({ ...event.data, kind: 'invite' }),
  GroupJoinRequested: (event, tx) => tx.groups.setMembership({ ...event.data, kind: 'request', level: 0 }),
  GroupUserRemoved: (event, tx) => tx.groups.removeMembership(event.data.groupId, event.data.userId),
  GroupTimestampsSet: (event, tx) => {
    const { groupId, ...times } = event.data;
    tx.groups.update(groupId, times);
  },
  GroupDeleted: (event, tx) => tx.groups.delete(event.data.groupId),
});
