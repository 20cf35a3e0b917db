import type { ApiKeyDoc, ReadModelQueries } from '../ports/readModel';
import type { Paging } from '../domain/paging';
import { RestError } from '../domain/errors';

/** Read-side functions of the API-key routes; they need only the read model's queries. */
type Reads = Pick<ReadModelQueries, 'apiKeys' | 'users'>;

/** Filtered API key (Girder exposes these fields at READ; only the owner and site admins ever see a key). */
function apiKeyView(key: ApiKeyDoc): Record<string, unknown> {
  return {
    _id: key._id,
    _modelType: 'api_key',
    _accessLevel: 2,
    name: key.name,
    key: key.key,
    scope: key.scope,
    tokenDuration: key.tokenDuration,
    active: key.active,
    created: key.created,
    lastUse: key.lastUse,
    userId: key.userId,
  };
}

/** `GET /api_key`: a user's keys, one page, with the total. */
export async function listApiKeys(
  reads: Reads,
  userId: string,
  paging: Paging,
): Promise<{ rows: Record<string, unknown>[]; total: number }> {
  const page = await reads.apiKeys.listForUser(userId, paging);
  return { rows: page.rows.map(apiKeyView), total: page.total };
}

/** A key's view re-read after a write (a concurrent delete may have removed it since). */
export async function currentApiKey(reads: Reads, id: string): Promise<Record<string, unknown>> {
  const key = await reads.apiKeys.get(id);
  if (!key) throw new RestError(`Invalid api_key id (${id}).`);
  return apiKeyView(key);
}

/** The key a client presents for a token, if any. */
export async function apiKeyByValue(reads: Reads, key: string): Promise<ApiKeyDoc | null> {
  return reads.apiKeys.getByKey(key);
}

/** Whether a key's owner is a site administrator (whose keys may carry any scope). */
export async function ownerIsAdmin(reads: Reads, userId: string): Promise<boolean> {
  return (await reads.users.get(userId))?.admin === true;
}
