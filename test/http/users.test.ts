import { Writable } from 'node:stream';
import pino from 'pino';
import { ApiClient, startApi, type TestUser } from '../support/apiClient';
import { createApp } from '../../src/http/app';
import { pagingOf } from '../../src/http/params';

const form = (overrides: Record<string, string> = {}) => ({
  login: 'someone',
  email: 'someone@example.com',
  firstName: 'Some',
  lastName: 'One',
  password: 'password1',
  ...overrides,
});

const SELF_FIELDS = [
  '_accessLevel', '_id', '_modelType', 'admin', 'created', 'email', 'emailVerified', 'firstName', 'groupInvites', 'groups',
  'lastName', 'login', 'otp', 'public', 'size', 'status',
].sort();
const PUBLIC_FIELDS = ['_accessLevel', '_id', '_modelType', 'admin', 'created', 'firstName', 'lastName', 'login', 'public'].sort();

describe('users: registration', () => {
  let api: ApiClient;
  let admin: TestUser;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  const post = (params: Record<string, string>, token?: string) => {
    const req = api.anonymous().post('/user').type('form');
    if (token) req.set('Service-Token', token);
    return req.send(params);
  };

  it('makes the first user a site admin with a verified email, and logs the anonymous registrant in', async () => {
    const res = await post(form({ login: 'Admin', email: 'Admin@Example.com', firstName: ' Ada ', lastName: ' Lovelace ' }));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([...SELF_FIELDS, 'authToken'].sort());
    expect(res.body).toMatchObject({
      _modelType: 'user', _accessLevel: 2, login: 'admin', email: 'admin@example.com', firstName: 'Ada', lastName: 'Lovelace',
      admin: true, public: true, size: 0, groups: [], groupInvites: [], status: 'enabled', emailVerified: true, otp: false,
    });
    expect(res.body._id).toMatch(/^[0-9a-f]{24}$/);
    expect(res.body.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$/);
    expect(Object.keys(res.body.authToken).sort()).toEqual(['expires', 'token']);
    expect(res.body.authToken.token).toMatch(/^[A-Za-z0-9]{64}$/);
    const cookie = res.headers['set-cookie'] as unknown as string[];
    expect(cookie).toHaveLength(1);
    expect(cookie[0]).toMatch(new RegExp(`^serviceToken=${res.body.authToken.token}; Path=/; Expires=`));
    admin = { _id: res.body._id, login: 'admin', token: res.body.authToken.token, admin: true };

    const me = await api.as(admin).get('/user/me');
    expect(me.status).toBe(200);
    expect(me.body._id).toBe(admin._id);
  });

  it('creates the default Public and Private folders, the new user holding ADMIN on them', async () => {
    const user = await api.createUser('folderowner');
    const viewer = { id: user._id, admin: false, groups: [] };
    const page = await api.runtime.services.readModel.folders.listChildren({
      parentType: 'user', parentId: user._id, viewer, paging: pagingOf({ sort: 'name' }),
    });
    expect(page.rows.map((f) => [f.name, f.public, f.parentCollection, f.baseParentType, f.baseParentId, f.creatorId])).toEqual([
      ['Private', false, 'user', 'user', user._id, user._id],
      ['Public', true, 'user', 'user', user._id, user._id],
    ]);
    for (const folder of page.rows) expect(folder.access).toEqual({ users: [{ id: user._id, level: 2, flags: [] }], groups: [] });
    // Anonymous callers see only the public one.
    const anon = await api.runtime.services.readModel.folders.listChildren({
      parentType: 'user', parentId: user._id, viewer: null, paging: pagingOf({}),
    });
    expect(anon.rows.map((f) => f.name)).toEqual(['Public']);
  });

  it('ignores admin=true from anonymous callers', async () => {
    const res = await post(form({ login: 'sneaky', email: 'sneaky@example.com', admin: 'true' }));
    expect(res.status).toBe(200);
    expect(res.body.admin).toBe(false);
    expect(res.body.emailVerified).toBe(false);
  });

  it('ignores admin=true from logged-in non-admins, and gives them neither token nor cookie', async () => {
    const plain = await api.createUser('plainuser');
    const res = await post(form({ login: 'friend', email: 'friend@example.com', admin: 'true' }), plain.token);
    expect(res.status).toBe(200);
    expect(res.body.admin).toBe(false);
    // Filtered for the caller, who has no access entry on the new user.
    expect(Object.keys(res.body).sort()).toEqual(PUBLIC_FIELDS);
    expect(res.body._accessLevel).toBe(-1);
    expect(res.body.authToken).toBeUndefined();
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('honours admin=true from a site admin, answering with the new user filtered for the admin (no token)', async () => {
    const res = await post(form({ login: 'second-admin', email: 'second@example.com', admin: 'yes' }), admin.token);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(SELF_FIELDS);
    expect(res.body).toMatchObject({ login: 'second-admin', admin: true, emailVerified: false, _accessLevel: 2 });
    expect(res.headers['set-cookie']).toBeUndefined();
    const noAdmin = await post(form({ login: 'third-user', email: 'third@example.com' }), admin.token);
    expect(noAdmin.body.admin).toBe(false);
  });

  it('requires login, email, firstName, lastName, password in that order', async () => {
    const steps: [Record<string, string>, string][] = [
      [{}, 'login'],
      [{ login: 'x' }, 'email'],
      [{ login: 'x', email: 'x' }, 'firstName'],
      [{ login: 'x', email: 'x', firstName: 'x' }, 'lastName'],
      [{ login: 'x', email: 'x', firstName: 'x', lastName: 'x' }, 'password'],
    ];
    for (const [params, missing] of steps) {
      const res = await post(params);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: `Parameter '${missing}' is required.`, type: 'rest' });
    }
  });

  it('validates in Girder order with its messages and fields', async () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ password: 'short', firstName: '', login: '@' }, 'Password must be at least 6 characters.', 'password'],
      [{ password: 'abc\ndefgh' }, 'Password must be at least 6 characters.', 'password'],
      [{ firstName: '  ', lastName: '' }, 'First name must not be empty.', 'firstName'],
      [{ lastName: ' ', login: '@' }, 'Last name must not be empty.', 'lastName'],
      [{ login: 'a@b', email: 'bad' }, 'Login may not contain "@".', 'login'],
      [
        { login: 'abc', email: 'bad' },
        'Login must be at least 4 characters, start with a letter, and may only contain letters, numbers, dashes, and dots.',
        'login',
      ],
      [
        { login: '1abc' },
        'Login must be at least 4 characters, start with a letter, and may only contain letters, numbers, dashes, and dots.',
        'login',
      ],
      [
        { login: 'ab_cd' },
        'Login must be at least 4 characters, start with a letter, and may only contain letters, numbers, dashes, and dots.',
        'login',
      ],
      [{ email: 'not-an-email' }, 'Invalid email address.', 'email'],
      [{ email: 'a@b..c' }, 'Invalid email address.', 'email'],
      [{ login: ' ADMIN ' }, 'That login is already registered.', 'login'],
      [{ email: ' ADMIN@example.com ' }, 'That email is already registered.', 'email'],
    ];
    for (const [overrides, message, field] of cases) {
      const res = await post(form({ login: 'validuser', email: 'valid@example.com', ...overrides }));
      expect({ overrides, status: res.status, body: res.body }).toEqual({ overrides, status: 400, body: { message, type: 'validation', field } });
    }
  });

  it('accepts the login and email forms Girder accepts, normalised', async () => {
    const res = await post(form({ login: ' Mixed.Case-99 ', email: " O'Brien+tag@Sub.Example.org ", password: '      ' }));
    expect(res.status).toBe(200);
    expect(res.body.login).toBe('mixed.case-99');
    expect(res.body.email).toBe("o'brien+tag@sub.example.org");
    const login = await api.anonymous().get('/user/authentication').auth('mixed.case-99', '      ');
    expect(login.status).toBe(200);
  });

  it('never lets concurrent registrations share a login', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => post(form({ login: 'racer', email: `racer${i}@example.com` }))),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) {
      expect(r.body).toEqual({ message: 'That login is already registered.', type: 'validation', field: 'login' });
    }
  });
});

