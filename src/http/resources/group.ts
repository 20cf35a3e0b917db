import { model } from '../modelParams';
import type { Resource, RouteContext } from '../routeTable';
import { route } from '../routeTable';
import { pagingOf, pagingParams, param } from '../params';
import { GROUP_SORT, USER_SORT } from '../../queries/sortableFields';
import { AccessLevel, type Level } from '../../domain/access';
import { AccessDeniedError, RestError } from '../../domain/errors';
import { ADD_ALLOWED, groupAccessLevel } from '../../domain/group';
import { SettingKey } from '../../domain/settings';
import { settingNow } from '../../queries/settingQueries';
import { changeMembership, createGroup, deleteGroup, updateGroup } from '../../commands/groupCommands';
import {
  currentGroup,
  groupById,
  groupUsers,
  groupView,
  groupWithAccess,
  listGroups,
} from '../../queries/groupQueries';
import { signedInUser, signedInViewer } from '../principal';
import { requestOrigin } from '../requestOrigin';
import { sendGroupInvitation } from '../../commands/accountMail';

const userIdParam = (description: string) => param.requiredString('userId', { description });

function accessLevel(value: number | undefined): Level {
  const level = value ?? 0;
  if (level !== 0 && level !== 1 && level !== 2) throw new RestError('Invalid access level', 400);
  return level;
}

/**
 * Re-reads a group after a membership write and answers with its access list (and requests). The route checked
 * access before writing; like Girder, it answers even when the write took the caller's own access away.
 */
async function reloaded(ctx: Pick<RouteContext, 'services' | 'principal'>, id: string, withRequests = true) {
  const group = await currentGroup(ctx.services, id);
  return groupWithAccess(ctx.services, group, ctx.principal.viewer, withRequests);
}

/**
 * Girder's rule for `force` (adding a user without an invitation): site admins always; otherwise the group's
 * `addAllowed` (or, when "default", the `core.add_to_group_policy` setting) must allow it for the caller's role.
 */
async function mayForceAdd(ctx: RouteContext, groupLevel: number, addAllowed: string): Promise<boolean> {
  if (ctx.principal.user?.admin) return true;
  const policy = String(await settingNow(ctx.services, SettingKey.ADD_TO_GROUP_POLICY));
  const allowed = ['no', 'yesadmin', 'yesmod'].includes(addAllowed) ? addAllowed : policy;
  if (groupLevel >= 2 && (policy.includes('mod') || policy.includes('admin')) && allowed.startsWith('yes')) return true;
  return groupLevel >= 1 && policy.includes('mod') && allowed === 'yesmod';
}

/** `GET :id/invitation` and `GET :id/member`: the group's users of one kind, sorted and paged like user listings. */
function groupUsersRoute(kind: 'invite' | 'member', path: string, summary: string) {
  return route({
    method: 'GET',
    path,
    summary,
    access: 'public',
    params: [...pagingParams(USER_SORT)],
    models: { group: model.path('group', AccessLevel.READ) },
    async handler({ path, params, services, principal, setTotalCount }) {
      const page = await groupUsers(services, path.id, kind, principal.viewer, pagingOf(params));
      setTotalCount(page.total);
      return page.rows;
    },
  });
}

