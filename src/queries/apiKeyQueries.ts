import type { ApiKeyDoc } from '../ports/readModel';
import type { Paging } from '../domain/paging';
import { RestError } from '../domain/errors';
import type { ReadModelDeps } from './readDeps';

/** Read-side functions of the API-key routes; they touch the read model's API keys and users only. */
type Deps = ReadModelDeps<'apiKeys' | 'users'>;

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
  deps: Deps,
  userId: string,
  paging: Paging,
): Promise<{ rows: Record<string, unknown>[]; total: number }> {
  const page = await deps.readModel.apiKeys.listForUser(userId, paging);
  return { rows: page.rows.map(apiKeyView), total: page.total };
}

/** A key's view re-read after a write (a concurrent delete may have removed it since). */
export async function currentApiKey(deps: Deps, id: string): Promise<Record<string, unknown>> {
  const key = await deps.readModel.apiKeys.get(id);
  if (!key) throw new RestError(`Invalid api_key id (${id}).`);
  return apiKeyView(key);
}

/** The key a client presents for a token, if any. */
export async function apiKeyByValue(deps: Deps, key: string): Promise<ApiKeyDoc | null> {
  return deps.readModel.apiKeys.getByKey(key);
}

/** Whether a key's owner is a site administrator (whose keys may carry any scope). */
export async function ownerIsAdmin(deps: Deps, userId: string): Promise<boolean> {
  return (await deps.readModel.users.get(userId))?.admin === true;
}
