import type { Response } from 'express';
import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { param } from '../params';
import type { Services } from '../../services';
import type { RequestMeta } from '../../commands/requestMeta';
import type { UserDoc } from '../../ports/readModel';
import { AccessDeniedError, RestError } from '../../domain/errors';
import { Scope } from '../../domain/scopes';
import { loginRefusal } from '../../domain/loginPolicy';
import { AccessLevel } from '../../domain/access';
import { model } from '../modelParams';
import { userView } from '../../queries/views';
import { mailedToken } from '../../queries/mailedToken';
import { viewerOf } from '../auth';
import { setTokenCookie } from '../cookies';
import { requestOrigin } from '../requestOrigin';
import { issueToken, revokeToken } from '../../commands/userCommands';
import { verifyEmail } from '../../commands/userAccountCommands';
import { sendTemporaryAccess, sendVerificationEmail } from '../../commands/accountMail';
import { settingsNow, tokenLifetimeDays } from '../../queries/settingQueries';
import { userAfterWrite, userByEmail, userByLoginOrEmail } from '../../queries/userQueries';

/** The user of a mailed link (`:id`): any caller may use it, the mailed token is the authority. */
const mailedLinkUser = () =>
  model.path('user', AccessLevel.READ, {
    note: 'any caller: the mailed token is the authority (every user is readable, as Girder loads it with force)',
  });

/**
 * The user routes of e-mailed links (Girder's user.py): temporary access (password reset) and e-mail verification.
 * Each mailed token has one scope and one user and lives one day (src/commands/accountMail.ts).
 */

/** A login token for the user of a link, with its cookie (Girder's `sendAuthTokenCookie`). */
async function logIn(services: Services, user: UserDoc, res: Response, secure: boolean, meta: RequestMeta) {
  const token = await issueToken(
    services.commands,
    { userId: user._id, days: await tokenLifetimeDays(services) },
    { ...meta, userId: user._id },
  );
  setTokenCookie(res, token.token, token.expires, secure);
  return token;
}

export const userEmailRoutes: RouteDef[] = [
  route({
    method: 'PUT',
    path: 'password/temporary',
    summary: "Create a temporary access token for a user. The user's password is not changed.",
    access: 'public',
    params: [param.requiredString('email', { strip: true, description: 'Your email address.' })],
    async handler({ params, services, meta, req }) {
      const user = await userByEmail(services, params.email.toLowerCase());
      if (!user) throw new RestError('That email is not registered.');
      await sendTemporaryAccess(services, user, params.email, requestOrigin(req), meta);
      return { message: 'Sent temporary access email.' };
    },
  }),
  route({
    method: 'GET',
    path: 'password/temporary/:id',
    summary: 'Check if a specified token is a temporary access token for the specified user.',
    access: 'public',
    params: [param.requiredString('token', { secret: true, description: 'The token to check.' })],
    models: {
      user: mailedLinkUser(),
    },
    async handler({ models: { user }, params, services, meta, req, res }) {
      if (!(await mailedToken(services, user._id, params.token, Scope.TEMP_USER)))
        throw new AccessDeniedError('The token does not grant temporary access to this user.');
      // The temporary token stays valid: the password change that follows names it as the old password.
      const token = await logIn(services, user, res, req.secure, meta);
      return {
        user: userView(user, viewerOf(user)),
        authToken: { token: token.token, expires: token.expires, temporary: true },
        message: 'Temporary access token is valid.',
      };
    },
  }),
  route({
    method: 'PUT',
    path: ':id/verification',
    summary: 'Verify an email address using a token.',
    access: 'public',
    params: [param.requiredString('token', { secret: true, description: 'The token to check.' })],
    models: {
      user: mailedLinkUser(),
    },
    async handler({ models: { user }, params, services, meta, req, res }) {
      const mailed = await mailedToken(services, user._id, params.token, Scope.EMAIL_VERIFICATION);
      if (!mailed) throw new AccessDeniedError('The token is invalid or expired.');
      await verifyEmail(services.commands, user._id, meta);
      await revokeToken(services.commands, mailed.hash, meta);
      const verified = await userAfterWrite(services, user._id, 'verified');
      const view = userView(verified, viewerOf(verified));
      if (loginRefusal(verified, await settingsNow(services)))
        return { user: view, message: 'Email verification succeeded.' };
      const token = await logIn(services, verified, res, req.secure, meta);
      return {
        user: view,
        authToken: { token: token.token, expires: token.expires, scope: token.scope },
        message: 'Email verification succeeded.',
      };
    },
  }),
  route({
    method: 'POST',
    path: 'verification',
    summary: 'Send verification email.',
    access: 'public',
    params: [param.requiredString('login', { strip: true, description: 'Your login or email address.' })],
    async handler({ params, services, meta, req }) {
      const name = params.login.toLowerCase();
      const user = await userByLoginOrEmail(services, name);
      if (!user) throw new RestError('That login is not registered.', 401);
      await sendVerificationEmail(services, user, requestOrigin(req), meta);
      return { message: 'Sent verification email.' };
    },
  }),
];
