import type { Response } from 'express';

/** The login cookie: `serviceToken`, path `/`, expiring with the token (Secure over https). */
export function setTokenCookie(res: Response, token: string, expires: string, secure: boolean): void {
  res.cookie('serviceToken', token, { path: '/', expires: new Date(expires), secure, sameSite: 'lax' });
}

export function clearTokenCookie(res: Response): void {
  res.clearCookie('serviceToken', { path: '/' });
  res.clearCookie('girderToken', { path: '/' });
}
