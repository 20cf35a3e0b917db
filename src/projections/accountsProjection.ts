import { projectionOf } from './projection';
import type { UserEvent } from '../domain/user';
import type { TokenEvent } from '../domain/token';
import type { ApiKeyEvent, ApiKeySnapshot } from '../domain/apiKey';
import type { ApiKeyDoc, ReadModelTx } from '../ports/readModel';

function putApiKey(tx: ReadModelTx, d: ApiKeySnapshot): void {
  const doc: ApiKeyDoc = {
    _id: d.apiKeyId,
    userId: d.userId,
    name: d.name,
    key: d.key,
    scope: d.scope,
    tokenDuration: d.tokenDuration,
    active: d.active,
    created: d.created,
    lastUse: d.lastUse,
  };
  tx.apiKeys.put(doc);
}

export const accountsProjection = projectionOf<UserEvent | TokenEvent | ApiKeyEvent>({
  UserRegistered: (event, tx) => {
    const d = event.data;
    tx.users.put({
      _id: d.userId,
      login: d.login,
      email: d.email,
      firstName: d.firstName,
      lastName: d.lastName,
      admin: d.admin,
      public: d.public,
      created: d.created,
      size: 0,
      groups: [],
      groupInvites: [],
      status: 'enabled',
      emailVerified: d.emailVerified ?? d.admin,
      access: d.access,
      passwordHash: d.passwordHash,
    });
  },
  UserPasswordChanged: (event, tx) => tx.users.setPasswordHash(event.data.userId, event.data.passwordHash),
  TokenIssued: (event, tx) => {
    const d = event.data;
    tx.tokens.put({
      hash: d.hash,
      ...(d.userId !== undefined ? { userId: d.userId } : {}),
      scope: d.scope,
      created: d.created,
      expires: d.expires,
      ...(d.apiKeyId ? { apiKeyId: d.apiKeyId } : {}),
    });
  },
  TokenRevoked: (event, tx) => tx.tokens.delete(event.data.hash),
  ApiKeyCreated: (event, tx) => putApiKey(tx, event.data),
  ApiKeyUpdated: (event, tx) => {
    const d = event.data;
    putApiKey(tx, d);
    // Deactivating a key revokes the tokens it issued (Girder's ApiKey.validate → Token.clearForApiKey).
    if (!d.active) tx.tokens.deleteForApiKey(d.apiKeyId);
  },
  ApiKeyDeleted: (event, tx) => {
    const { apiKeyId } = event.data;
    tx.tokens.deleteForApiKey(apiKeyId);
    tx.apiKeys.delete(apiKeyId);
  },
});
