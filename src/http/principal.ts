import type { TokenDoc, UserDoc } from '../ports/readModel';
import type { Viewer } from '../domain/access';
import { AccessDeniedError } from '../domain/errors';

/**
 * Who is calling: the user (null = anonymous) and the token they presented, if it is valid. Its own module so that
 * the route table (which hands it to handlers) and auth (which resolves it from a route's declaration) need not
 * import each other.
 */
export interface Principal {
  user: UserDoc | null;
  token: TokenDoc | null;
  viewer: Viewer | null;
}

export const ANONYMOUS: Principal = { user: null, token: null, viewer: null };

/**
 * The user calling a route whose access mode needs one (`user`, `admin`): `checkAccessMode` has refused anyone else
 * before the handler runs, so this turns that guarantee into a type (and a 401, not a crash, if it ever broke).
 */
export function signedInUser(principal: Principal): UserDoc {
  if (!principal.user) throw new AccessDeniedError('You must be logged in.');
  return principal.user;
}

/** The caller's viewer on a route whose access mode needs a user (see {@link signedInUser}). */
export function signedInViewer(principal: Principal): Viewer {
  if (!principal.viewer) throw new AccessDeniedError('You must be logged in.');
  return principal.viewer;
}
