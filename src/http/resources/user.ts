import { model } from '../modelParams';
import { endSession } from '../endSession';
import type { Resource } from '../routeTable';
import { route } from '../routeTable';
import { pagingOf, pagingParams, param } from '../params';
import { USER_SORT } from '../../queries/sortableFields';
import { AccessDeniedError, RestError } from '../../domain/errors';
import { AccessLevel } from '../../domain/access';
import { registerUser, issueToken } from '../../commands/userCommands';
import { checkPassword } from '../passwordCheck';
import { userView } from '../../queries/views';
import { presentedToken, viewerOf } from '../auth';
import { setTokenCookie } from '../cookies';
import { userAccountRoutes } from './userAccount';
import { userProfileRoutes } from './userProfile';
import { userEmailRoutes } from './userEmail';
import { userOtpRoutes } from './userOtp';
import { SettingKey, settingValue } from '../../domain/settings';
import { settingsNow, tokenLifetimeDays } from '../../queries/settingQueries';
import { listUsers, userAfterWrite, userByLoginOrEmail } from '../../queries/userQueries';
import { Scope } from '../../domain/scopes';
import { loginRefusal } from '../../domain/loginPolicy';
import { verifyOtp } from '../otpCheck';
import { requestOrigin } from '../requestOrigin';
import { sendApprovalNotice, sendVerificationEmail } from '../../commands/accountMail';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Decodes `Authorization: Basic …` (fallback `Girder-Authorization`) as Girder does with Python's `b64decode` and
 * a strict UTF-8 decode: characters outside the base64 alphabet are skipped, wrong padding or bytes that are not
 * UTF-8 make the header invalid, and the credentials split on the first colon.
 */
