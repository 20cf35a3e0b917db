import type { Resource } from '../routeTable';
import { endSession } from '../endSession';
import { route } from '../routeTable';
import type { TokenDoc } from '../../ports/readModel';
import { AccessLevel } from '../../domain/access';
import { Scope, SCOPE_DESCRIPTIONS } from '../../domain/scopes';
import { issueToken } from '../../commands/userCommands';
import { presentedToken } from '../auth';
import { setTokenCookie } from '../cookies';
import { tokenLifetimeDays } from '../../queries/settingQueries';

/**
 * A token as Girder answers its document: `_id` is the token itself (only its SHA-256 is stored here, so it is the
 * value the caller presented), a user's token carries that user's ADMIN access, an anonymous one is public.
 */
function tokenView(token: TokenDoc, presented: string): Record<string, unknown> {
  const owner =
    token.userId === undefined
      ? { public: true }
      : {
          userId: token.userId,
          access: { groups: [], users: [{ id: token.userId, level: AccessLevel.ADMIN, flags: [] }] },
        };
  return {
    _id: presented,
    created: token.created,
    expires: token.expires,
    scope: token.scope,
    ...owner,
    ...(token.apiKeyId ? { apiKeyId: token.apiKeyId } : {}),
  };
}

/** Girder's `token` resource: the caller's own session token and the scopes an API key may be given. */
export const tokenResource: Resource = {
  name: 'token',
  description: 'Session tokens and token scopes.',
  routes: [
    route({
      method: 'GET',
      path: 'current',
      summary: 'Retrieve the current session information.',
      access: 'public',
      params: [],
      handler({ req, rawParams, principal }) {
        const presented = presentedToken(req, rawParams, false);
        return principal.token && presented ? tokenView(principal.token, presented) : null;
      },
    }),
    route({
      method: 'GET',
      path: 'session',
      summary: 'Get an anonymous session token for the system.',
      access: 'public',
      params: [],
      // A caller who presents a valid token (a login's, say) gets that one back; anyone else a new anonymous
      // session token, also set as the cookie (Girder's sendAuthTokenCookie with the anonymous session scope).
      async handler({ req, res, rawParams, principal, services, meta }) {
        const presented = presentedToken(req, rawParams, false);
        if (principal.token && presented) return { token: presented, expires: principal.token.expires };
        const token = await issueToken(
          services.commands,
          { scope: [Scope.ANONYMOUS_SESSION], days: await tokenLifetimeDays(services) },
          meta,
        );
        setTokenCookie(res, token.token, token.expires, req.secure);
        return { token: token.token, expires: token.expires };
      },
    }),
    route({
      method: 'DELETE',
      path: 'session',
      summary: 'Remove a session from the system.',
      access: 'token',
      params: [],
      // `token` access mode: any valid token (a login's, an API key's, an anonymous session's) may delete itself.
      async handler(ctx) {
        await endSession(ctx);
        return { message: 'Session deleted.' };
      },
    }),
    route({
      method: 'GET',
      path: 'scopes',
      summary: 'List all token scopes available in the system.',
      access: 'public',
      params: [],
      handler: () => SCOPE_DESCRIPTIONS,
    }),
  ],
};
