import type { UserDoc } from '../ports/readModel';
import { AccessDeniedError } from '../domain/errors';
import { totpCounter, totpMatches } from '../domain/totp';

/**
 * The time step of each user's last accepted code (Girder keeps it in its rate-limit cache, per process): a code is
 * refused while the clock has not moved to a later step, so one code never logs in twice.
 */
const lastAcceptedStep = new Map<string, number>();

/** Girder's `User.verifyOtp`: the code must match the user's key, and not be of a step already used. */
export function verifyOtp(user: UserDoc, code: string, nowMs = Date.now()): void {
  const key = user.otp?.key;
  if (!key || !totpMatches(key, code, nowMs))
    throw new AccessDeniedError('One-time password validation failed: Token did not match');
  const step = totpCounter(nowMs);
  const last = lastAcceptedStep.get(user._id);
  if (last !== undefined && step <= last)
    throw new AccessDeniedError(
      'One-time password validation failed: Token has already been used, please wait for another.',
    );
  lastAcceptedStep.set(user._id, step);
}
