import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { param } from '../params';
import { AccessDeniedError } from '../../domain/errors';
import { AccessLevel } from '../../domain/access';
import { validateProfile } from '../../domain/user';
import { model } from '../modelParams';
import { userView } from '../../queries/views';
import { userAfterWrite } from '../../queries/userQueries';
import { signedInUser } from '../principal';
import { requestOrigin } from '../requestOrigin';
import { changePassword } from '../../commands/userCommands';
import { deleteUser, updateProfile } from '../../commands/userAccountCommands';
import { sendApprovedNotice } from '../../commands/accountMail';

/** Girder's user routes that change or remove an account: `PUT /user/:id`, `DELETE /user/:id`, `PUT /user/:id/password`. */
export const userProfileRoutes: RouteDef[] = [
  route({
    method: 'PUT',
    path: ':id',
    summary: "Update a user's information.",
    access: 'user',
    params: [
      param.requiredString('firstName', { description: 'First name of the user.' }),
      param.requiredString('lastName', { description: 'Last name of the user.' }),
      param.requiredString('email', { description: 'The email of the user.' }),
      param.bool('admin', { description: 'Is the user a site admin (admin access required)' }),
      param.enum('status', ['pending', 'enabled', 'disabled'] as const, {
        description: 'The account status (admin access required)',
      }),
    ],
    models: { user: model.path('user', AccessLevel.WRITE) },
    async handler({ models: { user }, params, services, principal, meta, req }) {
      const caller = signedInUser(principal);
      // Girder's updateUser: only site administrators change `admin` and `status`; anyone else may send the value
      // the account already has.
      let admin = user.admin;
      if (params.admin !== undefined) {
        if (caller.admin) admin = params.admin;
        else if (user.admin !== params.admin) throw new AccessDeniedError('Only admins may change admin status.');
      }
      let status = user.status;
      if (params.status !== undefined && params.status !== user.status) {
        if (!caller.admin) throw new AccessDeniedError('Only admins may change status.');
        status = params.status;
      }
      const profile = validateProfile({ firstName: params.firstName, lastName: params.lastName, email: params.email });
      await updateProfile(services.commands, user._id, { ...profile, admin, status }, meta);
      const updated = await userAfterWrite(services, user._id, 'updated');
      // The `pending` → `enabled` transition tells the user they may log in now.
      if (user.status === 'pending' && status === 'enabled')
        await sendApprovedNotice(services, updated, requestOrigin(req));
      return userView(updated, principal.viewer);
    },
  }),
  route({
    method: 'DELETE',
    path: ':id',
    summary: 'Delete a user by ID.',
    access: 'user',
    params: [],
    models: { user: model.path('user', AccessLevel.ADMIN) },
    async handler({ models: { user }, services, meta }) {
      await deleteUser(services, user._id, meta);
      return { message: `Deleted user ${user.login}.` };
    },
  }),
  route({
    method: 'PUT',
    path: ':id/password',
    summary: "Change a user's password (administrators only).",
    access: 'admin',
    params: [param.requiredString('password', { secret: true, description: "The user's new password." })],
    models: { user: model.path('user', AccessLevel.ADMIN) },
    async handler({ models: { user }, params, services, meta }) {
      await changePassword(services.commands, user._id, params.password, meta);
      return { message: 'Password changed.' };
    },
  }),
];