function basicCredentials(header: string | undefined): { login: string; password: string } {
  if (!header?.startsWith('Basic ')) throw new RestError('Use HTTP Basic Authentication', 401);
  const encoded = header.slice('Basic '.length).replace(/[^A-Za-z0-9+/=]/g, '');
  let decoded: string | null = null;
  if (BASE64.test(encoded) && encoded.length % 4 === 0) {
    try {
      decoded = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(encoded, 'base64'));
    } catch {
      decoded = null;
    }
  }
  const colon = decoded === null ? -1 : decoded.indexOf(':');
  if (decoded === null || colon < 0) throw new RestError('Invalid HTTP Authorization header', 401);
  return { login: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export const userResource: Resource = {
  name: 'user',
  description: 'User accounts and login.',
  routes: [
    ...userAccountRoutes,
    ...userProfileRoutes,
    ...userEmailRoutes,
    ...userOtpRoutes,
    route({
      method: 'GET',
      path: 'me',
      summary: 'Retrieve the currently logged-in user information.',
      access: 'public',
      params: [],
      handler: ({ principal }) => (principal.user ? userView(principal.user, principal.viewer) : null),
    }),
    route({
      method: 'GET',
      path: 'authentication',
      summary: 'Log in to the system (HTTP Basic) and receive a token.',
      access: 'public',
      params: [],
      async handler({ req, res, services, principal, meta, rawParams }) {
        if (principal.user && principal.token) {
          // Already logged in with a valid token: that token is returned as is, no new one and no cookie.
          return {
            user: userView(principal.user, principal.viewer),
            authToken: {
              token: presentedToken(req, rawParams, false),
              expires: principal.token.expires,
              scope: principal.token.scope,
            },
            message: 'Login succeeded.',
          };
        }
        const { login, password } = basicCredentials(req.get('Authorization') || req.get('Girder-Authorization'));
        const settings = await settingsNow(services);
        if (settingValue(settings, SettingKey.ENABLE_PASSWORD_LOGIN) === false)
          throw new RestError('Password login is disabled on this instance.');
        const name = login.toLowerCase().trim();
        const user = await userByLoginOrEmail(services, name);
        // Checked (and throttled) whether or not the login exists, at the same cost (src/http/passwordCheck.ts).
        const account = user ? { userId: user._id } : { unknownName: name };
        const valid = await checkPassword(services, req, account, user?.passwordHash ?? null, password);
        if (!user || !valid) throw new AccessDeniedError('Login failed.');
        // Girder's order: the password, then the one-time password, then the account's state.
        const otp = req.get('Girder-OTP');
        if (user.otp?.enabled) {
          if (otp === undefined)
            throw new AccessDeniedError(
              'User authentication must include a one-time password (typically in the "Girder-OTP" header).',
            );
          verifyOtp(user, otp);
        } else if (otp !== undefined) {
          throw new AccessDeniedError('The user has not enabled one-time passwords.');
        }
        const refusal = loginRefusal(user, settings);
        if (refusal) throw refusal;
        const token = await issueToken(
          services.commands,
          { userId: user._id, days: await tokenLifetimeDays(services) },
          { ...meta, userId: user._id },
        );
        setTokenCookie(res, token.token, token.expires, req.secure);
        return {
          user: userView(user, viewerOf(user)),
          authToken: { token: token.token, expires: token.expires, scope: token.scope },
          message: 'Login succeeded.',
        };
      },
    }),
    route({
      method: 'DELETE',
      path: 'authentication',
      summary: 'Log out of the system (revokes the current token).',
      access: 'user',
      params: [],
      async handler(ctx) {
        await endSession(ctx);
        return { message: 'Logged out.' };
      },
    }),
    route({
      method: 'GET',
      path: '',
      summary: 'List or search for users.',
      access: 'public',
      scope: [Scope.USER_INFO_READ],
      params: [
        param.string('text', { description: 'Pass this to perform a full-text search for items.' }),
        ...pagingParams(USER_SORT),
      ],
      async handler({ params, services, principal, setTotalCount }) {
        const page = await listUsers(services, principal.viewer, { text: params.text, paging: pagingOf(params) });
        setTotalCount(page.total);
        return page.rows;
      },
    }),
    route({
      method: 'GET',
      path: ':id',
      summary: 'Get a user by ID.',
      access: 'public',
      scope: [Scope.USER_INFO_READ],
      params: [],
      models: { user: model.path('user', AccessLevel.READ) },
      handler: ({ models: { user }, principal }) => userView(user, principal.viewer),
    }),
    route({
      method: 'POST',
      path: '',
      summary: 'Create a new user.',
      access: 'public',
      params: [
        param.requiredString('login', { description: "The user's requested login." }),
        param.requiredString('email', { description: "The user's email address." }),
        param.requiredString('firstName', { description: "The user's first name." }),
        param.requiredString('lastName', { description: "The user's last name." }),
        param.requiredString('password', { secret: true, description: "The user's requested password" }),
        param.flag('admin', false, { description: 'Whether this user should be a site administrator.' }),
      ],
      async handler({ params, services, principal, meta, req, res }) {
        const settingsOfNow = () => settingsNow(services);
        const callerIsAdmin = principal.user?.admin === true;
        if (!callerIsAdmin && settingValue(await settingsOfNow(), SettingKey.REGISTRATION_POLICY) === 'closed') {
          throw new RestError(
            'Registration on this instance is closed. Contact an administrator to create an account for you.',
          );
        }
        const userId = await registerUser(
          services,
          {
            login: params.login,
            email: params.email,
            firstName: params.firstName,
            lastName: params.lastName,
            password: params.password,
          },
          { admin: callerIsAdmin && params.admin },
          meta,
        );
        const user = await userAfterWrite(services, userId, 'registered');
        // Girder's createUser: the verification mail unless verification is disabled, the administrators' notice of
        // an account waiting for approval; both leave in the background.
        const settings = await settingsOfNow();
        if (settingValue(settings, SettingKey.EMAIL_VERIFICATION) !== 'disabled')
          await sendVerificationEmail(services, user, requestOrigin(req), { ...meta, userId: meta.userId ?? userId });
        if (user.status === 'pending') await sendApprovalNotice(services, user, requestOrigin(req));
        // Filtered for the caller, as Girder's filtermodel; an anonymous registrant becomes the caller (self view).
        const view = userView(user, principal.user ? principal.viewer : viewerOf(user));
        if (!principal.user && !loginRefusal(user, settings)) {
          const token = await issueToken(
            services.commands,
            { userId, days: await tokenLifetimeDays(services) },
            { ...meta, userId },
          );
          setTokenCookie(res, token.token, token.expires, req.secure);
          return { ...view, authToken: { token: token.token, expires: token.expires } };
        }
        return view;
      },
    }),
  ],
};
