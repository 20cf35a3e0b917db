import type { StreamAppend } from '../ports/eventStore';
import type { CommandRunner } from './commandRunner';
import { toNewEvents } from './commandRunner';
import type { RequestMeta } from './requestMeta';
import {
  FIRST_USER_STREAM,
  userDecider,
  userStream,
  validateRegistration,
  type RegistrationInput,
  type UserEvent,
} from '../domain/user';
import { decideOn } from '../domain/decider';
import { claim, emailStream, loginStream, reservationDecider, siblingNameStream } from '../domain/uniqueName';
import { ValidationError } from '../domain/errors';
import { newId } from '../domain/ids';
import { girderTime } from '../domain/time';
import { AccessLevel, emptyAccess, withUserAccess } from '../domain/access';
import { folderDecider, folderStateFor, folderStream } from '../domain/folder';
import { hashToken, tokenEvent, tokenStream } from '../domain/token';
import { generateToken, hashPassword } from './password';
import { Scope } from '../domain/scopes';
import { SettingKey, settingValue } from '../domain/settings';
import { currentSettings } from './settingsCommands';

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
  commands: CommandRunner,
  input: RegistrationInput,
  options: { admin: boolean },
  meta: RequestMeta,
): Promise<string> {
  const valid = validateRegistration(input);
  const passwordHash = await hashPassword(valid.password);
  const userId = newId();
  return commands.run(async () => {
    const login = await commands.load(loginStream(valid.login), reservationDecider);
    if (login.state.owner) throw new ValidationError('That login is already registered.', 'login');
    const email = await commands.load(emailStream(valid.email), reservationDecider);
    if (email.state.owner) throw new ValidationError('That email is already registered.', 'email');
    const first = await commands.load(FIRST_USER_STREAM, reservationDecider);
    const isFirst = !first.state.owner;
    const settings = await currentSettings(commands);
    const defaultFolders =
      settingValue(settings, SettingKey.USER_DEFAULT_FOLDERS) === 'public_private' ? DEFAULT_FOLDERS : [];
    const admin = isFirst || options.admin;
    // Registration policy `approve`: the account waits for an administrator (Girder's createUser; admins never wait).
    const pending = !admin && settingValue(settings, SettingKey.REGISTRATION_POLICY) === 'approve';
    const created = girderTime();
    const eventMeta = { ...meta, userId: meta.userId ?? userId };
    const { events: registered } = decideOn(userDecider, userDecider.initialState(), {
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
    const appends: StreamAppend[] = [
      {
        streamId: loginStream(valid.login),
        expectedState: login.expected,
        events: toNewEvents([claim(valid.login, 'user', userId)], eventMeta),
      },
      {
        streamId: emailStream(valid.email),
        expectedState: email.expected,
        events: toNewEvents([claim(valid.email, 'user', userId)], eventMeta),
      },
      { streamId: userStream(userId), expectedState: 'no_stream', events: toNewEvents(registered, eventMeta) },
    ];
    if (isFirst) {
      appends.push({
        streamId: FIRST_USER_STREAM,
        expectedState: 'no_stream',
        events: toNewEvents([claim('first-user', 'user', userId)], eventMeta),
      });
    }
    for (const folder of defaultFolders) {
      const folderId = newId();
      const { events: createdFolder } = decideOn(folderDecider, folderStateFor(folderId), {
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
      appends.push(
        {
          streamId: siblingNameStream(userId, folder.name),
          expectedState: 'no_stream',
          events: toNewEvents([claim(folder.name, 'folder', folderId)], eventMeta),
        },
        { streamId: folderStream(folderId), expectedState: 'no_stream', events: toNewEvents(createdFolder, eventMeta) },
      );
    }
    return { appends, result: userId };
  });
}

/** A token ready to be appended: the clear token for the caller and the stream append that records its hash. */
export interface PreparedToken {
  token: string;
  expires: string;
  scope: string[];
  append: StreamAppend;
}

/** Builds a token (64 random characters; only its SHA-256 is recorded) and the append that issues it. */
export function prepareToken(
  options: { userId?: string; scope?: string[] | null; days: number; apiKeyId?: string },
  meta: RequestMeta,
): PreparedToken {
  const token = generateToken();
  const hash = hashToken(token);
  const now = new Date();
  const expires = girderTime(new Date(now.getTime() + options.days * 86_400_000));
  const scope = [...new Set(options.scope ?? [Scope.USER_AUTH])];
  const event = tokenEvent({
    type: 'TokenIssued',
    data: {
      hash,
      ...(options.userId !== undefined ? { userId: options.userId } : {}),
      scope,
      created: girderTime(now),
      expires,
      ...(options.apiKeyId ? { apiKeyId: options.apiKeyId } : {}),
    },
  });
  return {
    token,
    expires,
    scope,
    append: { streamId: tokenStream(hash), expectedState: 'no_stream', events: toNewEvents([event], meta) },
  };
}

/** Issues a login token for a user, or (no `userId`) an anonymous session token. */
export async function issueToken(
  commands: CommandRunner,
  options: { userId?: string; scope?: string[]; days: number },
  meta: RequestMeta,
): Promise<{ token: string; expires: string; scope: string[] }> {
  const prepared = prepareToken(options, meta);
  await commands.run(async () => ({ appends: [prepared.append], result: undefined }));
  return { token: prepared.token, expires: prepared.expires, scope: prepared.scope };
}

export async function revokeToken(commands: CommandRunner, hash: string, meta: RequestMeta): Promise<void> {
  const event = tokenEvent({ type: 'TokenRevoked', data: { hash } });
  await commands.run(async () => ({
    appends: [{ streamId: tokenStream(hash), expectedState: 'any', events: toNewEvents([event], meta) }],
    result: undefined,
  }));
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
  await commands.run(async () => {
    const stream = await commands.load(userStream(userId), userDecider);
    if (!stream.state.registered || stream.state.deleted) throw new ValidationError(`No such user: ${userId}`, 'id');
    const changed: UserEvent = { type: 'UserPasswordChanged', data: { userId, passwordHash } };
    return {
      appends: [{ streamId: userStream(userId), expectedState: stream.expected, events: toNewEvents([changed], meta) }],
      result: undefined,
    };
  });
}
