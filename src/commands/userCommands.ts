import type { CommandRunner } from './commandRunner';
import type { AnyDecidedStream, CommandAttempt, DecidedStream } from './streamHandle';
import type { RequestMeta } from './requestMeta';
import {
  FIRST_USER_STREAM,
  userDecider,
  userStream,
  userDeciderFor,
  validateRegistration,
  type RegistrationInput,
} from '../domain/user';
import { claimValue, emailStream, loginStream, reservationDecider, siblingNameStream } from '../domain/uniqueName';
import { ValidationError } from '../domain/errors';
import { newId } from '../domain/ids';
import { girderTime } from '../domain/time';
import { AccessLevel, emptyAccess, withUserAccess } from '../domain/access';
import { folderDecider, folderStateFor, folderStream } from '../domain/folder';
import {
  hashToken,
  tokenDecider,
  tokenStream,
  type TokenCommand,
  type TokenEvent,
  type TokenState,
} from '../domain/token';
import { generateToken, hashPassword } from '../domain/password';
import { Scope } from '../domain/scopes';
import { SettingKey, settingValue } from '../domain/settings';
import { settingsNow } from '../queries/settingQueries';
import type { LogDeps } from '../queries/readDeps';
import type { HandleDeps } from './writeDeps';

/** The default folders each new user gets while `core.user_default_folders` is `public_private` (the default). */
const DEFAULT_FOLDERS = [
  { name: 'Public', public: true },
  { name: 'Private', public: false },
];

/**
 * Registers a user: login, email and the first-user bootstrap are reservation streams appended atomically with the
 * user's events and its default folders, so concurrent registrations cannot share a login or both become admin.
 */
export async function registerUser(
  deps: HandleDeps & LogDeps,
  input: RegistrationInput,
  options: { admin: boolean },
  meta: RequestMeta,
): Promise<string> {
  const valid = validateRegistration(input);
  const passwordHash = await hashPassword(valid.password);
  const userId = newId();
  // The events of a self-registration name the new user as their user.
  return deps.commands.handleGroup({ ...meta, userId: meta.userId ?? userId }, async (attempt) => {
    const login = await attempt.load(loginStream(valid.login), reservationDecider);
    if (login.state.owner) throw new ValidationError('That login is already registered.', 'login');
    const email = await attempt.load(emailStream(valid.email), reservationDecider);
    if (email.state.owner) throw new ValidationError('That email is already registered.', 'email');
    const first = await attempt.load(FIRST_USER_STREAM, reservationDecider);
    const isFirst = !first.state.owner;
    const settings = await settingsNow(deps);
    const defaultFolders =
      settingValue(settings, SettingKey.USER_DEFAULT_FOLDERS) === 'public_private' ? DEFAULT_FOLDERS : [];
    const admin = isFirst || options.admin;
    // Registration policy `approve`: the account waits for an administrator (Girder's createUser; admins never wait).
    const pending = !admin && settingValue(settings, SettingKey.REGISTRATION_POLICY) === 'approve';
    const created = girderTime();
    const user = attempt.create(userStream(userId), userDecider);
    user.decide({
      type: 'RegisterUser',
      data: {
        userId,
        login: valid.login,
        email: valid.email,
        firstName: valid.firstName,
        lastName: valid.lastName,
        admin,
        emailVerified: isFirst,
        ...(pending ? { status: 'pending' as const } : {}),
        passwordHash,
        created,
      },
    });
    login.decide(claimValue(valid.login, 'user', userId));
    email.decide(claimValue(valid.email, 'user', userId));
    const append: AnyDecidedStream[] = [login, email, user];
    if (isFirst) {
      // Created, not as read: of two first registrations racing, the second conflicts here and is not admin.
      const firstUser = attempt.create(FIRST_USER_STREAM, reservationDecider);
      firstUser.decide(claimValue('first-user', 'user', userId));
      append.push(firstUser);
    }
    for (const folder of defaultFolders) {
      const folderId = newId();
      const name = attempt.create(siblingNameStream(userId, folder.name), reservationDecider);
      name.decide(claimValue(folder.name, 'folder', folderId));
      const home = attempt.create(folderStream(folderId), folderDecider, folderStateFor(folderId));
      home.decide({
        type: 'CreateFolder',
        data: {
          folderId,
          name: folder.name,
          description: '',
          parentType: 'user',
          parentId: userId,
          creatorId: userId,
          created,
          public: folder.public,
          access: withUserAccess(emptyAccess(), userId, AccessLevel.ADMIN),
        },
      });
      append.push(name, home);
    }
    return { append, result: userId };
  });
}

/** A token decided on its new stream within an attempt, and the clear token for the caller. */
export interface TokenIssue {
  token: string;
  expires: string;
  scope: string[];
  stream: DecidedStream<TokenState, TokenCommand, TokenEvent>;
}

/** Makes a token (64 random characters; only its SHA-256 is recorded) and decides its issue on a stream of its own. */
export function tokenIssue(
  attempt: CommandAttempt,
  options: { userId?: string; scope?: string[] | null; days: number; apiKeyId?: string },
): TokenIssue {
  const token = generateToken();
  const hash = hashToken(token);
  const now = new Date();
  const expires = girderTime(new Date(now.getTime() + options.days * 86_400_000));
  const scope = [...new Set(options.scope ?? [Scope.USER_AUTH])];
  const stream = attempt.create(tokenStream(hash), tokenDecider);
  stream.decide({
    type: 'IssueToken',
    data: {
      hash,
      ...(options.userId !== undefined ? { userId: options.userId } : {}),
      scope,
      created: girderTime(now),
      expires,
      ...(options.apiKeyId ? { apiKeyId: options.apiKeyId } : {}),
    },
  });
  return { token, expires, scope, stream };
}

/** Issues a login token for a user, or (no `userId`) an anonymous session token. */
export async function issueToken(
  commands: CommandRunner,
  options: { userId?: string; scope?: string[]; days: number },
  meta: RequestMeta,
): Promise<{ token: string; expires: string; scope: string[] }> {
  return commands.handleGroup(meta, async (attempt) => {
    const issued = tokenIssue(attempt, options);
    return { append: [issued.stream], result: { token: issued.token, expires: issued.expires, scope: issued.scope } };
  });
}

export async function revokeToken(commands: CommandRunner, hash: string, meta: RequestMeta): Promise<void> {
  await commands.handleGroup(meta, async (attempt) => {
    // `any`: a revocation needs nothing of the token's stream, and is recorded whatever it holds.
    const token = attempt.at(tokenStream(hash), tokenDecider, 'any');
    token.decide({ type: 'RevokeToken', data: { hash } });
    return { append: [token], result: undefined };
  });
}

/** `PUT /user/password`: a new password (Girder's length rule and message) for a registered user. */
export async function changePassword(
  commands: CommandRunner,
  userId: string,
  password: string,
  meta: RequestMeta,
): Promise<void> {
  if (!/^[^\n]{6}/.test(password)) throw new ValidationError('Password must be at least 6 characters.', 'password');
  const passwordHash = await hashPassword(password);
  await commands.handle(userStream(userId), userDeciderFor(userId), meta, (user) => {
    if (!user.state.registered || user.state.deleted) throw new ValidationError(`No such user: ${userId}`, 'id');
    user.decide({ type: 'ChangePassword', data: { passwordHash } });
  });
}
