import type { Request } from 'express';
import type { Services } from '../services';
import { verifyPassword } from '../domain/password';
import { FailureThrottle } from './failureThrottle';
import { TooManyRequestsError } from './tooManyRequests';

/**
 * Every check of a password a caller types (the login, the old password of a password change) goes through here:
 * it costs the same whether the account exists or not (a dummy hash, src/domain/password.ts), and repeated failures
 * are throttled per account and per client address (docs/security.md, "Logins and guessing"). A locked caller is
 * refused before any hash is computed, whatever the password, so a guess during the wait tells nothing.
 */

/** One throttle per service instance (the state is this process's; each process counts its own). */
const throttles = new WeakMap<Services, FailureThrottle>();

function throttleOf(services: Services): FailureThrottle {
  let throttle = throttles.get(services);
  if (!throttle) {
    const { loginFreeFailures, loginDelayMs, loginMaxDelayMs } = services.config;
    throttle = new FailureThrottle({
      freeFailures: loginFreeFailures,
      delayMs: loginDelayMs,
      maxDelayMs: loginMaxDelayMs,
    });
    throttles.set(services, throttle);
  }
  return throttle;
}

/**
 * Whom the check is about: a user's id, or for a name no user has, that name as typed (normalised), so that guesses
 * at unknown names are throttled exactly like guesses at known ones.
 */
export type PasswordAccount = { userId: string } | { unknownName: string };

/** The client's address as express reads it (`req.ip`: the socket's, or a trusted proxy's forwarded one). */
const addressOf = (req: Request): string => req.ip ?? req.socket.remoteAddress ?? 'unknown';

/**
 * Checks `password` against `passwordHash` (null: no such account) for the caller of `req`. Throws 429 while the
 * account or the address must wait; records the outcome.
 */
export async function checkPassword(
  services: Services,
  req: Request,
  account: PasswordAccount,
  passwordHash: string | null,
  password: string,
): Promise<boolean> {
  const throttle = throttleOf(services);
  const accountKey = 'userId' in account ? `user ${account.userId}` : `name ${account.unknownName}`;
  const keys = [accountKey, `address ${addressOf(req)}`];
  const waitMs = throttle.waitMs(keys);
  if (waitMs > 0) {
    const seconds = Math.ceil(waitMs / 1000);
    throw new TooManyRequestsError(
      `Too many failed password attempts. Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`,
      seconds,
    );
  }
  const valid = await verifyPassword(password, passwordHash);
  if (valid) throttle.succeeded(accountKey);
  else throttle.failed(keys);
  return valid;
}
