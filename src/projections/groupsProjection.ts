import type { Projection } from './projection';
import type { RecordedEvent } from '../ports/eventStore';
import type { GroupCreatedData, GroupMemberSetData, GroupUpdatedData, GroupUserInvitedData } from '../domain/group';

type Data<T> = RecordedEvent<T>;

/** Groups and their memberships (users' `groups`/`groupInvites`, which access checks resolve group ACL entries with). */
export const groupsProjection: Projection = {
  handlers: {
    GroupCreated: (event: Data<GroupCreatedData>, tx) => {
      const d = event.data;
      tx.groups.put({
        _id: d.groupId, name: d.name, description: d.description, public: d.public, addAllowed: 'default',
        creatorId: d.creatorId, created: d.created, updated: d.created,
      });
    },
    GroupUpdated: (event: Data<GroupUpdatedData>, tx) => {
      const { groupId, ...fields } = event.data;
      tx.groups.update(groupId, fields);
    },
    GroupMemberSet: (event: Data<GroupMemberSetData>, tx) => tx.groups.setMembership({ ...event.data, kind: 'member' }),
    GroupUserInvited: (event: Data<GroupUserInvitedData>, tx) => tx.groups.setMembership({ ...event.data, kind: 'invite' }),
    GroupJoinRequested: (event: Data<{ groupId: string; userId: string }>, tx) =>
      tx.groups.setMembership({ ...event.data, kind: 'request', level: 0 }),
    GroupUserRemoved: (event: Data<{ groupId: string; userId: string }>, tx) => tx.groups.removeMembership(event.data.groupId, event.data.userId),
    GroupDeleted: (event: Data<{ groupId: string }>, tx) => tx.groups.delete(event.data.groupId),
  },
};
