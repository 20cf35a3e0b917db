import type { Request } from 'express';
import type { TokenDoc, UserDoc } from '../ports/readModel';
import type { Viewer } from '../domain/access';
import type { Services } from '../services';
import { AccessDeniedError } from '../domain/errors';
import type { RouteDef } from './routeTable';
import { Scope } from '../domain/scopes';
import { ANONYMOUS, type Principal } from './principal';
import { TOKEN_PARAM } from './secrets';

export const viewerOf = (user: UserDoc | null): Viewer | null =>
  user ? { id: user._id, admin: user.admin, groups: user.groups } : null;

function parseCookies(header: string | undefined): Record<string, string> {
  // A Map, not an object indexed by the cookie's name: `__proto__` or `constructor` are names like any other.
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    try {
      if (!cookies.has(name)) cookies.set(name, decodeURIComponent(value));
    } catch {
      /* a malformed cookie is no token */
    }
  }
  return Object.fromEntries(cookies);
}

/**
 * The token a request presents: the `token` parameter, then the `Service-Token` header (alias `Girder-Token`),
 * then, only on routes that accept cookies, the `serviceToken` cookie (alias `girderToken`). Empty = none.
 */
export function presentedToken(req: Request, rawParams: Record<string, string>, cookieAllowed: boolean): string | null {
  const candidates = [rawParams[TOKEN_PARAM], req.get('Service-Token'), req.get('Girder-Token')];
  if (cookieAllowed) {
    const cookies = parseCookies(req.headers.cookie);
    candidates.push(cookies.serviceToken, cookies.girderToken);
  }
  return candidates.find((value) => typeof value === 'string' && value.length > 0) ?? null;
}

export const tokenHasScopes = (token: TokenDoc, scopes: string[]): boolean =>
  token.scope.includes(Scope.USER_AUTH) || scopes.every((s) => token.scope.includes(s));

const unexpired = (doc: TokenDoc | null): TokenDoc | null => (doc && Date.parse(doc.expires) > Date.now() ? doc : null);

/** A token that works, with its user (none for an anonymous session token); or nothing. */
export type ActiveCaller = { token: TokenDoc; user: UserDoc | null } | { token: null; user: null };
const NO_CALLER: ActiveCaller = { token: null, user: null };

/**
 * The presented token and its user, if the token exists, has not expired, and belongs to a user who still exists and
 * is not disabled (or to no user: an anonymous session token); else nothing. Checked on every request (the account cache forgets a changed user at once,
 * src/queries/accountCache.ts), so the tokens of a deleted or disabled user stop working on the next request, on
 * every route and on the notification socket alike.
 */
export async function activeCaller(services: Services, presented: string | null): Promise<ActiveCaller> {
  if (!presented) return NO_CALLER;
  const caller = await services.accounts.caller(presented);
  const token = unexpired(caller.token);
  if (!token) return NO_CALLER;
  if (token.userId === undefined) return { token, user: null };
  if (!caller.user || caller.user.status === 'disabled') return NO_CALLER;
  return { token, user: caller.user };
}

/**
 * Resolves the caller once per request (firing `auth.user.get`, whose listener may supply the user). A token that
 * lacks the route's scopes identifies nobody: the request goes on as anonymous (Girder's behaviour).
 */
export async function resolvePrincipal(
  services: Services,
  req: Request,
  route: RouteDef,
  rawParams: Record<string, string>,
): Promise<Principal> {
  const { token, user } = await activeCaller(services, presentedToken(req, rawParams, route.cookie === true));
  const hook = await services.hooks.trigger('auth.user.get', { token });
  if (hook.defaultPrevented && hook.responses.length > 0) {
    const hooked = hook.responses[0] as UserDoc | null;
    return { user: hooked, token, viewer: viewerOf(hooked) };
  }
  if (!token) return ANONYMOUS;
  const required = route.scope ?? [Scope.USER_AUTH];
  if (!tokenHasScopes(token, required)) return { user: null, token, viewer: null };
  return { user, token, viewer: viewerOf(user) };
}

/** The route's access mode, checked before any parameter (Girder's access decorators). */
export function checkAccessMode(route: RouteDef, principal: Principal): void {
  switch (route.access) {
    case 'public':
      return;
    case 'user':
      if (!principal.user) throw new AccessDeniedError('You must be logged in.');
      return;
    case 'token': {
      if (!principal.token) throw new AccessDeniedError('You must be logged in or have a valid auth token.');
      const required = route.scope ?? [];
      if (!tokenHasScopes(principal.token, required)) {
        throw new AccessDeniedError(
          `Invalid token scope.\nRequired: ${required.join(' ')}.\nAllowed: ${principal.token.scope.join(' ')}`,
        );
      }
      return;
    }
    case 'admin':
    default:
      if (!principal.user?.admin) throw new AccessDeniedError('Administrator access required.');
  }
}
