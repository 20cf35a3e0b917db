import request from 'supertest';
import { startTestServer, type TestServer, type TestUser } from '../support/testServer';
import { newId } from '../../src/domain/ids';
import { folderApi, type Caller } from '../support/folderApi';

/** The read routes of one folder: GET /folder/:id, details, rootpath and access. */

let server: TestServer;
let admin: TestUser;
let alice: TestUser;
let bob: TestUser;
/** alice's default folders. */
let alicePublic: string;
let alicePrivate: string;

const { get, createFolder, sub } = folderApi(() => server);

/** A collection created by the site admin through POST /collection. */
async function createCollection(name: string, isPublic: boolean): Promise<string> {
  const res = await request(server.app)
    .post('/api/v1/collection')
    .set('Service-Token', admin.token)
    .type('form')
    .send({ name, description: `about ${name}`, public: String(isPublic) });
  if (res.status !== 200) throw new Error(`POST /collection ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body._id as string;
}

beforeAll(async () => {
  server = await startTestServer();
  admin = await server.createUser('admin');
  alice = await server.createUser('alice', { firstName: 'Alice', lastName: 'Liddell' });
  bob = await server.createUser('bobby');
  const defaults = await get('/folder', alice, { parentType: 'user', parentId: alice._id });
  alicePrivate = defaults.body.find((f: { name: string }) => f.name === 'Private')._id;
  alicePublic = defaults.body.find((f: { name: string }) => f.name === 'Public')._id;
});
afterAll(() => server.close());

describe('GET /folder/:id', () => {
  it('returns the filtered record with the caller’s _accessLevel', async () => {
    const res = await get(`/folder/${alicePublic}`, alice);
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
    const res = await get(`/folder/${alicePublic}`, caller());
    expect(res.status).toBe(200);
    expect(res.body._accessLevel).toBe(level);
  });

  it('omits `public` for a folder created under a user without it, and shows its metadata', async () => {
    const id = await createFolder(alice, 'user', alice._id, 'No public field', { metadata: { a: { b: 1 } } });
    const res = await get(`/folder/${id}`, alice);
    expect(res.body).not.toHaveProperty('public');
    expect(res.body).not.toHaveProperty('publicFlags');
    expect(res.body.metadata).toEqual({ a: { b: 1 } });
  });

  it('shows publicFlags once they are set, and READ through an entry as _accessLevel 0', async () => {
    const id = await sub(alicePublic, 'Flagged', alice);
    const set = await request(server.app)
      .put(`/api/v1/folder/${id}/access`)
      .set('Service-Token', alice.token)
      .type('form')
      .send({ access: JSON.stringify({ users: [{ id: alice._id, level: 2 }, { id: bob._id, level: 0 }] }), publicFlags: '[]' });
    expect(set.status).toBe(200);
    const res = await get(`/folder/${id}`, bob);
    expect(res.body).toMatchObject({ public: true, publicFlags: [], _accessLevel: 0 });
    expect(res.body).not.toHaveProperty('access');
  });

  it('gives a nested folder its root as base parent', async () => {
    const child = await sub(alicePublic, 'Nested', alice);
    const grandChild = await sub(child, 'Deeper', alice);
    const res = await get(`/folder/${grandChild}`, null);
    expect(res.body).toMatchObject({ parentCollection: 'folder', parentId: child, baseParentType: 'user', baseParentId: alice._id });
  });

  it.each<[string, string, () => Caller, number, string]>([
    ['a malformed id', 'abc', () => alice, 400, 'Invalid folder id (abc).'],
    ['an unknown id', '0123456789abcdef01234567', () => alice, 400, 'Invalid folder id (0123456789abcdef01234567).'],
  ])('rejects %s', async (_label, id, caller, status, message) => {
    const res = await get(`/folder/${id}`, caller());
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ message, type: 'rest' });
  });

  it('denies READ on a private folder: 401 anonymous, 403 logged in', async () => {
    const anonymous = await get(`/folder/${alicePrivate}`, null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ message: `Read access denied for folder ${alicePrivate} (user None).`, type: 'access' });
    const other = await get(`/folder/${alicePrivate}`, bob);
    expect(other.status).toBe(403);
    expect(other.body).toEqual({ message: `Read access denied for folder ${alicePrivate} (user ${bob._id}).`, type: 'access' });
  });
});

describe('GET /folder/:id/details', () => {
  it('counts the items and the subfolders the caller may read', async () => {
    const parent = await sub(alicePublic, 'Details', alice);
    await sub(parent, 'open 1', alice);
    await sub(parent, 'open 2', alice);
    await sub(parent, 'closed', alice, { public: false });
    await sub(parent, 'shared with bob', alice, { public: false, access: { users: [{ id: alice._id, level: 2 }, { id: bob._id, level: 0 }], groups: [] } });
    const grandChild = await sub(parent, 'open 3', alice);
    await sub(grandChild, 'not direct', alice);
    const expected: [Caller, number][] = [[alice, 5], [admin, 5], [bob, 4], [null, 3]];
    for (const [caller, nFolders] of expected) {
      const res = await get(`/folder/${parent}/details`, caller);
      expect({ caller: caller?.login, status: res.status, body: res.body }).toEqual({ caller: caller?.login, status: 200, body: { nItems: 0, nFolders } });
    }
  });

  it('needs READ on the folder', async () => {
    expect((await get(`/folder/${alicePrivate}/details`, bob)).body).toEqual({
      message: `Read access denied for folder ${alicePrivate} (user ${bob._id}).`, type: 'access',
    });
    expect((await get('/folder/nope/details', bob)).body).toEqual({ message: 'Invalid folder id (nope).', type: 'rest' });
  });
});

describe('GET /folder/:id/rootpath', () => {
  const userObject = (user: TestUser, level: number) => ({
    _id: user._id, _modelType: 'user', _accessLevel: level, login: user.login, public: true, firstName: expect.any(String),
    lastName: expect.any(String), admin: user.admin, created: expect.any(String),
  });

  it('lists the root user and the ancestor folders down to the parent', async () => {
    const l1 = await sub(alicePublic, 'L1', alice);
    const l2 = await sub(l1, 'L2', alice);
    const l3 = await sub(l2, 'L3', alice);
    const res = await get(`/folder/${l3}/rootpath`, bob);
    expect(res.status).toBe(200);
    expect(res.body.map((e: { type: string; object: { _id: string } }) => [e.type, e.object._id])).toEqual([
      ['user', alice._id], ['folder', alicePublic], ['folder', l1], ['folder', l2],
    ]);
    expect(res.body[0].object).toEqual(userObject(alice, -1));
    expect(res.body[0].object).toEqual((await get(`/user/${alice._id}`, bob)).body);
    expect(res.body[3].object).toMatchObject({ _modelType: 'folder', name: 'L2', _accessLevel: -1, metadata: {} });
    expect(res.body[3].object).not.toHaveProperty('access');
  });

  it('shows the root user at the caller’s level (account fields for the user themself)', async () => {
    const res = await get(`/folder/${alicePublic}/rootpath`, alice);
    expect(res.body).toHaveLength(1);
    expect(res.body[0].type).toBe('user');
    expect(res.body[0].object).toMatchObject({ _accessLevel: 2, email: 'alice@example.com', firstName: 'Alice', lastName: 'Liddell' });
  });

  it('follows a move of an ancestor', async () => {
    const from = await sub(alicePublic, 'Move source', alice);
    const moving = await sub(from, 'Moving', alice);
    const leaf = await sub(moving, 'Leaf', alice);
    const to = await sub(alicePublic, 'Move target', alice);
    const moved = await request(server.app)
      .put(`/api/v1/folder/${moving}`)
      .set('Service-Token', alice.token)
      .type('form')
      .send({ parentType: 'folder', parentId: to });
    expect(moved.status).toBe(200);
    const res = await get(`/folder/${leaf}/rootpath`, alice);
    expect(res.body.map((e: { object: { _id: string } }) => e.object._id)).toEqual([alice._id, alicePublic, to, moving]);
  });

  it('fails on the nearest unreadable ancestor', async () => {
    const p1 = await sub(alicePrivate, 'P1', alice);
    const p2 = await sub(p1, 'P2', alice);
    const p3 = await sub(p2, 'P3', alice);
    const anonymous = await get(`/folder/${p3}/rootpath`, null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ message: `Read access denied for folder ${alicePrivate} (user None).`, type: 'access' });
    const other = await get(`/folder/${p3}/rootpath`, bob);
    expect(other.status).toBe(403);
    expect(other.body).toEqual({ message: `Read access denied for folder ${alicePrivate} (user ${bob._id}).`, type: 'access' });
    expect((await get(`/folder/${p3}/rootpath`, alice)).status).toBe(200);
  });

  it('starts at the root collection, shown as GET /collection/:id shows it, and needs READ on it', async () => {
    const openCollection = await createCollection('Open collection', true);
    const top = await createFolder(admin, 'collection', openCollection, 'Top', { public: true });
    const child = await sub(top, 'Child', admin);
    const res = await get(`/folder/${child}/rootpath`, null);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { type: 'collection', object: (await get(`/collection/${openCollection}`, null)).body },
      { type: 'folder', object: (await get(`/folder/${top}`, null)).body },
    ]);
    expect(res.body[0].object).toMatchObject({ _modelType: 'collection', _accessLevel: 0, name: 'Open collection' });

    const closedCollection = await createCollection('Closed collection', false);
    const inside = await createFolder(admin, 'collection', closedCollection, 'Visible', { public: true });
    const denied = await get(`/folder/${inside}/rootpath`, bob);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ message: `Read access denied for collection ${closedCollection} (user ${bob._id}).`, type: 'access' });
  });

  it('needs READ on the folder itself', async () => {
    const res = await get(`/folder/${alicePrivate}/rootpath`, null);
    expect(res.status).toBe(401);
    expect(res.body.message).toBe(`Read access denied for folder ${alicePrivate} (user None).`);
  });
});

describe('GET /folder/:id/access', () => {
  it('returns the access list with user logins and names', async () => {
    const res = await get(`/folder/${alicePrivate}/access`, alice);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ users: [{ id: alice._id, level: 2, flags: [], login: 'alice', name: 'Alice Liddell' }], groups: [] });
  });

  it('leaves out entries whose user or group does not exist', async () => {
    const ghost = newId();
    const id = await createFolder(alice, 'user', alice._id, 'With ghosts', {
      access: { users: [{ id: ghost, level: 2 }, { id: alice._id, level: 2 }, { id: bob._id, level: 1 }], groups: [{ id: newId(), level: 0 }] },
    });
    const res = await get(`/folder/${id}/access`, admin);
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
    const anonymous = await get(`/folder/${alicePublic}/access`, null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ message: 'You must be logged in.', type: 'access' });
    const reader = await get(`/folder/${alicePublic}/access`, bob);
    expect(reader.status).toBe(403);
    expect(reader.body).toEqual({ message: `Admin access denied for folder ${alicePublic} (user ${bob._id}).`, type: 'access' });
    expect((await get(`/folder/${alicePublic}/access`, admin)).status).toBe(200);
  });
});
