import { ok, startApi, type ApiClient, type Caller, type TestUser } from '../support/apiClient';

/**
 * GET /resource/search: Girder's `prefix` mode over collections, folders and items (name starts with the query as
 * typed, or the lower-cased name does), and the `level` parameter in both modes, items by their folder's level.
 */

let api: ApiClient;
let admin: TestUser;
let alice: TestUser;
let bob: TestUser;
/** alice's folders: `shared` gives bob WRITE, `open` is public (bob READ), `hidden` is alice's alone. */
let shared: string;
let open: string;
let hidden: string;

const names = (rows: { name: string }[]) => rows.map((r) => r.name);

function search(caller: Caller, query: Record<string, string | number>, types: string[]) {
  return api
    .as(caller)
    .get('/resource/search')
    .query({ ...query, types: JSON.stringify(types) });
}

beforeAll(async () => {
  api = await startApi();
  admin = await api.createUser('admin');
  alice = await api.createUser('alice');
  bob = await api.createUser('bobby');
  const alicePublic = await api.defaultFolder(alice, 'Public');
  open = await api.createFolder(alice, 'folder', alicePublic, 'Alpha open', { public: true });
  shared = await api.createFolder(alice, 'folder', alicePublic, 'alpha shared', {
    public: true,
    access: {
      users: [
        { id: alice._id, level: 2 },
        { id: bob._id, level: 1 },
      ],
      groups: [],
    },
  });
  hidden = await api.createFolder(alice, 'folder', alicePublic, 'Alpha hidden', {
    public: false,
    access: { users: [{ id: alice._id, level: 2 }], groups: [] },
  });
  await api.createFolder(alice, 'folder', alicePublic, 'a.b', { public: true });
  await api.createFolder(alice, 'folder', alicePublic, 'axb', { public: true });
  await api.createFolder(alice, 'folder', alicePublic, '100% done', { public: true });
  await api.createFolder(alice, 'folder', alicePublic, '1000 done', { public: true });
  await api.newItem(alice, open, 'Alpha item open');
  await api.newItem(alice, shared, 'alpha item shared');
  await api.newItem(alice, hidden, 'Alpha item hidden');
  await api.newItem(alice, open, 'beta item');
  for (const [name, isPublic] of [
    ['Alpine lab', true],
    ['ALPS', true],
    ['alpine private', false],
  ] as const) {
    ok(
      await api
        .as(admin)
        .post('/collection')
        .type('form')
        .send({ name, public: String(isPublic) }),
    );
  }
});
afterAll(() => api.close());

describe('GET /resource/search?mode=prefix', () => {
  it('finds collections, folders and items by name prefix, sorted by name (as stored, capitals first)', async () => {
    const res = await search(alice, { q: 'alp', mode: 'prefix' }, ['collection', 'folder', 'item']);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['collection', 'folder', 'item']);
    expect(names(res.body.collection)).toEqual(['ALPS', 'Alpine lab']);
    expect(names(res.body.folder)).toEqual(['Alpha hidden', 'Alpha open', 'alpha shared']);
    expect(names(res.body.item)).toEqual(['Alpha item hidden', 'Alpha item open', 'alpha item shared']);
  });

  it('answers each document as its own GET answers it', async () => {
    const res = await search(bob, { q: 'Alpha open', mode: 'prefix' }, ['folder']);
    expect(res.status).toBe(200);
    const folder = await api.as(bob).get(`/folder/${open}`);
    expect(res.body).toEqual({ folder: [folder.body] });
    const items = await search(bob, { q: 'Alpha item open', mode: 'prefix' }, ['item']);
    const itemId = (items.body.item as { _id: string }[])[0]._id;
    expect(items.body).toEqual({ item: [(await api.as(bob).get(`/item/${itemId}`)).body] });
  });

  it("matches a query with capitals in that exact case only (Girder's name or lowerName rule)", async () => {
    const res = await search(alice, { q: 'Alp', mode: 'prefix' }, ['collection', 'folder', 'item']);
    expect(res.status).toBe(200);
    expect(names(res.body.collection)).toEqual(['Alpine lab']);
    expect(names(res.body.folder)).toEqual(['Alpha hidden', 'Alpha open']);
    expect(names(res.body.item)).toEqual(['Alpha item hidden', 'Alpha item open']);
    const upper = await search(admin, { q: 'ALP', mode: 'prefix' }, ['collection']);
    expect(names(upper.body.collection)).toEqual(['ALPS']);
  });

  it.each([
    ['a.', ['a.b']],
    ['100%', ['100% done']],
    ['10_', []],
    ['(', []],
  ])('treats every character of %j literally', async (q, expected) => {
    const res = await search(alice, { q, mode: 'prefix' }, ['folder']);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ folder: expect.any(Array) });
    expect(names(res.body.folder)).toEqual(expected);
  });

  it('shows each caller only what it may read', async () => {
    const asBob = await search(bob, { q: 'alp', mode: 'prefix' }, ['collection', 'folder', 'item']);
    expect(names(asBob.body.collection)).toEqual(['ALPS', 'Alpine lab']);
    expect(names(asBob.body.folder)).toEqual(['Alpha open', 'alpha shared']);
    expect(names(asBob.body.item)).toEqual(['Alpha item open', 'alpha item shared']);
    const asAdmin = await search(admin, { q: 'alp', mode: 'prefix' }, ['collection']);
    expect(names(asAdmin.body.collection)).toEqual(['ALPS', 'Alpine lab', 'alpine private']);
    const anonymous = await search(null, { q: 'alp', mode: 'prefix' }, ['folder', 'item']);
    expect(names(anonymous.body.folder)).toEqual(['Alpha open', 'alpha shared']);
    expect(names(anonymous.body.item)).toEqual(['Alpha item open', 'alpha item shared']);
  });

  it('pages with limit and offset', async () => {
    const page = await search(alice, { q: 'alp', mode: 'prefix', limit: 1, offset: 1 }, ['folder', 'item']);
    expect(names(page.body.folder)).toEqual(['Alpha open']);
    expect(names(page.body.item)).toEqual(['Alpha item open']);
  });
});

