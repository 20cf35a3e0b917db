import { startApi, type ApiClient, type Caller, type TestUser } from '../support/apiClient';
import { newId } from '../../src/domain/ids';

/** The read routes of one folder: GET /folder/:id, details, rootpath and access. */

let api: ApiClient;
let admin: TestUser;
let alice: TestUser;
let bob: TestUser;
/** alice's default folders. */
let alicePublic: string;
let alicePrivate: string;

/** A collection created by the site admin through POST /collection. */
async function createCollection(name: string, isPublic: boolean): Promise<string> {
  const res = await api.as(admin)
    .post('/collection')
    .type('form')
    .send({ name, description: `about ${name}`, public: String(isPublic) });
  if (res.status !== 200) throw new Error(`POST /collection ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body._id as string;
}

beforeAll(async () => {
  api = await startApi();
  admin = await api.createUser('admin');
  alice = await api.createUser('alice', { firstName: 'Alice', lastName: 'Liddell' });
  bob = await api.createUser('bobby');
  const defaults = await api.as(alice).get('/folder').query({ parentType: 'user', parentId: alice._id });
  alicePrivate = defaults.body.find((f: { name: string }) => f.name === 'Private')._id;
  alicePublic = defaults.body.find((f: { name: string }) => f.name === 'Public')._id;
});
afterAll(() => api.close());

describe('GET /folder/:id', () => {
  it('returns the filtered record with the caller’s _accessLevel', async () => {
    const res = await api.as(alice).get(`/folder/${alicePublic}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      _id: alicePublic, _modelType: 'folder', _accessLevel: 2, name: 'Public', description: '', parentCollection: 'user',
      parentId: alice._id, baseParentType: 'user', baseParentId: alice._id, creatorId: alice._id,
      created: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$/), updated: res.body.created,
      size: 0, public: true, metadata: {},
    });
    expect(res.body).not.toHaveProperty('access');
    expect(res.body).not.toHaveProperty('lowerName');
  });

  it.each<[string, () => Caller, number]>([
    ['anonymous on a public folder', () => null, 0],
    ['a user without an entry on a public folder', () => bob, -1],
    ['the owner', () => alice, 2],
    ['a site admin', () => admin, 2],
  ])('_accessLevel for %s', async (_label, caller, level) => {
    const res = await api.as(caller()).get(`/folder/${alicePublic}`);
    expect(res.status).toBe(200);
    expect(res.body._accessLevel).toBe(level);
  });

  it('omits `public` for a folder created under a user without it, and shows its metadata', async () => {
    const id = await api.createFolder(alice, 'user', alice._id, 'No public field', { metadata: { a: { b: 1 } } });
    const res = await api.as(alice).get(`/folder/${id}`);
    expect(res.body).not.toHaveProperty('public');
    expect(res.body).not.toHaveProperty('publicFlags');
    expect(res.body.metadata).toEqual({ a: { b: 1 } });
  });

  it('shows publicFlags once they are set, and READ through an entry as _accessLevel 0', async () => {
    const id = await api.subfolder(alice, alicePublic, 'Flagged');
    const set = await api.as(alice)
      .put(`/folder/${id}/access`)
      .type('form')
      .send({ access: JSON.stringify({ users: [{ id: alice._id, level: 2 }, { id: bob._id, level: 0 }] }), publicFlags: '[]' });
    expect(set.status).toBe(200);
    const res = await api.as(bob).get(`/folder/${id}`);
    expect(res.body).toMatchObject({ public: true, publicFlags: [], _accessLevel: 0 });
    expect(res.body).not.toHaveProperty('access');
  });

  it('gives a nested folder its root as base parent', async () => {
    const child = await api.subfolder(alice, alicePublic, 'Nested');
    const grandChild = await api.subfolder(alice, child, 'Deeper');
    const res = await api.as(null).get(`/folder/${grandChild}`);
    expect(res.body).toMatchObject({ parentCollection: 'folder', parentId: child, baseParentType: 'user', baseParentId: alice._id });
  });

  it.each<[string, string, () => Caller, number, string]>([
    ['a malformed id', 'abc', () => alice, 400, 'Invalid folder id (abc).'],
    ['an unknown id', '0123456789abcdef01234567', () => alice, 400, 'Invalid folder id (0123456789abcdef01234567).'],
  ])('rejects %s', async (_label, id, caller, status, message) => {
    const res = await api.as(caller()).get(`/folder/${id}`);
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ message, type: 'rest' });
  });

  it('denies READ on a private folder: 401 anonymous, 403 logged in', async () => {
    const anonymous = await api.as(null).get(`/folder/${alicePrivate}`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ message: `Read access denied for folder ${alicePrivate} (user None).`, type: 'access' });
    const other = await api.as(bob).get(`/folder/${alicePrivate}`);
    expect(other.status).toBe(403);
    expect(other.body).toEqual({ message: `Read access denied for folder ${alicePrivate} (user ${bob._id}).`, type: 'access' });
  });
});

