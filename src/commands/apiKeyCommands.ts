import type { CommandRunner } from './commandRunner';
import { toNewEvents } from './commandRunner';
import type { RequestMeta } from './requestMeta';
import { apiKeyDecider, apiKeyStream, type KeyChanges } from '../domain/apiKey';
import { decideOn } from '../domain/decider';
import { ValidationError } from '../domain/errors';
import { newId } from '../domain/ids';
import { girderTime } from '../domain/time';
import { generateToken } from './password';
import { prepareToken } from './userCommands';

export async function createApiKey(
  commands: CommandRunner,
  input: {
    userId: string;
    ownerIsAdmin: boolean;
    name: string;
    scope: unknown;
    tokenDuration: number | null;
    active: boolean;
  },
  meta: RequestMeta,
): Promise<string> {
  const apiKeyId = newId();
  const key = generateToken(40);
  const created = girderTime();
  await commands.decideOnStream(
    apiKeyStream(apiKeyId),
    apiKeyDecider,
    { type: 'CreateApiKey', data: { apiKeyId, key, created, ...input } },
    meta,
  );
  return apiKeyId;
}

export async function updateApiKey(
  commands: CommandRunner,
  apiKeyId: string,
  input: { ownerIsAdmin: boolean; changes: KeyChanges },
  meta: RequestMeta,
): Promise<void> {
  await commands.decideOnStream(apiKeyStream(apiKeyId), apiKeyDecider, { type: 'UpdateApiKey', data: input }, meta);
}

/** Deletes a key; the projection also drops every token it issued. */
export async function deleteApiKey(commands: CommandRunner, apiKeyId: string, meta: RequestMeta): Promise<void> {
  await commands.decideOnStream(apiKeyStream(apiKeyId), apiKeyDecider, { type: 'DeleteApiKey', data: {} }, meta);
}

/**
 * Issues a token from an API key (Girder's ApiKey.createToken): the lifetime is the requested number of days capped
 * by the key's `tokenDuration` (or the login token lifetime), the scope is the key's. Marking the key used and
 * issuing the token are one append guarded by the key's revision, so a key deactivated or deleted meanwhile issues
 * nothing.
 */
export async function tokenFromApiKey(
  commands: CommandRunner,
  input: { apiKeyId: string | null; days: number | undefined; defaultDays: number },
  meta: RequestMeta,
): Promise<{ userId: string; token: string; expires: string; scope: string[] }> {
  const { apiKeyId } = input;
  if (!apiKeyId) throw new ValidationError('Invalid API key.');
  return commands.run(async () => {
    const stream = await commands.load(apiKeyStream(apiKeyId), apiKeyDecider);
    const at = girderTime();
    const { events } = decideOn(apiKeyDecider, stream.state, { type: 'UseApiKey', data: { at } });
    if (stream.state.status !== 'active') throw new ValidationError('Invalid API key.');
    const key = stream.state.key;
    const cap = key.tokenDuration || input.defaultDays;
    const days = Math.min(input.days || cap, cap);
    const eventMeta = { ...meta, userId: meta.userId ?? key.userId };
    const token = prepareToken({ userId: key.userId, scope: key.scope, days, apiKeyId }, eventMeta);
    return {
      appends: [
        { streamId: apiKeyStream(apiKeyId), expectedState: stream.expected, events: toNewEvents(events, eventMeta) },
        token.append,
      ],
      result: { userId: key.userId, token: token.token, expires: token.expires, scope: token.scope },
    };
  });
}
