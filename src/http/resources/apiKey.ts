import { model } from '../modelParams';
import type { Resource } from '../routeTable';
import { route } from '../routeTable';
import { requireApiKeys } from '../featureSettings';
import { DURATION_DAYS, pagingOf, pagingParams, param } from '../params';
import { API_KEY_SORT } from '../../queries/sortableFields';
import { AccessLevel } from '../../domain/access';
import { createApiKey, deleteApiKey, tokenFromApiKey, updateApiKey } from '../../commands/apiKeyCommands';
import { signedInUser } from '../principal';
import { apiKeyByValue, currentApiKey, listApiKeys, ownerIsAdmin } from '../../queries/apiKeyQueries';
import { tokenLifetimeDays } from '../../queries/settingQueries';

/** Any JSON, as Girder's `jsonParam` (no `requireArray`): null is full access; the decider checks the rest. */
const scopeParam = () => param.json('scope', { description: 'JSON list of scopes for this key.' });

export const apiKeyResource: Resource = {
  name: 'api_key',
  description: 'API keys for scoped, long-lived access.',
  routes: [
    route({
      method: 'GET',
      path: '',
      summary: 'List API keys for a given user.',
      access: 'user',
      params: [
        param.string('userId', { description: 'ID of the user whose keys to list.' }),
        ...pagingParams(API_KEY_SORT),
      ],
      models: {
        owner: model.optionalParam('user', 'userId', AccessLevel.READ, { missing: 'no-such', othersSiteAdmin: true }),
      },
      async handler({ params, models: { owner }, services, principal, setTotalCount }) {
        const userId = owner?._id ?? signedInUser(principal)._id;
        const page = await listApiKeys(services, userId, pagingOf(params));
        setTotalCount(page.total);
        return page.rows;
      },
    }),
    route({
      method: 'POST',
      path: '',
      summary: 'Create a new API key.',
      access: 'user',
      params: [
        param.string('name', { default: '', strip: true, description: 'Name for the API key.' }),
        scopeParam(),
        // Girder's is a string stored as None when falsy: blank (the web client's empty field) is 0, no cap of its own.
        param.int('tokenDuration', {
          range: DURATION_DAYS,
          blankAs: 0,
          description: 'Max number of days tokens created with this key will last (1 to 36525).',
        }),
        param.flag('active', true, { description: 'Whether the key is currently active.' }),
      ],
      async handler({ params, services, principal, meta }) {
        const me = signedInUser(principal);
        await requireApiKeys(services);
        const id = await createApiKey(
          services.commands,
          {
            userId: me._id,
            ownerIsAdmin: me.admin,
            name: params.name ?? '',
            scope: params.scope ?? null,
            tokenDuration: params.tokenDuration ?? null,
            active: params.active,
          },
          meta,
        );
        return currentApiKey(services, id);
      },
    }),
    route({
      method: 'POST',
      path: 'token',
      summary: 'Create a token from an API key.',
      access: 'public',
      params: [
        param.requiredString('key', { strip: true, secret: true, description: 'The API key.' }),
        param.int('duration', {
          range: DURATION_DAYS,
          description: 'Number of days that the token should last (1 to 36525).',
        }),
      ],
      async handler({ params, services, meta }) {
        await requireApiKeys(services);
        const key = await apiKeyByValue(services, params.key);
        const token = await tokenFromApiKey(
          services.commands,
          { apiKeyId: key?._id ?? null, days: params.duration, defaultDays: await tokenLifetimeDays(services) },
          meta,
        );
        // Like a login, without the full user document: the key may not allow reading user information.
        return {
          user: { _id: token.userId },
          authToken: { token: token.token, expires: token.expires, scope: token.scope },
        };
      },
    }),
    route({
      method: 'PUT',
      path: ':id',
      summary: 'Update an API key.',
      access: 'user',
      params: [
        param.string('name', { strip: true, description: 'Name for the key.' }),
        scopeParam(),
        // Girder's is a string stored as None when falsy: blank (the web client's empty field) is 0, no cap of its own.
        param.int('tokenDuration', {
          range: DURATION_DAYS,
          blankAs: 0,
          description: 'Max number of days tokens created with this key will last (1 to 36525).',
        }),
        param.bool('active', { description: 'Whether the key is currently active.' }),
      ],
      models: { key: model.path('api_key', AccessLevel.WRITE) },
      async handler({ params, models: { key }, services, meta }) {
        await updateApiKey(
          services.commands,
          key._id,
          {
            ownerIsAdmin: await ownerIsAdmin(services, key.userId),
            changes: {
              name: params.name,
              scope: params.scope,
              tokenDuration: params.tokenDuration,
              active: params.active,
            },
          },
          meta,
        );
        return currentApiKey(services, key._id);
      },
    }),
    route({
      method: 'DELETE',
      path: ':id',
      summary: 'Delete an API key.',
      access: 'user',
      params: [],
      models: { key: model.path('api_key', AccessLevel.ADMIN) },
      async handler({ models: { key }, services, meta }) {
        await deleteApiKey(services.commands, key._id, meta);
        return { message: `Deleted API key ${key.name}.` };
      },
    }),
  ],
};
