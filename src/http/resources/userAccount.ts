import { model } from '../modelParams';
import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { Scope } from '../../domain/scopes';
import { param } from '../params';
import { AccessDeniedError, RestError } from '../../domain/errors';
import { changePassword, revokeToken } from '../../commands/userCommands';
import { mailedToken } from '../../queries/mailedToken';
import { userCount, userDetails } from '../../queries/userQueries';
import { checkPassword } from '../passwordCheck';
import { AccessLevel } from '../../domain/access';
import { signedInUser } from '../principal';

/** The user routes of the web client's account and user pages: counts and the password change. */
export const userAccountRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: 'details',
    summary: 'Get detailed information about all users.',
    access: 'user',
    params: [],
    // Every user document is public here (registration makes them so), so every user counts.
    handler: async ({ services }) => ({ nUsers: await userCount(services) }),
  }),
  route({
    method: 'GET',
    path: ':id/details',
    summary: 'Get detailed information of accessible users.',
    access: 'public',
    scope: [Scope.USER_INFO_READ],
    params: [],
    models: { user: model.path('user', AccessLevel.READ) },
    async handler({ models: { user }, services, principal }) {
      return userDetails(services, user, principal.viewer);
    },
  }),
  route({
    method: 'PUT',
    path: 'password',
    summary: 'Change your password.',
    access: 'user',
    params: [
      param.requiredString('old', { secret: true, description: 'Your current password or a temporary access token.' }),
      param.requiredString('new', { secret: true, description: 'Your new password.' }),
    ],
    async handler({ params, services, principal, meta, req }) {
      if (!params.old) throw new RestError('Old password must not be empty.');
      const user = signedInUser(principal);
      // Not the password: it may be the temporary access token a password reset mailed (then used up).
      let temporary: string | undefined;
      if (!(await checkPassword(services, req, { userId: user._id }, user.passwordHash, params.old))) {
        const token = await mailedToken(services, user._id, params.old, Scope.TEMP_USER);
        if (!token) throw new AccessDeniedError('Old password is incorrect.');
        temporary = token.hash;
      }
      await changePassword(services.commands, user._id, params.new, meta);
      if (temporary) await revokeToken(services.commands, temporary, meta);
      return { message: 'Password changed.' };
    },
  }),
];