describe('users: reading', () => {
  let api: ApiClient;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin', { firstName: 'Zed', lastName: 'Admin' });
    alice = await api.createUser('alice', { firstName: 'Alice', lastName: 'Cooper' });
    bob = await api.createUser('bobby', { firstName: 'Bob', lastName: 'Barker' });
  });
  afterAll(() => api.close());

  it('GET /user/me is null when anonymous, the caller filtered as self otherwise', async () => {
    const anon = await api.anonymous().get('/user/me');
    expect(anon.status).toBe(200);
    expect(anon.text).toBe('null');
    const me = await api.as(alice).get('/user/me');
    expect(me.status).toBe(200);
    expect(Object.keys(me.body).sort()).toEqual(SELF_FIELDS);
    expect(me.body).toMatchObject({ _id: alice._id, login: 'alice', email: 'alice@example.com', _accessLevel: 2, admin: false });
  });

  it('GET /user/:id filters by the caller: public fields for others, all for self and admins', async () => {
    const anon = await api.anonymous().get(`/user/${alice._id}`);
    expect(anon.status).toBe(200);
    expect(Object.keys(anon.body).sort()).toEqual(PUBLIC_FIELDS);
    expect(anon.body).toMatchObject({ _id: alice._id, login: 'alice', firstName: 'Alice', lastName: 'Cooper', _accessLevel: 0 });

    const other = await api.as(bob).get(`/user/${alice._id}`);
    expect(Object.keys(other.body).sort()).toEqual(PUBLIC_FIELDS);
    expect(other.body._accessLevel).toBe(-1);

    const self = await api.as(alice).get(`/user/${alice._id}`);
    expect(Object.keys(self.body).sort()).toEqual(SELF_FIELDS);

    const byAdmin = await api.as(admin).get(`/user/${alice._id}`);
    expect(Object.keys(byAdmin.body).sort()).toEqual(SELF_FIELDS);
    expect(byAdmin.body._accessLevel).toBe(2);
  });

  it('GET /user/:id answers 400 for ids that do not resolve', async () => {
    for (const id of ['nope', '0123456789abcdef01234567']) {
      const res = await api.anonymous().get(`/user/${id}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: `Invalid user id (${id}).`, type: 'rest' });
    }
  });

  it('GET /user lists by lastName by default, pages, and searches text', async () => {
    const all = await api.anonymous().get('/user');
    expect(all.status).toBe(200);
    expect(all.body.map((u: { login: string }) => u.login)).toEqual(['admin', 'bobby', 'alice']);
    expect(all.headers['girder-total-count']).toBe('3');
    for (const u of all.body) expect(Object.keys(u).sort()).toEqual(PUBLIC_FIELDS);

    const page = await api.anonymous().get('/user?limit=1&offset=1');
    expect(page.body.map((u: { login: string }) => u.login)).toEqual(['bobby']);
    const desc = await api.anonymous().get('/user?sort=login&sortdir=-1');
    expect(desc.body.map((u: { login: string }) => u.login)).toEqual(['bobby', 'alice', 'admin']);
    const text = await api.anonymous().get('/user?text=cooper');
    expect(text.body.map((u: { login: string }) => u.login)).toEqual(['alice']);
    const bad = await api.anonymous().get('/user?limit=ten');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'Invalid value for integer parameter limit: ten.', type: 'rest' });
  });

  it('never returns a password or its hash, and never logs passwords, API keys or tokens given in the query string', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    // The same service behind an app that logs every request into `lines`.
    const logged = new ApiClient({ ...api.server, app: createApp({ ...api.runtime.services, logger: pino({ level: 'trace' }, sink) }) });
    const secret = 'SuperSecret123';
    const created = await logged.anonymous()
      .post(`/user?login=carol&email=carol%40example.com&firstName=Carol&lastName=King&password=${secret}`);
    expect(created.status).toBe(200);
    const login = await logged.anonymous().get('/user/authentication').auth('carol', secret);
    expect(login.status).toBe(200);
    const failed = await logged.anonymous().get('/user/authentication').auth('carol', `${secret}x`);
    expect(failed.status).toBe(401);
    const listed = await logged.as(admin).get('/user');
    const apiKey = (await logged.as(admin).post('/api_key')).body.key as string;
    const fromKey = await logged.anonymous().post(`/api_key/token?key=${apiKey}`);
    expect(fromKey.status).toBe(200);
    const viaParam = await logged.anonymous().get(`/user/me?token=${fromKey.body.authToken.token}`);
    expect(viaParam.body.login).toBe('admin');
    for (const body of [created.text, login.text, failed.text, listed.text]) {
      expect(body).not.toContain(secret);
      expect(body).not.toMatch(/password|scrypt/i);
    }
    const log = lines.join('');
    expect(log).toContain('password=[redacted]');
    expect(log).not.toContain(secret);
    expect(log).not.toContain(Buffer.from(`carol:${secret}`).toString('base64'));
    expect(log).toContain('key=[redacted]');
    expect(log).not.toContain(apiKey);
    expect(log).not.toContain(fromKey.body.authToken.token);
    expect(log).not.toContain(admin.token);
  });
});