describe('GET /folder/:id/details', () => {
  it('counts the items and the subfolders the caller may read', async () => {
    const parent = await api.subfolder(alice, alicePublic, 'Details');
    await api.subfolder(alice, parent, 'open 1');
    await api.subfolder(alice, parent, 'open 2');
    await api.subfolder(alice, parent, 'closed', { public: false });
    await api.subfolder(alice, parent, 'shared with bob', { public: false, access: { users: [{ id: alice._id, level: 2 }, { id: bob._id, level: 0 }], groups: [] } });
    const grandChild = await api.subfolder(alice, parent, 'open 3');
    await api.subfolder(alice, grandChild, 'not direct');
    const expected: [TestUser | null, number][] = [[alice, 5], [admin, 5], [bob, 4], [null, 3]];
    for (const [caller, nFolders] of expected) {
      const res = await api.as(caller).get(`/folder/${parent}/details`);
      expect({ caller: caller?.login, status: res.status, body: res.body }).toEqual({ caller: caller?.login, status: 200, body: { nItems: 0, nFolders } });
    }
  });

  it('needs READ on the folder', async () => {
    expect((await api.as(bob).get(`/folder/${alicePrivate}/details`)).body).toEqual({
      message: `Read access denied for folder ${alicePrivate} (user ${bob._id}).`, type: 'access',
    });
    expect((await api.as(bob).get('/folder/nope/details')).body).toEqual({ message: 'Invalid folder id (nope).', type: 'rest' });
  });
});

