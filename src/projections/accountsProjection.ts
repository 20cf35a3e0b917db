import type { Projection } from './projection';
import type { UserRegisteredData } from '../domain/user';
import type { TokenIssuedData } from '../domain/token';

export const accountsProjection: Projection = {
  handlers: {
    UserRegistered: (event, tx) => {
      const d = event.data as UserRegisteredData;
      tx.users.put({
        _id: d.userId, login: d.login, email: d.email, firstName: d.firstName, lastName: d.lastName, admin: d.admin,
        public: d.public, created: d.created, size: 0, groups: [], groupInvites: [], status: 'enabled',
        emailVerified: d.admin, access: d.access, passwordHash: d.passwordHash,
      });
    },
    TokenIssued: (event, tx) => {
      const d = event.data as TokenIssuedData;
      tx.tokens.put({ hash: d.hash, userId: d.userId, scope: d.scope, created: d.created, expires: d.expires, ...(d.apiKeyId ? { apiKeyId: d.apiKeyId } : {}) });
    },
    TokenRevoked: (event, tx) => tx.tokens.delete((event.data as { hash: string }).hash),
  },
};
