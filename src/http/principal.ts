import type { TokenDoc, UserDoc } from '../ports/readModel';
import type { Viewer } from '../domain/access';

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
