import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { decodeToken, encodeToken, joinPath, splitPath } from '../../src/queries/resourcePaths';

/** GET /resource/lookup and GET /resource/:id/path (the routes girder_client uses to resolve parents). */

let api: ApiClient;
let admin: TestUser;
let alice: TestUser;
let bob: TestUser;
let alicePublic: string;
let alicePrivate: string;
let sub: string;
let slashed: string;
let hiddenParent: string;
let openChild: string;
let item: string;
let file: string;
let privateItem: string;
let collection: string;
let collectionFolder: string;

type Caller = TestUser | null;

function get(path: string, caller: Caller, query: Record<string, string> = {}) {
  const req = api.anonymous().get(path).query(query);
  return caller ? req.set('Girder-Token', caller.token) : req;
}

async function post(path: string, caller: TestUser, form: Record<string, string>, body?: Buffer) {
  const req = api.anonymous().post(path).set('Girder-Token', caller.token);
  const res = body ? await req.query(form).set('Content-Type', 'application/octet-stream').send(body) : await req.type('form').send(form);
  if (res.status !== 200) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const folderIn = async (owner: TestUser, parentType: string, parentId: string, name: string, isPublic = true) =>
  (await post('/folder', owner, { parentType, parentId, name, public: String(isPublic) }))._id as string;

beforeAll(async () => {
  api = await startApi();
  admin = await api.createUser('admin');
  alice = await api.createUser('alice');
  bob = await api.createUser('bobby');
  const defaults = await get('/folder', alice, { parentType: 'user', parentId: alice._id });
  alicePublic = defaults.body.find((f: { name: string }) => f.name === 'Public')._id;
  alicePrivate = defaults.body.find((f: { name: string }) => f.name === 'Private')._id;
  sub = await folderIn(alice, 'folder', alicePublic, 'Sub');
  slashed = await folderIn(alice, 'folder', alicePublic, 'a/b\\c');
  hiddenParent = await folderIn(alice, 'folder', alicePublic, 'Hidden', false);
  openChild = await folderIn(alice, 'folder', hiddenParent, 'Open');
  item = (await post('/item', alice, { folderId: sub, name: 'thing' }))._id;
  file = (await post('/file', alice, { parentType: 'item', parentId: item, name: 'data.bin', size: '3' }, Buffer.from('abc')))._id;
  privateItem = (await post('/file', alice, { parentType: 'folder', parentId: alicePrivate, name: 'secret.txt', size: '1' }, Buffer.from('s'))).itemId;
  collection = (await post('/collection', admin, { name: 'Coll', public: 'true' }))._id;
  collectionFolder = await folderIn(admin, 'collection', collection, 'Shared');
});
afterAll(() => api.close());

describe('path encoding', () => {
  it('escapes and splits like Girder', () => {
    expect(encodeToken('a/b\\c')).toBe('a\\/b\\\\c');
    expect(decodeToken('a\\/b\\\\c')).toBe('a/b\\c');
    expect(joinPath(['user', 'alice', 'a/b'])).toBe('user/alice/a\\/b');
    expect(splitPath('user/alice/a\\/b\\\\c/d')).toEqual(['user', 'alice', 'a/b\\c', 'd']);
    // An even number of backslashes does not escape the slash.
    expect(splitPath('x\\\\/y')).toEqual(['x\\', 'y']);
  });
});

describe('GET /resource/lookup', () => {
  it('resolves users, collections, folders, items and files, returning the filtered document', async () => {
    const user = await get('/resource/lookup', alice, { path: '/user/alice' });
    expect(user.status).toBe(200);
    expect(user.body).toMatchObject({ _id: alice._id, _modelType: 'user', login: 'alice' });
    const folder = await get('/resource/lookup', null, { path: '/user/alice/Public/Sub' });
    expect(folder.body).toMatchObject({ _id: sub, _modelType: 'folder', name: 'Sub' });
    expect(folder.body.access).toBeUndefined();
    const foundItem = await get('/resource/lookup', null, { path: '/user/alice/Public/Sub/thing' });
    expect(foundItem.body).toMatchObject({ _id: item, _modelType: 'item', name: 'thing', folderId: sub });
    const foundFile = await get('/resource/lookup', null, { path: '/user/alice/Public/Sub/thing/data.bin' });
    expect(foundFile.body).toMatchObject({ _id: file, _modelType: 'file', name: 'data.bin', size: 3 });
    const coll = await get('/resource/lookup', null, { path: '/collection/Coll' });
    expect(coll.body).toMatchObject({ _id: collection, _modelType: 'collection' });
    const collFolder = await get('/resource/lookup', null, { path: 'collection/Coll/Shared' });
    expect(collFolder.body).toMatchObject({ _id: collectionFolder, _modelType: 'folder' });
  });

  it('reads escaped slashes and backslashes inside names', async () => {
    const res = await get('/resource/lookup', alice, { path: '/user/alice/Public/a\\/b\\\\c' });
    expect(res.status).toBe(200);
    expect(res.body._id).toBe(slashed);
  });

  it('answers a missing or unreadable descendant alike: 400 Path not found (the path without its leading slash)', async () => {
    const missing = await get('/resource/lookup', alice, { path: '/user/alice/Public/Nope' });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: 'Path not found: user/alice/Public/Nope', type: 'validation' });
    for (const caller of [null, bob]) {
      const hidden = await get('/resource/lookup', caller, { path: '/user/alice/Private' });
      expect(hidden.status).toBe(400);
      expect(hidden.body).toEqual({ message: 'Path not found: user/alice/Private', type: 'validation' });
      const below = await get('/resource/lookup', caller, { path: '/user/alice/Public/Hidden/Open' });
      expect(below.body).toEqual({ message: 'Path not found: user/alice/Public/Hidden/Open', type: 'validation' });
    }
    expect((await get('/resource/lookup', alice, { path: '/user/alice/Private' })).body._id).toBe(alicePrivate);
    expect((await get('/resource/lookup', alice, { path: '/user/alice/Private/secret.txt' })).body._id).toBe(privateItem);
    // A trailing slash names an empty last segment.
    expect((await get('/resource/lookup', alice, { path: '/user/alice/Public/' })).body.message).toBe('Path not found: user/alice/Public/');
  });

  it('names an unknown root, and rejects other path kinds', async () => {
    expect((await get('/resource/lookup', alice, { path: '/user/nobody/x' })).body).toEqual({ message: 'User not found: nobody', type: 'validation' });
    expect((await get('/resource/lookup', alice, { path: '/collection/None' })).body).toEqual({ message: 'Collection not found: None', type: 'validation' });
    for (const path of ['/group/x', '', '/user']) {
      const res = await get('/resource/lookup', alice, { path });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: 'Invalid path format', type: 'validation' });
    }
    expect((await get('/resource/lookup', alice, {})).body).toEqual({ message: "Parameter 'path' is required.", type: 'rest' });
  });

  it('with test=True answers null instead of "not found"', async () => {
    for (const path of ['/user/alice/Public/Nope', '/user/nobody', '/collection/None', '/user/alice/Private']) {
      const res = await get('/resource/lookup', bob, { path, test: 'True' });
      expect(res.status).toBe(200);
      expect(res.text).toBe('null');
    }
    expect((await get('/resource/lookup', bob, { path: '/user/alice/Public/Sub', test: 'True' })).body._id).toBe(sub);
    expect((await get('/resource/lookup', bob, { path: '/user/alice/Public/Nope', test: 'False' })).status).toBe(400);
    expect((await get('/resource/lookup', bob, { path: '/bad', test: 'True' })).body.message).toBe('Invalid path format');
  });
});

