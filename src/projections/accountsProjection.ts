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
      status: d.status ?? 'enabled',
      emailVerified: d.emailVerified ?? d.admin,
      access: d.access,
      passwordHash: d.passwordHash,
    });
  },
  UserPasswordChanged: (event, tx) => tx.users.setPasswordHash(event.data.userId, event.data.passwordHash),
  UserProfileUpdated: (event, tx) => {
    const { userId, ...profile } = event.data;
    tx.users.update(userId, profile);
  },
  UserEmailVerified: (event, tx) => tx.users.update(event.data.userId, { emailVerified: true }),
  UserOtpStarted: (event, tx) =>
    tx.users.update(event.data.userId, { otp: { enabled: false, key: event.data.otp.key } }),
  UserOtpEnabled: (event, tx) =>
    tx.users.update(event.data.userId, { otp: { enabled: true, key: event.data.otp.key } }),
  UserOtpRemoved: (event, tx) => tx.users.update(event.data.userId, { otp: null }),
  UserDeleted: (event, tx) => {
    const { userId } = event.data;
    // Everything under the user goes with it in this one transaction (as a collection's delete), then its tokens,
    // memberships and the user itself; the bytes are reclaimed after the commit (deleteUser in userCommands.ts).
    tx.subtree.deleteUnderRoot('user', userId, event.position);
    tx.tokens.deleteForUser(userId);
    tx.users.delete(userId);
  },
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
