import { startApi, type ApiClient, type TestUser } from '../support/apiClient';

const KEY_FIELDS = [
  '_accessLevel',
  '_id',
  '_modelType',
  'active',
  'created',
  'key',
  'lastUse',
  'name',
  'scope',
  'tokenDuration',
  'userId',
];

describe('API keys', () => {
  let api: ApiClient;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;

  const createKey = async (user: TestUser, params: Record<string, string> = {}) => {
    const res = await api.as(user).post('/api_key').type('form').send(params);
    if (res.status !== 200) throw new Error(`createKey: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { _id: string; key: string; name: string };
  };
  const tokenFor = (key: string, extra: Record<string, string> = {}) =>
    api
      .anonymous()
      .post('/api_key/token')
      .type('form')
      .send({ key, ...extra });
  const daysUntil = (iso: string) => (Date.parse(iso) - Date.now()) / 86_400_000;

  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin');
    alice = await api.createUser('alice');
    bob = await api.createUser('bobby');
  });
  afterAll(() => api.close());

  describe('POST /api_key', () => {
    it('needs a logged-in user', async () => {
      const res = await api.anonymous().post('/api_key').type('form').send({ name: 'x' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: 'You must be logged in.', type: 'access' });
    });

    it('creates an active, unscoped key by default', async () => {
      const res = await api.as(alice).post('/api_key').type('form').send({});
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(KEY_FIELDS);
      expect(res.body).toMatchObject({
        _modelType: 'api_key',
        _accessLevel: 2,
        name: '',
        scope: null,
        tokenDuration: null,
        active: true,
        lastUse: null,
        userId: alice._id,
      });
      expect(res.body._id).toMatch(/^[0-9a-f]{24}$/);
      expect(res.body.key).toMatch(/^[A-Za-z0-9]{40}$/);
      expect(res.body.created).toMatch(/\+00:00$/);
    });

    it('takes a stripped name, a scope list, a token duration and the active flag', async () => {
      const res = await api.as(alice).post('/api_key').type('form').send({
        name: '  Backup job  ',
        scope: '["core.data.read", "core.data.write"]',
        tokenDuration: '7',
        active: 'false',
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        name: 'Backup job',
        scope: ['core.data.read', 'core.data.write'],
        tokenDuration: 7,
        active: false,
      });
    });

    it("takes the web client's form: scope null (full access) and a blank token duration (none)", async () => {
      const res = await api
        .as(alice)
        .post('/api_key')
        .type('form')
        .send({ name: 'web', scope: 'null', tokenDuration: '', targetUserId: '' });
      expect([res.status, res.body.message]).toEqual([200, undefined]);
      expect(res.body).toMatchObject({ name: 'web', scope: null, tokenDuration: null, active: true });
      const scoped = await api
        .as(alice)
        .put(`/api_key/${res.body._id}`)
        .type('form')
        .send({ scope: '["core.data.read"]', tokenDuration: '5' });
      expect([scoped.status, scoped.body.scope, scoped.body.tokenDuration]).toEqual([200, ['core.data.read'], 5]);
      // Blank clears the duration, as Girder's update stores the falsy value as None.
      const cleared = await api.as(alice).put(`/api_key/${res.body._id}`).type('form').send({ tokenDuration: '' });
      expect([cleared.status, cleared.body.tokenDuration]).toEqual([200, null]);
      const full = await api.as(alice).put(`/api_key/${res.body._id}`).type('form').send({ scope: 'null' });
      expect([full.status, full.body.scope]).toEqual([200, null]);
    });

    it('validates the scope parameter and the scopes, and the duration', async () => {
      const cases: [Record<string, string>, unknown][] = [
        [{ scope: 'core.data.read' }, { message: 'Parameter scope must be valid JSON.', type: 'rest' }],
        [{ scope: '{"a": 1}' }, { message: 'Scope must be a list, or None.', type: 'validation' }],
        [{ scope: '"core.data.read"' }, { message: 'Scope must be a list, or None.', type: 'validation' }],
        [{ scope: '[]' }, { message: 'Custom scope list must not be empty.', type: 'validation' }],
        [
          { scope: '["core.user_auth", "bogus", "core.data.read"]' },
          { message: 'Invalid scopes: core.user_auth,bogus.', type: 'validation' },
        ],
        [{ scope: '["core.setting.read"]' }, { message: 'Invalid scopes: core.setting.read.', type: 'validation' }],
        [
          { tokenDuration: 'week' },
          { message: 'Invalid value for integer parameter tokenDuration: week.', type: 'rest' },
        ],
      ];
      for (const [params, body] of cases) {
        const res = await api.as(alice).post('/api_key').type('form').send(params);
        expect({ params, status: res.status, body: res.body }).toEqual({ params, status: 400, body });
      }
      // Admin-only scopes are grantable by site administrators.
      const adminKey = await api
        .as(admin)
        .post('/api_key')
        .type('form')
        .send({ scope: '["core.setting.read", "core.data.read"]' });
      expect(adminKey.status).toBe(200);
      expect(adminKey.body.scope).toEqual(['core.setting.read', 'core.data.read']);
    });
  });

  describe('GET /api_key', () => {
    let carol: TestUser;
    beforeAll(async () => {
      carol = await api.createUser('carol');
      for (const name of ['beta', 'alpha', 'gamma']) await createKey(carol, { name });
    });

    it("lists the caller's keys sorted by name, with paging", async () => {
      const all = await api.as(carol).get('/api_key');
      expect(all.status).toBe(200);
      expect(all.body.map((k: { name: string }) => k.name)).toEqual(['alpha', 'beta', 'gamma']);
      for (const key of all.body) {
        expect(Object.keys(key).sort()).toEqual(KEY_FIELDS);
        expect(key.userId).toBe(carol._id);
      }
      const page = await api.as(carol).get('/api_key?limit=1&offset=1&sortdir=-1');
      expect(page.body.map((k: { name: string }) => k.name)).toEqual(['beta']);
      const self = await api.as(carol).get(`/api_key?userId=${carol._id}`);
      expect(self.body).toHaveLength(3);
    });

    it("lets only site admins list another user's keys", async () => {
      const denied = await api.as(bob).get(`/api_key?userId=${carol._id}`);
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({ message: 'Administrator access required.', type: 'access' });
      const byAdmin = await api.as(admin).get(`/api_key?userId=${carol._id}`);
      expect(byAdmin.status).toBe(200);
      expect(byAdmin.body.map((k: { name: string }) => k.name)).toEqual(['alpha', 'beta', 'gamma']);
      const unknown = await api.as(admin).get('/api_key?userId=0123456789abcdef01234567');
      expect(unknown.status).toBe(400);
      expect(unknown.body).toEqual({
        message: 'No such user: 0123456789abcdef01234567',
        type: 'validation',
        field: 'id',
      });
      const anonymous = await api.anonymous().get('/api_key');
      expect(anonymous.status).toBe(401);
    });
  });

  describe('PUT and DELETE /api_key/:id', () => {
    it('updates only the given fields, for the owner or a site admin', async () => {
      const key = await createKey(alice, { name: 'editable', scope: '["core.data.read"]' });
      const renamed = await api.as(alice).put(`/api_key/${key._id}`).type('form').send({ name: '  renamed ' });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({
        _id: key._id,
        name: 'renamed',
        scope: ['core.data.read'],
        active: true,
        tokenDuration: null,
        key: key.key,
      });
      const rescoped = await api
        .as(admin)
        .put(`/api_key/${key._id}`)
        .type('form')
        .send({ scope: '["core.data.own"]', tokenDuration: '3' });
      expect(rescoped.status).toBe(200);
      expect(rescoped.body).toMatchObject({
        name: 'renamed',
        scope: ['core.data.own'],
        tokenDuration: 3,
        userId: alice._id,
      });
      const badScope = await api.as(alice).put(`/api_key/${key._id}`).type('form').send({ scope: '[]' });
      expect(badScope.status).toBe(400);
      expect(badScope.body).toEqual({ message: 'Custom scope list must not be empty.', type: 'validation' });
    });

    it('refuses other users and unknown ids with the reference messages', async () => {
      const key = await createKey(alice, { name: 'private' });
      const put = await api.as(bob).put(`/api_key/${key._id}`).type('form').send({ name: 'mine now' });
      expect(put.status).toBe(403);
      expect(put.body).toEqual({
        message: `Write access denied for api_key ${key._id} (user ${bob._id}).`,
        type: 'access',
      });
      const del = await api.as(bob).delete(`/api_key/${key._id}`);
      expect(del.status).toBe(403);
      expect(del.body).toEqual({
        message: `Admin access denied for api_key ${key._id} (user ${bob._id}).`,
        type: 'access',
      });
      for (const id of ['0123456789abcdef01234567', 'not-an-id']) {
        const res = await api.as(alice).put(`/api_key/${id}`).type('form').send({ name: 'x' });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ message: `Invalid api_key id (${id}).`, type: 'rest' });
      }
      const anonymous = await api.anonymous().delete(`/api_key/${key._id}`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({ message: 'You must be logged in.', type: 'access' });
    });

    it('deletes a key and the tokens it issued', async () => {
      const key = await createKey(alice, { name: 'doomed' });
      const issued = await tokenFor(key.key);
      const t = issued.body.authToken.token as string;
      expect((await api.as(t).get('/user/me')).body.login).toBe('alice');
      const del = await api.as(alice).delete(`/api_key/${key._id}`);
      expect(del.status).toBe(200);
      expect(del.body).toEqual({ message: 'Deleted API key doomed.' });
      expect((await api.as(t).get('/user/me')).body).toBeNull();
      const again = await tokenFor(key.key);
      expect(again.status).toBe(400);
      expect(again.body).toEqual({ message: 'Invalid API key.', type: 'validation' });
      const gone = await api.as(alice).delete(`/api_key/${key._id}`);
      expect(gone.status).toBe(400);
      expect(gone.body).toEqual({ message: `Invalid api_key id (${key._id}).`, type: 'rest' });
      const listed = await api.as(alice).get('/api_key');
      expect(listed.body.map((k: { _id: string }) => k._id)).not.toContain(key._id);
    });

    it('deactivating a key revokes its tokens and stops it issuing more; reactivating restores issuing', async () => {
      const key = await createKey(alice, { name: 'switch' });
      const t = (await tokenFor(key.key)).body.authToken.token as string;
      const off = await api.as(alice).put(`/api_key/${key._id}`).type('form').send({ active: 'false' });
      expect(off.body.active).toBe(false);
      expect((await api.as(t).get('/user/me')).body).toBeNull();
      const refused = await tokenFor(key.key);
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ message: 'Invalid API key.', type: 'validation' });
      await api.as(alice).put(`/api_key/${key._id}`).type('form').send({ active: 'true' });
      const again = await tokenFor(key.key);
      expect(again.status).toBe(200);
      expect((await api.as(again.body.authToken.token).get('/user/me')).body.login).toBe('alice');
    });
  });

  describe('POST /api_key/token', () => {
    it('issues a full-access token from an unscoped key and records its use', async () => {
      const key = await createKey(bob, { name: 'cli' });
      const res = await tokenFor(`  ${key.key} `);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['authToken', 'user']);
      expect(res.body.user).toEqual({ _id: bob._id });
      expect(Object.keys(res.body.authToken).sort()).toEqual(['expires', 'scope', 'token']);
      expect(res.body.authToken.scope).toEqual(['core.user_auth']);
      expect(res.body.authToken.token).toMatch(/^[A-Za-z0-9]{64}$/);
      expect(daysUntil(res.body.authToken.expires)).toBeGreaterThan(179.9);
      expect(res.headers['set-cookie']).toBeUndefined();
      const me = await api.as(res.body.authToken.token).get('/user/me');
      expect(me.body.login).toBe('bobby');
      const listed = await api.as(bob).get('/api_key');
      const used = listed.body.find((k: { _id: string }) => k._id === key._id);
      expect(used.lastUse).toMatch(/\+00:00$/);
    });

    it("gives a scoped key's tokens exactly its scopes", async () => {
      const privateOne = await api.as(admin).post('/collection').type('form').send({ name: 'Hidden' });
      expect(privateOne.status).toBe(200);
      const key = await createKey(admin, { scope: '["core.data.read"]' });
      const res = await tokenFor(key.key);
      expect(res.body.authToken.scope).toEqual(['core.data.read']);
      const t = res.body.authToken.token as string;
      // Not a login (no core.user_auth)…
      expect((await api.as(t).get('/user/me')).body).toBeNull();
      // …but the admin on data.read routes.
      const listed = await api.as(t).get('/collection');
      expect(listed.body.map((c: { name: string }) => c.name)).toContain('Hidden');
      expect((await api.anonymous().get('/collection')).body.map((c: { name: string }) => c.name)).not.toContain(
        'Hidden',
      );
    });

    it("caps the requested duration by the key's tokenDuration, else by the login token lifetime", async () => {
      const capped = await createKey(alice, { tokenDuration: '2' });
      const long = await tokenFor(capped.key, { duration: '10' });
      expect(daysUntil(long.body.authToken.expires)).toBeGreaterThan(1.99);
      expect(daysUntil(long.body.authToken.expires)).toBeLessThanOrEqual(2);
      const short = await tokenFor(capped.key, { duration: '1' });
      expect(daysUntil(short.body.authToken.expires)).toBeLessThanOrEqual(1);
      expect(daysUntil(short.body.authToken.expires)).toBeGreaterThan(0.99);
      const uncapped = await createKey(alice);
      const five = await tokenFor(uncapped.key, { duration: '5' });
      expect(daysUntil(five.body.authToken.expires)).toBeGreaterThan(4.99);
      expect(daysUntil(five.body.authToken.expires)).toBeLessThanOrEqual(5);
      const tooLong = await tokenFor(uncapped.key, { duration: '1000' });
      expect(daysUntil(tooLong.body.authToken.expires)).toBeLessThanOrEqual(180);
      const bad = await tokenFor(uncapped.key, { duration: 'soon' });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ message: 'Invalid value for integer parameter duration: soon.', type: 'rest' });
    });

    it('refuses a missing or unknown key', async () => {
      const missing = await api.anonymous().post('/api_key/token').type('form').send({});
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ message: "Parameter 'key' is required.", type: 'rest' });
      for (const key of ['', 'x'.repeat(40)]) {
        const res = await tokenFor(key);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ message: 'Invalid API key.', type: 'validation' });
      }
    });

    it('never issues a token from a key deactivated concurrently', async () => {
      const key = await createKey(alice, { name: 'racy' });
      const [tokens, off] = await Promise.all([
        Promise.all(Array.from({ length: 6 }, () => tokenFor(key.key))),
        api.as(alice).put(`/api_key/${key._id}`).type('form').send({ active: 'false' }),
      ]);
      expect(off.status).toBe(200);
      for (const res of tokens) {
        if (res.status === 200) expect((await api.as(res.body.authToken.token).get('/user/me')).body).toBeNull();
        else expect(res.body).toEqual({ message: 'Invalid API key.', type: 'validation' });
      }
    });
  });
});