describe('GET /resource/:id/path', () => {
  it('gives the path of every kind of resource', async () => {
    const cases: [string, string, string][] = [
      [alice._id, 'user', '/user/alice'],
      [sub, 'folder', '/user/alice/Public/Sub'],
      [item, 'item', '/user/alice/Public/Sub/thing'],
      [file, 'file', '/user/alice/Public/Sub/thing/data.bin'],
      [slashed, 'folder', '/user/alice/Public/a\\/b\\\\c'],
      [collection, 'collection', '/collection/Coll'],
      [collectionFolder, 'folder', '/collection/Coll/Shared'],
    ];
    for (const [id, type, path] of cases) {
      const res = await get(`/resource/${id}/path`, null, { type });
      expect({ type, status: res.status, body: res.body }).toEqual({ type, status: 200, body: path });
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      // The path resolves back to the same resource.
      expect((await get('/resource/lookup', null, { path })).body._id).toBe(id);
    }
  });

  it('answers 400 "Invalid resource id." for an id of another type, so that girder_client can probe the type', async () => {
    const probe = async (id: string) => {
      const statuses: Record<string, number> = {};
      for (const type of ['folder', 'collection', 'user', 'item', 'file']) {
        const res = await get(`/resource/${id}/path`, alice, { type });
        statuses[type] = res.status;
        if (res.status === 400) expect(res.body).toEqual({ message: 'Invalid resource id.', type: 'rest' });
      }
      return statuses;
    };
    expect(await probe(sub)).toEqual({ folder: 200, collection: 400, user: 400, item: 400, file: 400 });
    expect(await probe(collection)).toEqual({ folder: 400, collection: 200, user: 400, item: 400, file: 400 });
    expect(await probe(alice._id)).toEqual({ folder: 400, collection: 400, user: 200, item: 400, file: 400 });
    expect(await probe(item)).toEqual({ folder: 400, collection: 400, user: 400, item: 200, file: 400 });
    expect(await probe(file)).toEqual({ folder: 400, collection: 400, user: 400, item: 400, file: 200 });
    expect(await probe('not-an-id')).toEqual({ folder: 400, collection: 400, user: 400, item: 400, file: 400 });
  });

  it('checks the type and requires it', async () => {
    expect((await get(`/resource/${sub}/path`, alice, { type: 'group' })).body).toEqual({ message: 'Invalid resources format.', type: 'rest' });
    expect((await get(`/resource/${sub}/path`, alice)).body).toEqual({ message: "Parameter 'type' is required.", type: 'rest' });
  });

  it('needs READ on the resource and on every ancestor', async () => {
    const anonymous = await get(`/resource/${alicePrivate}/path`, null, { type: 'folder' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ message: `Read access denied for folder ${alicePrivate} (user None).`, type: 'access' });
    const other = await get(`/resource/${privateItem}/path`, bob, { type: 'item' });
    expect(other.status).toBe(403);
    expect(other.body).toEqual({ message: `Read access denied for item ${privateItem} (user ${bob._id}).`, type: 'access' });
    // A public folder below a private one: the private ancestor refuses.
    const below = await get(`/resource/${openChild}/path`, bob, { type: 'folder' });
    expect(below.status).toBe(403);
    expect(below.body).toEqual({ message: `Read access denied for folder ${hiddenParent} (user ${bob._id}).`, type: 'access' });
    expect((await get(`/resource/${openChild}/path`, alice, { type: 'folder' })).body).toBe('/user/alice/Public/Hidden/Open');
  });
});
