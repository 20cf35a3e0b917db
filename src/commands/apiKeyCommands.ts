import type { CommandRunner } from './commandRunner';
import type { RequestMeta } from './requestMeta';
import { apiKeyDecider, apiKeyStream, type KeyChanges } from '../domain/apiKey';
import { ValidationError } from '../domain/errors';
import { newId } from '../domain/ids';
import { girderTime } from '../domain/time';
import { generateToken } from '../domain/password';
import { tokenIssue } from './userCommands';

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
  await commands.handle(apiKeyStream(apiKeyId), apiKeyDecider, meta, (apiKey) =>
    apiKey.decide({ type: 'CreateApiKey', data: { apiKeyId, key, created, ...input } }),
  );
  return apiKeyId;
}

export async function updateApiKey(
  commands: CommandRunner,
  apiKeyId: string,
  input: { ownerIsAdmin: boolean; changes: KeyChanges },
  meta: RequestMeta,
): Promise<void> {
  await commands.handle(apiKeyStream(apiKeyId), apiKeyDecider, meta, (apiKey) =>
    apiKey.decide({ type: 'UpdateApiKey', data: input }),
  );
}

/** Deletes a key; the projection also drops every token it issued. */
export async function deleteApiKey(commands: CommandRunner, apiKeyId: string, meta: RequestMeta): Promise<void> {
  await commands.handle(apiKeyStream(apiKeyId), apiKeyDecider, meta, (apiKey) =>
    apiKey.decide({ type: 'DeleteApiKey', data: {} }),
  );
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
  return commands.handleGroup(meta, async (attempt) => {
    const apiKey = await attempt.load(apiKeyStream(apiKeyId), apiKeyDecider);
    const at = girderTime();
    apiKey.decide({ type: 'UseApiKey', data: { at } });
    if (apiKey.state.status !== 'active') throw new ValidationError('Invalid API key.');
    const key = apiKey.state.key;
    const cap = key.tokenDuration || input.defaultDays;
    const days = Math.min(input.days || cap, cap);
    const token = tokenIssue(attempt, { userId: key.userId, scope: key.scope, days, apiKeyId });
    return {
      append: [apiKey, token.stream],
      // A request without a user (the key is the credential) records the key's owner as the events' user.
      meta: { ...meta, userId: meta.userId ?? key.userId },
      result: { userId: key.userId, token: token.token, expires: token.expires, scope: token.scope },
    };
  });
}