describe('GET /folder/:id/rootpath', () => {
  const userObject = (user: TestUser, level: number) => ({
    _id: user._id, _modelType: 'user', _accessLevel: level, login: user.login, public: true, firstName: expect.any(String),
    lastName: expect.any(String), admin: user.admin, created: expect.any(String),
  });

  it('lists the root user and the ancestor folders down to the parent', async () => {
    const l1 = await api.subfolder(alice, alicePublic, 'L1');
    const l2 = await api.subfolder(alice, l1, 'L2');
    const l3 = await api.subfolder(alice, l2, 'L3');
    const res = await api.as(bob).get(`/folder/${l3}/rootpath`);
    expect(res.status).toBe(200);
    expect(res.body.map((e: { type: string; object: { _id: string } }) => [e.type, e.object._id])).toEqual([
      ['user', alice._id], ['folder', alicePublic], ['folder', l1], ['folder', l2],
    ]);
    expect(res.body[0].object).toEqual(userObject(alice, -1));
    expect(res.body[0].object).toEqual((await api.as(bob).get(`/user/${alice._id}`)).body);
    expect(res.body[3].object).toMatchObject({ _modelType: 'folder', name: 'L2', _accessLevel: -1, metadata: {} });
    expect(res.body[3].object).not.toHaveProperty('access');
  });

  it('shows the root user at the caller’s level (account fields for the user themself)', async () => {
    const res = await api.as(alice).get(`/folder/${alicePublic}/rootpath`);
    expect(res.body).toHaveLength(1);
    expect(res.body[0].type).toBe('user');
    expect(res.body[0].object).toMatchObject({ _accessLevel: 2, email: 'alice@example.com', firstName: 'Alice', lastName: 'Liddell' });
  });

  it('follows a move of an ancestor', async () => {
    const from = await api.subfolder(alice, alicePublic, 'Move source');
    const moving = await api.subfolder(alice, from, 'Moving');
    const leaf = await api.subfolder(alice, moving, 'Leaf');
    const to = await api.subfolder(alice, alicePublic, 'Move target');
    const moved = await api.as(alice)
      .put(`/folder/${moving}`)
      .type('form')
      .send({ parentType: 'folder', parentId: to });
    expect(moved.status).toBe(200);
    const res = await api.as(alice).get(`/folder/${leaf}/rootpath`);
    expect(res.body.map((e: { object: { _id: string } }) => e.object._id)).toEqual([alice._id, alicePublic, to, moving]);
  });

  it('fails on the nearest unreadable ancestor', async () => {
    const p1 = await api.subfolder(alice, alicePrivate, 'P1');
    const p2 = await api.subfolder(alice, p1, 'P2');
    const p3 = await api.subfolder(alice, p2, 'P3');
    const anonymous = await api.as(null).get(`/folder/${p3}/rootpath`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ message: `Read access denied for folder ${alicePrivate} (user None).`, type: 'access' });
    const other = await api.as(bob).get(`/folder/${p3}/rootpath`);
    expect(other.status).toBe(403);
    expect(other.body).toEqual({ message: `Read access denied for folder ${alicePrivate} (user ${bob._id}).`, type: 'access' });
    expect((await api.as(alice).get(`/folder/${p3}/rootpath`)).status).toBe(200);
  });

  it('starts at the root collection, shown as GET /collection/:id shows it, and needs READ on it', async () => {
    const openCollection = await createCollection('Open collection', true);
    const top = await api.createFolder(admin, 'collection', openCollection, 'Top', { public: true });
    const child = await api.subfolder(admin, top, 'Child');
    const res = await api.as(null).get(`/folder/${child}/rootpath`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { type: 'collection', object: (await api.as(null).get(`/collection/${openCollection}`)).body },
      { type: 'folder', object: (await api.as(null).get(`/folder/${top}`)).body },
    ]);
    expect(res.body[0].object).toMatchObject({ _modelType: 'collection', _accessLevel: 0, name: 'Open collection' });

    const closedCollection = await createCollection('Closed collection', false);
    const inside = await api.createFolder(admin, 'collection', closedCollection, 'Visible', { public: true });
    const denied = await api.as(bob).get(`/folder/${inside}/rootpath`);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ message: `Read access denied for collection ${closedCollection} (user ${bob._id}).`, type: 'access' });
  });

  it('needs READ on the folder itself', async () => {
    const res = await api.as(null).get(`/folder/${alicePrivate}/rootpath`);
    expect(res.status).toBe(401);
    expect(res.body.message).toBe(`Read access denied for folder ${alicePrivate} (user None).`);
  });
});

describe('GET /folder/:id/access', () => {
  it('returns the access list with user logins and names', async () => {
    const res = await api.as(alice).get(`/folder/${alicePrivate}/access`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ users: [{ id: alice._id, level: 2, flags: [], login: 'alice', name: 'Alice Liddell' }], groups: [] });
  });

  it('leaves out entries whose user or group does not exist', async () => {
    const ghost = newId();
    const id = await api.createFolder(alice, 'user', alice._id, 'With ghosts', {
      access: { users: [{ id: ghost, level: 2 }, { id: alice._id, level: 2 }, { id: bob._id, level: 1 }], groups: [{ id: newId(), level: 0 }] },
    });
    const res = await api.as(admin).get(`/folder/${id}/access`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      users: [
        { id: alice._id, level: 2, flags: [], login: 'alice', name: 'Alice Liddell' },
        { id: bob._id, level: 1, flags: [], login: 'bobby', name: 'First Last' },
      ],
      groups: [],
    });
  });

  it('needs a logged-in caller with ADMIN on the folder', async () => {
    const anonymous = await api.as(null).get(`/folder/${alicePublic}/access`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ message: 'You must be logged in.', type: 'access' });
    const reader = await api.as(bob).get(`/folder/${alicePublic}/access`);
    expect(reader.status).toBe(403);
    expect(reader.body).toEqual({ message: `Admin access denied for folder ${alicePublic} (user ${bob._id}).`, type: 'access' });
    expect((await api.as(admin).get(`/folder/${alicePublic}/access`)).status).toBe(200);
  });
});