export const groupResource: Resource = {
  name: 'group',
  description: 'Groups of users, which access lists can name.',
  routes: [
    route({
      method: 'GET',
      path: '',
      summary: 'Search for groups or list all groups.',
      access: 'public',
      params: [
        param.string('text', { description: 'Pass this to perform a full-text search for groups.' }),
        param.flag('exact', false, { description: 'If true, only return exact name matches. This is case sensitive.' }),
        ...pagingParams(GROUP_SORT),
      ],
      async handler({ params, services, principal, setTotalCount }) {
        const page = await listGroups(services, principal.user, principal.viewer, {
          text: params.text,
          exact: params.exact,
          paging: pagingOf(params),
        });
        setTotalCount(page.total);
        return page.rows;
      },
    }),
    route({
      method: 'POST',
      path: '',
      summary: 'Create a new group.',
      access: 'user',
      params: [
        param.requiredString('name', { description: 'Unique name for the group.', strip: true }),
        param.string('description', { description: 'Description of the group.', default: '', strip: true }),
        param.flag('public', false, { description: 'Whether the group should be publicly visible.' }),
      ],
      async handler({ params, services, principal, meta }) {
        const id = await createGroup(
          services.commands,
          {
            name: params.name,
            description: params.description ?? '',
            public: params.public,
            creatorId: signedInUser(principal)._id,
          },
          meta,
        );
        const group = await groupById(services, id);
        if (!group) throw new Error(`Group ${id} was created but is not in the read model.`);
        return groupView(group, principal.viewer);
      },
    }),
    route({
      method: 'GET',
      path: ':id',
      summary: 'Get a group by ID.',
      access: 'public',
      params: [],
      models: { group: model.path('group', AccessLevel.READ) },
      async handler({ models: { group }, services, principal }) {
        const policy = await settingNow(services, SettingKey.ADD_TO_GROUP_POLICY);
        return { ...groupView(group, principal.viewer), _addToGroupPolicy: policy };
      },
    }),
    route({
      method: 'GET',
      path: ':id/access',
      summary: 'Get the access control list for a group.',
      access: 'public',
      params: [],
      models: { group: model.path('group', AccessLevel.READ) },
      handler: ({ models: { group }, services, principal }) => groupWithAccess(services, group, principal.viewer),
    }),
    groupUsersRoute('invite', ':id/invitation', 'Show outstanding invitations for a group.'),
    route({
      method: 'PUT',
      path: ':id',
      summary: 'Update a group by ID.',
      access: 'user',
      params: [
        param.string('name', { description: 'The name to set on the group.', strip: true }),
        param.string('description', { description: 'Description for the group.', strip: true }),
        param.bool('public', { description: 'Whether the group should be publicly visible' }),
        param.enum('addAllowed', ADD_ALLOWED, {
          description:
            'Can admins or moderators directly add members to this group?  Only system administrators are allowed to set this field',
        }),
      ],
      models: { group: model.path('group', AccessLevel.WRITE) },
      async handler({ path, params, services, principal, meta }) {
        if (params.addAllowed !== undefined && !principal.user?.admin)
          throw new AccessDeniedError('Administrator access required.');
        await updateGroup(
          services.commands,
          path.id,
          { name: params.name, description: params.description, public: params.public, addAllowed: params.addAllowed },
          meta,
        );
        const updated = await currentGroup(services, path.id);
        return groupView(updated, principal.viewer);
      },
    }),
    route({
      method: 'POST',
      path: ':id/member',
      summary: 'Request to join a group, or accept an invitation to join.',
      access: 'user',
      params: [],
      models: { group: model.path('group', AccessLevel.READ) },
      async handler(ctx) {
        const { path, services, principal, meta } = ctx;
        await changeMembership(
          services.commands,
          path.id,
          { type: 'JoinGroup', data: { userId: signedInUser(principal)._id } },
          meta,
        );
        return reloaded(ctx, path.id);
      },
    }),
    groupUsersRoute('member', ':id/member', 'List members of a group.'),
    route({
      method: 'POST',
      path: ':id/invitation',
      summary: "Invite a user to join a group, or accept a user's request to join.",
      access: 'user',
      params: [
        userIdParam('The ID of the user to invite or accept.'),
        param.int('level', {
          default: 0,
          description: 'The access level the user will be given when they accept the invitation.',
        }),
        param.flag('quiet', false, {
          description: 'If you do not want this action to send an email to the target user, set this to true.',
        }),
        param.flag('force', false, {
          description: 'Add user directly rather than sending an invitation (admin-only option).',
        }),
      ],
      models: {
        group: model.path('group', AccessLevel.WRITE),
        user: model.param('user', 'userId', AccessLevel.READ),
      },
      async handler(ctx) {
        const { path, params, models, services, principal, meta } = ctx;
        const { group, user } = models;
        const level = accessLevel(params.level);
        if (params.force) {
          if (!(await mayForceAdd(ctx, groupAccessLevel(group, principal.viewer), group.addAllowed))) {
            throw new AccessDeniedError('Administrator access required.');
          }
        } else if (groupAccessLevel(group, principal.viewer) < level) {
          // One can only invite into levels one holds oneself.
          throw new AccessDeniedError(
            `${['Read', 'Write', 'Admin'][level]} access denied for group ${path.id} (user ${signedInViewer(principal).id}).`,
          );
        }
        await changeMembership(
          services.commands,
          path.id,
          { type: 'InviteUser', data: { userId: user._id, level, force: params.force } },
          meta,
        );
        // An invitation (not a forced addition) is mailed to the invited user unless `quiet` says not to.
        if (!params.force && !params.quiet)
          await sendGroupInvitation(services, user, signedInUser(principal), group, requestOrigin(ctx.req));
        return reloaded(ctx, path.id);
      },
    }),
    ...(['moderator', 'admin'] as const).flatMap((role) => {
      const level: Level = role === 'moderator' ? 1 : 2;
      return [
        route({
          method: 'POST',
          path: `:id/${role}`,
          summary: `Promote a member to be ${role === 'moderator' ? 'a moderator' : 'an administrator'} of the group.`,
          access: 'user',
          params: [userIdParam('The ID of the user to promote.')],
          models: {
            group: model.path('group', AccessLevel.ADMIN),
            user: model.param('user', 'userId', AccessLevel.READ),
          },
          async handler(ctx) {
            const { path, models, services, meta } = ctx;
            const { user } = models;
            await changeMembership(
              services.commands,
              path.id,
              { type: 'SetMemberLevel', data: { userId: user._id, level } },
              meta,
            );
            return reloaded(ctx, path.id, false);
          },
        }),
        route({
          method: 'DELETE',
          path: `:id/${role}`,
          summary: 'Demote a user to a normal group member.',
          access: 'user',
          params: [userIdParam('The ID of the user to demote.')],
          models: {
            group: model.path('group', AccessLevel.ADMIN),
            user: model.param('user', 'userId', AccessLevel.READ),
          },
          async handler(ctx) {
            const { path, models, services, meta } = ctx;
            const { group, user } = models;
            if (group.members.some((m) => m.id === user._id)) {
              await changeMembership(
                services.commands,
                path.id,
                { type: 'SetMemberLevel', data: { userId: user._id, level: 0 } },
                meta,
              );
            }
            return reloaded(ctx, path.id);
          },
        }),
      ];
    }),
    route({
      method: 'DELETE',
      path: ':id/member',
      summary: 'Remove a user from a group, or uninvite them.',
      access: 'user',
      params: [
        param.string('userId', {
          description: 'The ID of the user to remove. If not passed, will remove yourself from the group.',
        }),
      ],
      models: {
        group: model.path('group', AccessLevel.READ),
        other: model.optionalParam('user', 'userId', AccessLevel.READ),
      },
      async handler(ctx) {
        const { path, models, services, principal, meta } = ctx;
        const { group } = models;
        const user = models.other ?? signedInUser(principal);
        if (user._id !== signedInUser(principal)._id) {
          // Removing someone else needs WRITE, and ADMIN to remove an administrator.
          const theirs = group.members.find((m) => m.id === user._id)?.level ?? -1;
          const needed: Level = theirs >= 2 ? 2 : 1;
          if (groupAccessLevel(group, principal.viewer) < needed) {
            throw new AccessDeniedError(
              `${needed === 2 ? 'Admin' : 'Write'} access denied for group ${path.id} (user ${signedInViewer(principal).id}).`,
            );
          }
        }
        await changeMembership(services.commands, path.id, { type: 'RemoveUser', data: { userId: user._id } }, meta);
        return reloaded(ctx, path.id);
      },
    }),
    route({
      method: 'DELETE',
      path: ':id',
      summary: 'Delete a group by ID.',
      access: 'user',
      params: [],
      models: { group: model.path('group', AccessLevel.ADMIN) },
      async handler({ models: { group }, services, meta }) {
        await deleteGroup(services.commands, group._id, meta);
        return { message: `Deleted the group ${group.name}.` };
      },
    }),
  ],
};
