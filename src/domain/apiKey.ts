import { z } from 'zod';
import { type Decider, type DomainEvent, unknownEvent } from './decider';
import { RestError, ValidationError } from './errors';

export const apiKeyStream = (id: string): string => `apikey-${id}`;

/**
 * Scopes an API key may carry (Girder's `TokenScope.scopeIds(admin)`): the registered user scopes, plus the
 * registered admin scopes when the key's owner is a site administrator. `core.user_auth` is not among them: a key
 * with no scope list (null) is what grants full access.
 */
const USER_KEY_SCOPES: readonly string[] = [
  'core.user_info.read',
  'core.data.read',
  'core.data.write',
  'core.data.own',
];
const ADMIN_KEY_SCOPES: readonly string[] = [
  'core.plugins.read',
  'core.setting.read',
  'core.assetstore.read',
  'core.partial_upload.read',
  'core.partial_upload.clean',
];

/**
 * The whole key as it stands after an event: every event carries it, so the read model never has to merge.
 * `key`: 40 random characters, shown to the owner like Girder does. `scope`: null = tokens get `core.user_auth`
 * (full access). `tokenDuration`: maximum lifetime in days of the tokens it issues; null = the login token lifetime.
 */
const ApiKeySnapshotSchema = z.object({
  apiKeyId: z.string(),
  userId: z.string(),
  name: z.string(),
  key: z.string(),
  scope: z.array(z.string()).nullable(),
  tokenDuration: z.number().nullable(),
  active: z.boolean(),
  created: z.string(),
  lastUse: z.string().nullable(),
});
const ApiKeyDeletedSchema = z.object({ apiKeyId: z.string(), userId: z.string() });

/** Not published (`/events/schema`): the snapshot holds the key's secret. */
const apiKeyEventSchemas = {
  ApiKeyCreated: ApiKeySnapshotSchema,
  ApiKeyUpdated: ApiKeySnapshotSchema,
  ApiKeyDeleted: ApiKeyDeletedSchema,
} as const;

export type ApiKeySnapshot = z.infer<typeof ApiKeySnapshotSchema>;

export type ApiKeyEvent =
  | DomainEvent<'ApiKeyCreated', ApiKeySnapshot>
  | DomainEvent<'ApiKeyUpdated', ApiKeySnapshot>
  | DomainEvent<'ApiKeyDeleted', z.infer<typeof ApiKeyDeletedSchema>>;

export type ApiKeyState = { status: 'none' } | { status: 'active' | 'deleted'; key: ApiKeySnapshot };

export interface KeyChanges {
  name?: string;
  /** null: full access again (what the web client sends for "Allow all actions"). */
  scope?: unknown;
  tokenDuration?: number;
  active?: boolean;
}

export type ApiKeyCommand =
  | {
      type: 'CreateApiKey';
      data: {
        apiKeyId: string;
        userId: string;
        ownerIsAdmin: boolean;
        key: string;
        created: string;
        name: string;
        scope: unknown;
        tokenDuration: number | null;
        active: boolean;
      };
    }
  | { type: 'UpdateApiKey'; data: { ownerIsAdmin: boolean; changes: KeyChanges } }
  /** Marks the key used (`lastUse`) when it issues a token: refused when the key is unknown or inactive. */
  | { type: 'UseApiKey'; data: { at: string } }
  | { type: 'DeleteApiKey'; data: Record<string, never> };

/**
 * Girder's ApiKey.validate: the scope (any JSON, as Girder's `jsonParam` takes it) is null (full access) or a
 * non-empty list of scopes the owner may grant.
 */
function validScope(scope: unknown, ownerIsAdmin: boolean): string[] | null {
  if (scope === null) return null;
  if (!Array.isArray(scope)) throw new ValidationError('Scope must be a list, or None.');
  if (scope.length === 0) throw new ValidationError('Custom scope list must not be empty.');
  const allowed = new Set([...USER_KEY_SCOPES, ...(ownerIsAdmin ? ADMIN_KEY_SCOPES : [])]);
  const unknown = [...new Set(scope.filter((s) => typeof s !== 'string' || !allowed.has(s)).map(String))];
  if (unknown.length > 0) throw new ValidationError(`Invalid scopes: ${unknown.join(',')}.`);
  return scope as string[];
}

/** Girder stores `float(tokenDuration)` when truthy and None otherwise, so 0 means "no cap of its own". */
const validDuration = (days: number | null | undefined): number | null => (days ? days : null);

export const apiKeyDecider: Decider<ApiKeyState, ApiKeyCommand, ApiKeyEvent> = {
  initialState: () => ({ status: 'none' }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'ApiKeyCreated':
      case 'ApiKeyUpdated':
        return { status: 'active', key: event.data };
      case 'ApiKeyDeleted':
        return state.status === 'none' ? state : { status: 'deleted', key: state.key };
      default:
        return unknownEvent(event, state);
    }
  },
  decide: (command, state) => {
    switch (command.type) {
      case 'CreateApiKey': {
        const d = command.data;
        if (state.status !== 'none') throw new RestError(`API key ${d.apiKeyId} already exists.`, 409);
        const key: ApiKeySnapshot = {
          apiKeyId: d.apiKeyId,
          userId: d.userId,
          name: d.name.trim(),
          key: d.key,
          scope: validScope(d.scope, d.ownerIsAdmin),
          tokenDuration: validDuration(d.tokenDuration),
          active: d.active,
          created: d.created,
          lastUse: null,
        };
        return [{ type: 'ApiKeyCreated', data: key }];
      }
      case 'UpdateApiKey': {
        if (state.status !== 'active') throw new ValidationError('Invalid API key.');
        const { changes, ownerIsAdmin } = command.data;
        const key: ApiKeySnapshot = {
          ...state.key,
          ...(changes.active !== undefined ? { active: changes.active } : {}),
          ...(changes.name !== undefined ? { name: changes.name.trim() } : {}),
          ...(changes.tokenDuration !== undefined ? { tokenDuration: validDuration(changes.tokenDuration) } : {}),
          scope: changes.scope !== undefined ? validScope(changes.scope, ownerIsAdmin) : state.key.scope,
        };
        return [{ type: 'ApiKeyUpdated', data: key }];
      }
      case 'UseApiKey':
        if (state.status !== 'active' || !state.key.active) throw new ValidationError('Invalid API key.');
        return [{ type: 'ApiKeyUpdated', data: { ...state.key, lastUse: command.data.at } }];
      case 'DeleteApiKey':
        if (state.status !== 'active') return [];
        return [{ type: 'ApiKeyDeleted', data: { apiKeyId: state.key.apiKeyId, userId: state.key.userId } }];
    }
  },
  eventSchemas: apiKeyEventSchemas,
};