describe('GET /resource/search: level', () => {
  it.each(['prefix', 'text'])('mode=%s with level=1 keeps what the caller may write', async (mode) => {
    const res = await search(bob, { q: 'alpha', mode, level: 1 }, ['folder', 'item', 'collection']);
    expect(res.status).toBe(200);
    expect(names(res.body.folder)).toEqual(['alpha shared']);
    expect(names(res.body.item)).toEqual(['alpha item shared']);
    expect(res.body.collection).toEqual([]);
  });

  it.each(['prefix', 'text'])('mode=%s with level=2 keeps what the caller administers', async (mode) => {
    const asBob = await search(bob, { q: 'alpha', mode, level: 2 }, ['folder', 'item']);
    expect(asBob.body).toEqual({ folder: [], item: [] });
    const asAlice = await search(alice, { q: 'alpha', mode, level: 2 }, ['item']);
    expect(names(asAlice.body.item)).toEqual(['Alpha item hidden', 'Alpha item open', 'alpha item shared']);
  });

  it('gives an anonymous caller nothing above READ', async () => {
    const res = await search(null, { q: 'alpha', mode: 'prefix', level: 1 }, ['folder', 'item']);
    expect(res.body).toEqual({ folder: [], item: [] });
  });

  it('refuses a level Girder does not know', async () => {
    const res = await search(bob, { q: 'alpha', mode: 'prefix', level: 3 }, ['folder']);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'Invalid AccessType: 3.', type: 'rest' });
  });
});

describe('GET /resource/search?mode=prefix: users and groups', () => {
  beforeAll(async () => {
    await api.createUser('emile', { firstName: 'Émile', lastName: 'Zola' });
    await api.createUser('zedd', { firstName: 'Zed', lastName: 'Ørsted' });
    for (const name of ['Émigrés', 'émigrés club', 'EMU'])
      ok(await api.as(admin).post('/group').query({ name, public: true }), `group ${name}`);
  });
  const logins = (rows: { login: string }[]) => rows.map((r) => r.login).sort();

  it("matches a login as typed (logins are lower-case) and first or last names in any case, in every script (Girder's User.prefixSearchFields)", async () => {
    const lower = await search(alice, { q: 'émi', mode: 'prefix' }, ['user']);
    expect([lower.status, logins(lower.body.user)]).toEqual([200, ['emile']]);
    expect(logins((await search(alice, { q: 'ÉMI', mode: 'prefix' }, ['user'])).body.user)).toEqual(['emile']);
    expect(logins((await search(alice, { q: 'ørs', mode: 'prefix' }, ['user'])).body.user)).toEqual(['zedd']);
    // A login only matches as typed: "EMILE" is no prefix of the login "emile", and no name starts with it.
    expect(logins((await search(alice, { q: 'EMILE', mode: 'prefix' }, ['user'])).body.user)).toEqual([]);
    expect(logins((await search(alice, { q: 'emil', mode: 'prefix' }, ['user'])).body.user)).toEqual(['emile']);
  });

  it("matches a group's name as typed or its lower-cased form, in every script (Girder's Group.prefixSearchFields)", async () => {
    const lower = await search(alice, { q: 'émi', mode: 'prefix' }, ['group']);
    expect([lower.status, names(lower.body.group).sort()]).toEqual([200, ['émigrés club', 'Émigrés'].sort()]);
    expect(names((await search(alice, { q: 'Émi', mode: 'prefix' }, ['group'])).body.group)).toEqual(['Émigrés']);
    expect(names((await search(alice, { q: 'eMU', mode: 'prefix' }, ['group'])).body.group)).toEqual([]);
    expect(names((await search(alice, { q: 'EM', mode: 'prefix' }, ['group'])).body.group)).toEqual(['EMU']);
  });
});
