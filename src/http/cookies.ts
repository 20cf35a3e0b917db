import type { Response } from 'express';

/**
 * The login cookie: `serviceToken`, path `/`, expiring with the token. HttpOnly (no script reads it: Girder's web
 * client keeps its token in localStorage and never reads the cookie), SameSite=Lax (not sent on another site's
 * sub-requests or form posts), Secure when the request came over HTTPS: `req.secure`, which reads
 * `X-Forwarded-Proto` only from a proxy TRUST_PROXY trusts (docs/security.md, "The session cookie").
 */
export function setTokenCookie(res: Response, token: string, expires: string, secure: boolean): void {
  res.cookie('serviceToken', token, { path: '/', expires: new Date(expires), httpOnly: true, secure, sameSite: 'lax' });
}

export function clearTokenCookie(res: Response): void {
  res.clearCookie('serviceToken', { path: '/' });
  res.clearCookie('girderToken', { path: '/' });
}
