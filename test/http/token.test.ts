import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { issueToken } from '../../src/commands/userCommands';
import { systemMeta } from '../../src/commands/requestMeta';

const EXPECTED_SCOPES = {
  custom: [
    {
      id: 'core.user_info.read',
      name: 'Read your user information',
      description: 'Allows clients to look up your user information, including private fields such as email address.',
    },
    {
      id: 'core.data.read',
      name: 'Read data',
      description: 'Allows clients to read all data that you have access to.',
    },
    {
      id: 'core.data.write',
      name: 'Write data',
      description: 'Allows clients to edit data in the hierarchy and create new data anywhere you have write access.',
    },
    {
      id: 'core.data.own',
      name: 'Data ownership',
      description: 'Allows administrative control on data you own, including setting access control and deletion.',
    },
  ],
  adminCustom: [
    {
      id: 'core.plugins.read',
      name: 'See installed plugins',
      description: 'Allows clients to see the list of plugins installed on the server.',
    },
    {
      id: 'core.setting.read',
      name: 'See system setting values',
      description: 'Allows clients to view the value of any system setting.',
    },
    {
      id: 'core.assetstore.read',
      name: 'View assetstores',
      description: 'Allows clients to see all assetstore information.',
    },
    {
      id: 'core.partial_upload.read',
      name: 'View unfinished uploads.',
      description: 'Allows clients to see all partial uploads.',
    },
    {
      id: 'core.partial_upload.clean',
      name: 'Remove unfinished uploads.',
      description: 'Allows clients to remove unfinished uploads.',
    },
  ],
};

const NO_TOKEN = { message: 'You must be logged in or have a valid auth token.', type: 'access' };

describe('token routes', () => {
  let api: ApiClient;
  let alice: TestUser;
  const login = async (name: string) =>
    (await api.anonymous().get('/user/authentication').auth(name, 'password1')).body.authToken.token as string;
  const anonymousSession = async () => (await api.anonymous().get('/token/session')).body.token as string;

  beforeAll(async () => {
    api = await startApi();
    await api.createUser('admin');
    alice = await api.createUser('alice');
  });
  afterAll(() => api.close());

  describe('GET /token/scopes', () => {
    it("lists Girder's describable scopes, to anyone", async () => {
      const res = await api.anonymous().get('/token/scopes');
      expect(res.status).toBe(200);
      expect(res.body).toEqual(EXPECTED_SCOPES);
    });
  });

  describe('GET /token/current', () => {
    it('answers null without a token, and for a token that does not exist', async () => {
      for (const caller of [null, 'x'.repeat(64)]) {
        const res = await api.as(caller).get('/token/current');
        expect(res.status).toBe(200);
        expect(res.text).toBe('null');
      }
    });

    it("answers a user's token document: the token as _id, its scope, owner and the owner's ADMIN access", async () => {
      const res = await api.as(alice).get('/token/current');
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['_id', 'access', 'created', 'expires', 'scope', 'userId']);
      expect(res.body).toMatchObject({
        _id: alice.token,
        scope: ['core.user_auth'],
        userId: alice._id,
        access: { groups: [], users: [{ id: alice._id, level: 2, flags: [] }] },
      });
      expect(Date.parse(res.body.expires)).toBeGreaterThan(Date.parse(res.body.created));
    });

    it('answers a scoped token too (the route needs no scope)', async () => {
      const scoped = await issueToken(
        api.runtime.services.commands,
        { userId: alice._id, scope: ['core.data.read'], days: 1 },
        systemMeta('test'),
      );
      const res = await api.as(scoped.token).get('/token/current');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ _id: scoped.token, scope: ['core.data.read'], userId: alice._id });
    });
  });

  describe('GET /token/session', () => {
    it('gives an anonymous caller a new anonymous session token, as the answer and as the cookie', async () => {
      const res = await api.anonymous().get('/token/session');
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['expires', 'token']);
      expect(res.body.token).toMatch(/^[A-Za-z0-9]{64}$/);
      const days = (Date.parse(res.body.expires) - Date.now()) / 86_400_000;
      expect(days).toBeGreaterThan(179.9);
      expect(days).toBeLessThanOrEqual(180);
      expect(res.headers['set-cookie'][0]).toMatch(new RegExp(`^serviceToken=${res.body.token}; Path=/; Expires=`));
      const again = await api.anonymous().get('/token/session');
      expect(again.body.token).not.toBe(res.body.token);
    });

    it('makes a public token with the anonymous session scope, that identifies nobody', async () => {
      const token = await anonymousSession();
      const current = await api.as(token).get('/token/current');
      expect(current.status).toBe(200);
      expect(Object.keys(current.body).sort()).toEqual(['_id', 'created', 'expires', 'public', 'scope']);
      expect(current.body).toMatchObject({ _id: token, public: true, scope: ['core.anonymous_session'] });
      const me = await api.as(token).get('/user/me');
      expect(me.status).toBe(200);
      expect(me.text).toBe('null');
      const details = await api.as(token).get('/user/details');
      expect(details.status).toBe(401);
      expect(details.body).toEqual({ message: 'You must be logged in.', type: 'access' });
    });

    it('gives a caller with a valid token that token back, without a cookie', async () => {
      const res = await api.as(alice).get('/token/session');
      expect(res.status).toBe(200);
      const current = await api.as(alice).get('/token/current');
      expect(res.body).toEqual({ token: alice.token, expires: current.body.expires });
      expect(res.headers['set-cookie']).toBeUndefined();
      const token = await anonymousSession();
      const same = await api.as(token).get('/token/session');
      expect(same.body.token).toBe(token);
    });
  });

  describe('DELETE /token/session', () => {
    it('answers 401 without a valid token', async () => {
      for (const caller of [null, 'x'.repeat(64)]) {
        const res = await api.as(caller).delete('/token/session');
        expect(res.status).toBe(401);
        expect(res.body).toEqual(NO_TOKEN);
      }
    });

    it('revokes a login token and clears the cookie', async () => {
      const token = await login('alice');
      const res = await api.as(token).delete('/token/session');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: 'Session deleted.' });
      expect((res.headers['set-cookie'] as unknown as string[]).join('\n')).toMatch(/^serviceToken=;/m);
      expect((await api.as(token).get('/token/current')).text).toBe('null');
      expect((await api.as(token).get('/user/me')).text).toBe('null');
      expect((await api.as(token).delete('/token/session')).body).toEqual(NO_TOKEN);
      // Alice's other token still works.
      expect((await api.as(alice).get('/user/me')).body.login).toBe('alice');
    });

    it('revokes an anonymous session token', async () => {
      const token = await anonymousSession();
      const res = await api.as(token).delete('/token/session');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: 'Session deleted.' });
      expect((await api.as(token).get('/token/current')).text).toBe('null');
    });
  });
});
