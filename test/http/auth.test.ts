import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { route, type Resource } from '../../src/http/routeTable';
import { issueToken } from '../../src/commands/userCommands';
import { systemMeta } from '../../src/commands/requestMeta';
import { Scope } from '../../src/domain/scopes';

/** Test-only routes: who the router thinks the caller is, with and without cookie acceptance and scopes. */
const whoAmI = ({ principal }: { principal: { user: { login: string } | null } }) => ({
  login: principal.user?.login ?? null,
});
const probe: Resource = {
  name: 'authprobe',
  description: 'Test-only probe of token resolution.',
  routes: [
    route({
      method: 'GET',
      path: 'cookie',
      summary: 'Accepts cookies.',
      access: 'public',
      cookie: true,
      params: [],
      handler: whoAmI,
    }),
    route({ method: 'GET', path: 'plain', summary: 'Ignores cookies.', access: 'public', params: [], handler: whoAmI }),
    route({
      method: 'GET',
      path: 'read',
      summary: 'Needs data.read.',
      access: 'user',
      scope: [Scope.DATA_READ],
      params: [],
      handler: whoAmI,
    }),
    route({
      method: 'GET',
      path: 'token',
      summary: 'Token mode.',
      access: 'token',
      scope: [Scope.DATA_WRITE],
      params: [],
      handler: whoAmI,
    }),
  ],
};

const SELF_FIELDS = [
  '_accessLevel',
  '_id',
  '_modelType',
  'admin',
  'created',
  'email',
  'emailVerified',
  'firstName',
  'groupInvites',
  'groups',
  'lastName',
  'login',
  'otp',
  'public',
  'size',
  'status',
].sort();

