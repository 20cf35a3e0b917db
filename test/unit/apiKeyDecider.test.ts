import { deciderSpec } from '../support/givenWhenThen';
import { apiKeyDecider, type ApiKeyCommand, type ApiKeySnapshot } from '../../src/domain/apiKey';

const { given } = deciderSpec(apiKeyDecider);

const key: ApiKeySnapshot = {
  apiKeyId: 'k1', userId: 'u1', name: 'cli', key: 'K'.repeat(40), scope: null, tokenDuration: null, active: true,
  created: '2024-01-01T00:00:00+00:00', lastUse: null,
};
const create = (overrides: Partial<Extract<ApiKeyCommand, { type: 'CreateApiKey' }>['data']> = {}): ApiKeyCommand => ({
  type: 'CreateApiKey',
  data: {
    apiKeyId: 'k1', userId: 'u1', ownerIsAdmin: false, key: key.key, created: key.created, name: ' cli ', scope: null, tokenDuration: null,
    active: true, ...overrides,
  },
});

describe('API key decider', () => {
  it('creates a key with a stripped name; a zero duration means none', () => {
    given([]).when(create({ tokenDuration: 0 })).then([{ type: 'ApiKeyCreated', data: key }]);
  });

  it('refuses empty and unregistered scopes; admin scopes only for admins', () => {
    given([]).when(create({ scope: [] })).thenRefuses('Custom scope list must not be empty.');
    given([]).when(create({ scope: ['core.data.read', 'core.user_auth', 7] })).thenRefuses('Invalid scopes: core.user_auth,7.');
    given([]).when(create({ scope: ['core.plugins.read'] })).thenRefuses('Invalid scopes: core.plugins.read.');
    given([]).when(create({ scope: ['core.plugins.read'], ownerIsAdmin: true }))
      .then([{ type: 'ApiKeyCreated', data: { ...key, scope: ['core.plugins.read'] } }]);
  });

  it('updates only the given fields, carrying the whole key', () => {
    given([{ type: 'ApiKeyCreated', data: key }])
      .when({ type: 'UpdateApiKey', data: { ownerIsAdmin: false, changes: { active: false, tokenDuration: 3 } } })
      .then([{ type: 'ApiKeyUpdated', data: { ...key, active: false, tokenDuration: 3 } }]);
  });

  it('marks use of an active key only', () => {
    const at = '2024-02-02T00:00:00+00:00';
    given([{ type: 'ApiKeyCreated', data: key }]).when({ type: 'UseApiKey', data: { at } }).then([{ type: 'ApiKeyUpdated', data: { ...key, lastUse: at } }]);
    given([{ type: 'ApiKeyCreated', data: { ...key, active: false } }]).when({ type: 'UseApiKey', data: { at } }).thenRefuses('Invalid API key.');
    given([]).when({ type: 'UseApiKey', data: { at } }).thenRefuses('Invalid API key.');
    given([{ type: 'ApiKeyCreated', data: key }, { type: 'ApiKeyDeleted', data: { apiKeyId: 'k1', userId: 'u1' } }])
      .when({ type: 'UseApiKey', data: { at } }).thenRefuses('Invalid API key.');
  });

  it('deletes once', () => {
    given([{ type: 'ApiKeyCreated', data: key }]).when({ type: 'DeleteApiKey', data: {} }).then([{ type: 'ApiKeyDeleted', data: { apiKeyId: 'k1', userId: 'u1' } }]);
    given([{ type: 'ApiKeyCreated', data: key }, { type: 'ApiKeyDeleted', data: { apiKeyId: 'k1', userId: 'u1' } }]).when({ type: 'DeleteApiKey', data: {} }).then([]);
  });
});
