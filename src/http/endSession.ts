import type { RouteContext } from './routeTable';
import { revokeToken } from '../commands/userCommands';
import { clearTokenCookie } from './cookies';

/** Logout and `DELETE /token/session`: the presented token is revoked (an event) and the login cookies cleared. */
export async function endSession({ principal, services, meta, res }: RouteContext): Promise<void> {
  if (principal.token) await revokeToken(services.commands, principal.token.hash, meta);
  clearTokenCookie(res);
}