describe('authentication and tokens', () => {
  let api: ApiClient;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  const token = (userId: string, scope?: string[], days = 1) =>
    issueToken(api.runtime.services.commands, { userId, scope, days }, systemMeta('test')).then((t) => t.token);

  beforeAll(async () => {
    api = await startApi({}, { resources: [probe] });
    admin = await api.createUser('admin');
    alice = await api.createUser('alice', { email: 'Alice.Smith@Example.com' });
    bob = await api.createUser('bobby');
  });
  afterAll(() => api.close());

  describe('GET /user/authentication', () => {
    it('logs in with HTTP Basic and answers the user, a new token and a cookie', async () => {
      const res = await api.anonymous().get('/user/authentication').auth('alice', 'password1');
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['authToken', 'message', 'user']);
      expect(res.body.message).toBe('Login succeeded.');
      expect(Object.keys(res.body.user).sort()).toEqual(SELF_FIELDS);
      expect(res.body.user).toMatchObject({ _id: alice._id, login: 'alice', _accessLevel: 2 });
      expect(Object.keys(res.body.authToken).sort()).toEqual(['expires', 'scope', 'token']);
      expect(res.body.authToken.scope).toEqual(['core.user_auth']);
      expect(res.body.authToken.token).toMatch(/^[A-Za-z0-9]{64}$/);
      expect(res.body.authToken.token).not.toBe(alice.token);
      const days = (Date.parse(res.body.authToken.expires) - Date.now()) / 86_400_000;
      expect(days).toBeGreaterThan(179.9);
      expect(days).toBeLessThanOrEqual(180);
      expect(res.headers['set-cookie'][0]).toMatch(
        new RegExp(`^serviceToken=${res.body.authToken.token}; Path=/; Expires=`),
      );
      const me = await api.as(res.body.authToken.token).get('/user/me');
      expect(me.body.login).toBe('alice');
    });

    it('accepts the email (any case, surrounding spaces) as login, and Girder-Authorization as the header', async () => {
      const byEmail = await api.anonymous().get('/user/authentication').auth(' ALICE.smith@example.com ', 'password1');
      expect(byEmail.status).toBe(200);
      expect(byEmail.body.user.login).toBe('alice');
      const basic = `Basic ${Buffer.from('bobby:password1').toString('base64')}`;
      const fallback = await api.anonymous().get('/user/authentication').set('Girder-Authorization', basic);
      expect(fallback.status).toBe(200);
      expect(fallback.body.user.login).toBe('bobby');
    });

    it('splits the credentials on the first colon', async () => {
      const user = await api.createUser('colonuser', { password: 'pass:word:1' });
      const res = await api.anonymous().get('/user/authentication').auth('colonuser', 'pass:word:1');
      expect(res.status).toBe(200);
      expect(res.body.user._id).toBe(user._id);
    });

    it('answers 401 rest "Use HTTP Basic Authentication" without a Basic header', async () => {
      // 'Basic ' loses its trailing space in transit (header values are trimmed), so it is not Basic either.
      for (const header of [undefined, 'Bearer abc', 'basic YWxpY2U6cGFzc3dvcmQx', '', 'Basic ']) {
        const req = api.anonymous().get('/user/authentication');
        if (header !== undefined) req.set('Authorization', header);
        const res = await req;
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ message: 'Use HTTP Basic Authentication', type: 'rest' });
      }
    });

    it('answers 401 rest "Invalid HTTP Authorization header" for undecodable credentials', async () => {
      const headers = [
        `Basic ${Buffer.from('no-colon-here').toString('base64')}`,
        'Basic YWxpY2U6cGFzc3dvcmQ', // missing padding
        `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0x41]).toString('base64')}`, // not UTF-8
        'Basic !!!!',
      ];
      for (const header of headers) {
        const res = await api.anonymous().get('/user/authentication').set('Authorization', header);
        expect({ header, status: res.status, body: res.body }).toEqual({
          header,
          status: 401,
          body: { message: 'Invalid HTTP Authorization header', type: 'rest' },
        });
      }
    });

    it('answers 401 access "Login failed." for an unknown login or a wrong password', async () => {
      for (const [login, password] of [
        ['alice', 'wrong-pass'],
        ['nobody', 'password1'],
        ['nobody@example.com', 'password1'],
      ]) {
        const res = await api.anonymous().get('/user/authentication').auth(login, password);
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ message: 'Login failed.', type: 'access' });
        expect(res.headers['set-cookie']).toBeUndefined();
      }
    });

    it('returns an already valid token as is: no new token, no cookie', async () => {
      const viaHeader = await api.as(bob).get('/user/authentication');
      expect(viaHeader.status).toBe(200);
      expect(viaHeader.body.authToken.token).toBe(bob.token);
      expect(viaHeader.body.authToken.scope).toEqual(['core.user_auth']);
      expect(viaHeader.body.message).toBe('Login succeeded.');
      expect(viaHeader.body.user.login).toBe('bobby');
      expect(viaHeader.headers['set-cookie']).toBeUndefined();
      const viaParam = await api.anonymous().get(`/user/authentication?token=${bob.token}`).auth('alice', 'password1');
      expect(viaParam.body.authToken.token).toBe(bob.token);
      expect(viaParam.body.user.login).toBe('bobby');
    });

    it('treats a token without core.user_auth as no login at all', async () => {
      const scoped = await token(alice._id, [Scope.DATA_READ]);
      const res = await api.as(scoped).get('/user/authentication');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: 'Use HTTP Basic Authentication', type: 'rest' });
    });
  });

  describe('DELETE /user/authentication', () => {
    it('needs a logged-in user', async () => {
      const res = await api.anonymous().delete('/user/authentication');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: 'You must be logged in.', type: 'access' });
    });

    it('revokes the token: afterwards it is anonymous', async () => {
      const login = await api.anonymous().get('/user/authentication').auth('alice', 'password1');
      const t = login.body.authToken.token as string;
      const out = await api.as(t).delete('/user/authentication');
      expect(out.status).toBe(200);
      expect(out.body).toEqual({ message: 'Logged out.' });
      const cleared = (out.headers['set-cookie'] as unknown as string[]).join('\n');
      expect(cleared).toMatch(/serviceToken=; Path=\/; Expires=Thu, 01 Jan 1970/);
      expect(cleared).toMatch(/girderToken=; Path=\/; Expires=Thu, 01 Jan 1970/);
      const me = await api.as(t).get('/user/me');
      expect(me.status).toBe(200);
      expect(me.body).toBeNull();
      const again = await api.as(t).delete('/user/authentication');
      expect(again.status).toBe(401);
      // Other tokens of the same user still work.
      const other = await api.as(alice).get('/user/me');
      expect(other.body.login).toBe('alice');
    });
  });

  describe('token validity and sources', () => {
    it('treats an expired token as anonymous', async () => {
      const expired = await token(alice._id, undefined, -1);
      const me = await api.as(expired).get('/user/me');
      expect(me.status).toBe(200);
      expect(me.body).toBeNull();
      const keys = await api.as(expired).get('/api_key');
      expect(keys.status).toBe(401);
      expect(keys.body).toEqual({ message: 'You must be logged in.', type: 'access' });
      const unknown = await api.anonymous().get('/user/me').set('Service-Token', 'x'.repeat(64));
      expect(unknown.body).toBeNull();
    });

    it('takes the token parameter over the Service-Token header, and Service-Token over Girder-Token', async () => {
      const both = await api.as(bob).get(`/user/me?token=${alice.token}`);
      expect(both.body.login).toBe('alice');
      const headers = await api.as(bob).get('/user/me').set('Girder-Token', alice.token);
      expect(headers.body.login).toBe('bobby');
      const alias = await api.anonymous().get('/user/me').set('Girder-Token', alice.token);
      expect(alias.body.login).toBe('alice');
      const emptyParam = await api.as(bob).get('/user/me?token=');
      expect(emptyParam.body.login).toBe('bobby');
      const form = await api
        .anonymous()
        .post('/user/me')
        .set('X-HTTP-Method-Override', 'GET')
        .type('form')
        .send({ token: alice.token });
      expect(form.body.login).toBe('alice');
    });

    it('reads the serviceToken / girderToken cookie only on routes declared cookie: true', async () => {
      const withCookie = await api.anonymous().get('/authprobe/cookie').set('Cookie', `serviceToken=${alice.token}`);
      expect(withCookie.body).toEqual({ login: 'alice' });
      const alias = await api.anonymous().get('/authprobe/cookie').set('Cookie', `girderToken=${bob.token}`);
      expect(alias.body).toEqual({ login: 'bobby' });
      const ignored = await api.anonymous().get('/authprobe/plain').set('Cookie', `serviceToken=${alice.token}`);
      expect(ignored.body).toEqual({ login: null });
      const me = await api.anonymous().get('/user/me').set('Cookie', `serviceToken=${alice.token}`);
      expect(me.body).toBeNull();
      const headerFirst = await api.as(bob).get('/authprobe/cookie').set('Cookie', `serviceToken=${alice.token}`);
      expect(headerFirst.body).toEqual({ login: 'bobby' });
      const loginCookie = await api.anonymous().get('/user/authentication').auth('bobby', 'password1');
      const [cookie] = (loginCookie.headers['set-cookie'] as unknown as string[])[0].split(';');
      const reused = await api.anonymous().get('/authprobe/cookie').set('Cookie', cookie);
      expect(reused.body).toEqual({ login: 'bobby' });
    });
  });

  describe('scopes', () => {
    it('a token carrying the route scopes identifies its user there, and nowhere that needs core.user_auth', async () => {
      const read = await token(alice._id, [Scope.DATA_READ]);
      const ok = await api.as(read).get('/authprobe/read');
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ login: 'alice' });
      const me = await api.as(read).get('/user/me');
      expect(me.body).toBeNull();
      const keys = await api.as(read).get('/api_key');
      expect(keys.status).toBe(401);
      expect(keys.body).toEqual({ message: 'You must be logged in.', type: 'access' });
    });

    it('a token lacking the route scope makes a user route answer 401 "You must be logged in."', async () => {
      const info = await token(alice._id, [Scope.USER_INFO_READ]);
      const res = await api.as(info).get('/authprobe/read');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: 'You must be logged in.', type: 'access' });
    });

    it('admin routes: "Administrator access required." 401 when the scope is missing, 403 for a non-admin', async () => {
      // GET /system/setting: site administrators, scope core.setting.read.
      const setting = (caller: Parameters<typeof api.as>[0]) =>
        api.as(caller).get('/system/setting').query({ key: 'core.brand_name' });
      const adminRead = await token(admin._id, [Scope.DATA_READ]);
      const missing = await setting(adminRead);
      expect(missing.status).toBe(401);
      expect(missing.body).toEqual({ message: 'Administrator access required.', type: 'access' });
      const anonymous = await setting(null);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({ message: 'Administrator access required.', type: 'access' });
      const nonAdmin = await setting(alice);
      expect(nonAdmin.status).toBe(403);
      expect(nonAdmin.body).toEqual({ message: 'Administrator access required.', type: 'access' });
      const adminSettings = await token(admin._id, [Scope.SETTINGS_READ]);
      const ok = await setting(adminSettings);
      expect([ok.status, ok.body]).toEqual([200, 'Folder Service']);
    });

    it('token routes name the required and allowed scopes', async () => {
      const read = await token(alice._id, [Scope.DATA_READ, Scope.USER_INFO_READ]);
      const res = await api.as(read).get('/authprobe/token');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        message: 'Invalid token scope.\nRequired: core.data.write.\nAllowed: core.data.read core.user_info.read',
        type: 'access',
      });
      const none = await api.anonymous().get('/authprobe/token');
      expect(none.status).toBe(401);
      expect(none.body).toEqual({ message: 'You must be logged in or have a valid auth token.', type: 'access' });
      const write = await token(alice._id, [Scope.DATA_WRITE]);
      const ok = await api.as(write).get('/authprobe/token');
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ login: 'alice' });
    });
  });
});
