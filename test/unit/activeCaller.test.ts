import type { Services } from '../../src/services';
import type { TokenDoc, UserDoc } from '../../src/ports/readModel';
import { activeCaller } from '../../src/http/auth';

/**
 * Rule 5 of issue 27: the tokens of a deleted or disabled user stop working at once. This service has no route that
 * deletes or disables a user yet (Girder's `DELETE /user/:id`, `PUT /user/:id/status`), so the rule is checked where
 * every request (and the notification socket) resolves its caller, with the account reads stubbed: whatever the read
 * model says now about the token's user decides.
 */
const token: TokenDoc = {
  hash: 'h',
  userId: 'u1',
  scope: ['core.user_auth'],
  created: '2026-01-01T00:00:00.000Z',
  expires: '2999-01-01T00:00:00.000Z',
};
const user = { _id: 'u1', login: 'alice', status: 'enabled', admin: false, groups: [] } as unknown as UserDoc;

function servicesWith(caller: { token: TokenDoc | null; user: UserDoc | null }): Services {
  return { accounts: { caller: () => Promise.resolve(caller) } } as unknown as Services;
}

describe('activeCaller', () => {
  it('resolves a valid token of an enabled user', async () => {
    expect(await activeCaller(servicesWith({ token, user }), 'presented')).toEqual({ token, user });
  });

  it.each([
    ['whose user was deleted', { token, user: null }],
    ['whose user is disabled', { token, user: { ...user, status: 'disabled' as const } }],
    ['that expired', { token: { ...token, expires: '2000-01-01T00:00:00.000Z' }, user }],
    ['that does not exist', { token: null, user: null }],
  ])('identifies nobody with a token %s', async (_what, caller) => {
    expect(await activeCaller(servicesWith(caller), 'presented')).toEqual({ token: null, user: null });
  });

  it('identifies nobody without a token', async () => {
    expect(await activeCaller(servicesWith({ token, user }), null)).toEqual({ token: null, user: null });
  });
});
