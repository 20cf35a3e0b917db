import type { CommandRunner } from './commandRunner';
import type { AnyDecidedStream, CommandAttempt } from './streamHandle';
import type { RequestMeta } from './requestMeta';
import { ValidationError } from '../domain/errors';
import { claimValue, emailStream, loginStream, releaseValue, reservationDecider } from '../domain/uniqueName';
import { userDeciderFor, userStream, type UserCommand, type UserStatus } from '../domain/user';
import { reclaimBlobs } from './blobReclaim';
import type { BlobDeps } from './writeDeps';

/** Runs one command on a user's stream (an unknown or deleted user → `Invalid user id`), plus any other streams. */
async function onUser(
  commands: CommandRunner,
  userId: string,
  command: UserCommand,
  meta: RequestMeta,
  more: (
    attempt: CommandAttempt,
    state: { login: string; email: string },
  ) => Promise<AnyDecidedStream[]> = async () => [],
): Promise<void> {
  await commands.handleGroup(meta, async (attempt) => {
    const user = await attempt.load(userStream(userId), userDeciderFor(userId));
    const before = user.state;
    user.decide(command);
    return { append: [user, ...(await more(attempt, before))], result: undefined };
  });
}

export interface ProfileChange {
  firstName: string;
  lastName: string;
  email: string;
  admin: boolean;
  status: UserStatus;
}

/**
 * `PUT /user/:id`, once the route has applied Girder's rules (who may change `admin` and `status`) and validated the
 * fields: a new e-mail address is claimed (`That email is already registered.` when another user holds it) and the
 * old one released, in the same append as the profile.
 */
export async function updateProfile(
  commands: CommandRunner,
  userId: string,
  profile: ProfileChange,
  meta: RequestMeta,
): Promise<void> {
  await onUser(commands, userId, { type: 'UpdateProfile', data: profile }, meta, async (attempt, state) => {
    if (state.email === profile.email) return [];
    const taken = await attempt.load(emailStream(profile.email), reservationDecider);
    if (taken.state.owner && taken.state.owner.id !== userId)
      throw new ValidationError('That email is already registered.', 'email');
    const old = await attempt.load(emailStream(state.email), reservationDecider);
    taken.decide(claimValue(profile.email, 'user', userId));
    old.decide(releaseValue(userId));
    return [taken, old];
  });
}

/** `PUT /user/:id/verification`: the address is verified (the token that proved it is revoked by the caller). */
export const verifyEmail = (commands: CommandRunner, userId: string, meta: RequestMeta): Promise<void> =>
  onUser(commands, userId, { type: 'VerifyEmail' }, meta);

/** `POST /user/:id/otp`: records a new TOTP key, not yet required at login. */
export const startOtp = (commands: CommandRunner, userId: string, key: string, meta: RequestMeta): Promise<void> =>
  onUser(commands, userId, { type: 'StartOtp', data: { key } }, meta);

/** `PUT /user/:id/otp`, once a code from the key checked out: logins need a code from now on. */
export const enableOtp = (commands: CommandRunner, userId: string, meta: RequestMeta): Promise<void> =>
  onUser(commands, userId, { type: 'EnableOtp' }, meta);

/** `DELETE /user/:id/otp`. */
export const removeOtp = (commands: CommandRunner, userId: string, meta: RequestMeta): Promise<void> =>
  onUser(commands, userId, { type: 'RemoveOtp' }, meta);

/**
 * `DELETE /user/:id` (Girder's `User.remove`): the user, its tokens, memberships and everything under its folders go;
 * its login and e-mail are released for new accounts; the bytes no file references any more are reclaimed after.
 */
export async function deleteUser(deps: BlobDeps, userId: string, meta: RequestMeta): Promise<void> {
  const { commands } = deps;
  let blobIds: string[] = [];
  await onUser(commands, userId, { type: 'DeleteUser' }, meta, async (attempt, state) => {
    const login = await attempt.load(loginStream(state.login), reservationDecider);
    const email = await attempt.load(emailStream(state.email), reservationDecider);
    // The read models reflect everything appended so far, so the files read below are the latest.
    await deps.projector.waitFor(await deps.eventStore.headPosition());
    blobIds = await deps.readModel.files.blobIdsUnderRoot(userId);
    login.decide(releaseValue(userId));
    email.decide(releaseValue(userId));
    return [login, email];
  });
  await reclaimBlobs(deps, blobIds);
}
