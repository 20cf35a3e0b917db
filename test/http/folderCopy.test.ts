import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { rebuild } from '../../src/projections/rebuild';
import { deriveId } from '../../src/domain/ids';

let api: ApiClient;
let admin: TestUser;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let alicePrivate: string;
let alicePublic: string;
let bobPrivate: string;

async function newFolder(user: TestUser, parentId: string, name: string, extra: Record<string, string> = {}): Promise<string> {
  const res = await api.as(user).post('/folder').type('form').send({ parentType: 'folder', parentId, name, ...extra });
  if (res.status !== 200) throw new Error(`POST /folder: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body._id;
}

async function setAccess(by: TestUser, id: string, users: { id: string; level: number }[], extra: Record<string, string> = {}) {
  const res = await api.as(by).put(`/folder/${id}/access`).type('form').send({ access: JSON.stringify({ users, groups: [] }), ...extra });
  if (res.status !== 200) throw new Error(`PUT access: ${res.status} ${JSON.stringify(res.body)}`);
}

const copy = (user: TestUser, id: string, form: Record<string, string> = {}) => api.as(user).post(`/folder/${id}/copy`).type('form').send(form);
const rm = () => api.runtime.services.readModel;
const children = async (user: TestUser, parentId: string) =>
  (await api.as(user).get('/folder').query({ parentType: 'folder', parentId, limit: 0 })).body as Record<string, any>[];
const itemsIn = async (user: TestUser, folderId: string) => (await api.as(user).get('/item').query({ folderId, limit: 0 })).body as Record<string, any>[];
const userSize = async (user: TestUser) => (await api.as(admin).get(`/user/${user._id}`)).body.size as number;
const fullAccess = async (id: string) => (await api.as(admin).get(`/folder/${id}/access`)).body;

let counter = 0;
const unique = (length: number) => `c${++counter}-${Math.random()}`.slice(0, length).padEnd(length, 'z');

/**
 * S (alice; metadata; item s: 10 bytes)
 * ├ A (item a: 20 bytes) ─ A1 (item a1: 30 bytes)
 * └ H (hidden from bob: alice only) ─ H1
 * Bob holds READ on S and A (and so on A1, which inherited S's ACL before bob was added? no: set explicitly).
 */
async function tree() {
  const s = await newFolder(alice, alicePrivate, `S ${++counter}`, { description: 'the source', metadata: JSON.stringify({ k: { deep: [1] } }) });
  const a = await newFolder(alice, s, 'A');
  const a1 = await newFolder(alice, a, 'A1');
  const h = await newFolder(alice, s, 'H');
  const h1 = await newFolder(alice, h, 'H1');
  const readers = [{ id: alice._id, level: 2 }, { id: bob._id, level: 0 }];
  for (const id of [s, a, a1]) await setAccess(alice, id, readers);
  const itemS = await api.newItem(alice, s, 's');
  const fileS = await api.addFile(alice, itemS, unique(10), 's.txt');
  const itemA = await api.newItem(alice, a, 'a');
  await api.addFile(alice, itemA, unique(20));
  const itemA1 = await api.newItem(alice, a1, 'a1');
  await api.addFile(alice, itemA1, unique(30));
  return { s, a, a1, h, h1, itemS, fileS, itemA, itemA1 };
}

beforeAll(async () => {
  // Bytes of deleted files go with the delete here (no retention for restore: see test/http/restore.test.ts).
  api = await startApi({ BLOB_RETENTION_DAYS: '0' });
  admin = await api.createUser('admin');
  alice = await api.createUser('alice');
  bob = await api.createUser('bobby');
  carol = await api.createUser('carol');
  const mine = async (user: TestUser) =>
    Object.fromEntries(((await api.as(user).get(`/folder?parentType=user&parentId=${user._id}`)).body as { name: string; _id: string }[]).map((f) => [f.name, f._id]));
  const a = await mine(alice);
  alicePrivate = a.Private;
  alicePublic = a.Public;
  bobPrivate = (await mine(bob)).Private;
});
afterAll(() => api.close());

describe('POST /folder/:id/copy', () => {
  it('copies the folder, every item (files share the blobs) and the subfolders, into a new parent', async () => {
    const x = await tree();
    const source = (await rm().folders.get(x.s))!;
    const sizeBefore = await userSize(alice);
    const target = await newFolder(alice, alicePublic, `target ${counter}`);

    const res = await copy(alice, x.s, { parentType: 'folder', parentId: target });
    expect(res.status).toBe(200);
    const c = res.body;
    expect(c).toMatchObject({
      _modelType: 'folder', _accessLevel: 2, name: source.name, description: 'the source', parentCollection: 'folder', parentId: target,
      baseParentType: 'user', baseParentId: alice._id, creatorId: alice._id, size: 10, public: true, metadata: { k: { deep: [1] } },
    });
    expect(c._id).not.toBe(x.s);
    expect(c.created).toBe(c.updated);
    expect(c.created > source.created).toBe(true);

    // The tree below it: every subfolder (the copier reads them all) with its items.
    const [cA, cH] = await children(alice, c._id);
    expect([cA.name, cH.name]).toEqual(['A', 'H']);
    expect((await children(alice, cA._id)).map((f) => f.name)).toEqual(['A1']);
    expect((await children(alice, cH._id)).map((f) => f.name)).toEqual(['H1']);
    const [cItem] = await itemsIn(alice, c._id);
    expect(cItem).toMatchObject({ name: 's', copyOfItem: x.itemS, creatorId: alice._id, size: 10, folderId: c._id });
    expect((await itemsIn(alice, cA._id))[0]).toMatchObject({ name: 'a', size: 20, copyOfItem: x.itemA });
    // Files: new records on the same bytes.
    const [cFile] = (await rm().files.listForItem(cItem._id, { limit: 0, offset: 0, sort: '_id', sortdir: 1 })).rows;
    const srcFile = (await rm().files.get(x.fileS))!;
    expect(cFile).toMatchObject({ name: 's.txt', blobId: srcFile.blobId, size: 10, copyOfFile: x.fileS, copierId: alice._id, itemId: cItem._id });
    expect(cFile._id).not.toBe(x.fileS);
    const download = await api.as(alice).get(`/file/${cFile._id}/download`);
    expect(download.status).toBe(200);
    // Sizes: each copy holds its direct items; the root user gains the recursive size.
    expect((await rm().folders.get(cA._id))!.size).toBe(20);
    expect(await userSize(alice)).toBe(sizeBefore + 60);
    // Ancestry: a deep copy knows its whole path.
    const path = await api.as(alice).get(`/folder/${(await children(alice, cA._id))[0]._id}/rootpath`);
    expect(path.body.map((p: { object: { _id: string } }) => p.object._id)).toEqual([alice._id, alicePublic, target, c._id, cA._id]);
    // The source is untouched.
    expect(await rm().folders.get(x.s)).toEqual(source);
  });

  it('gives the copies the new parent’s ACL plus the copier’s ADMIN, not the source’s; publicFlags come from the source', async () => {
    const x = await tree();
    await setAccess(alice, x.s, [{ id: alice._id, level: 2 }, { id: bob._id, level: 0 }, { id: carol._id, level: 1 }], { publicFlags: '[]' });
    const target = await newFolder(bob, bobPrivate, `from alice ${counter}`);
    await setAccess(bob, target, [{ id: bob._id, level: 2 }, { id: admin._id, level: 0 }]);

    const res = await copy(bob, x.s, { parentId: target });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ creatorId: bob._id, public: false, publicFlags: [], baseParentId: bob._id });
    const expected = { users: [{ id: bob._id, level: 2, flags: [] }, { id: admin._id, level: 0, flags: [] }], groups: [] };
    expect((await fullAccess(res.body._id)).users.map((u: { id: string; level: number }) => [u.id, u.level])).toEqual(expected.users.map((u) => [u.id, u.level]));
    const [cA] = await children(bob, res.body._id);
    expect((await rm().folders.get(cA._id))!).toMatchObject({ access: expected, public: false, creatorId: bob._id });
    // Carol had WRITE on the source: nothing of that reaches the copy.
    expect((await api.as(carol).get(`/folder/${res.body._id}`)).status).toBe(403);
  });

  it('copies only the subfolders the copier may read (and nothing below an unreadable one)', async () => {
    const x = await tree();
    const res = await copy(bob, x.s, { parentId: bobPrivate });
    expect(res.status).toBe(200);
    const names = (await children(bob, res.body._id)).map((f) => f.name);
    expect(names).toEqual(['A']);
    expect((await api.as(admin).get(`/folder/${res.body._id}/details`)).body).toEqual({ nItems: 1, nFolders: 1 });
    const [cA] = await children(bob, res.body._id);
    expect((await children(bob, cA._id)).map((f) => f.name)).toEqual(['A1']);
    // Every item of a copied folder is copied.
    expect((await itemsIn(bob, cA._id)).map((i) => i.name)).toEqual(['a']);
    expect(await rm().subtree.subtreeCount(res.body._id)).toBe(6); // S', A', A1' + items s, a, a1
  });

  it('without parentId copies next to the source, renamed `<name> (n)`, with WRITE needed there as anywhere', async () => {
    const x = await tree();
    const name = (await rm().folders.get(x.s))!.name;
    // Bob may only READ the source and cannot write to its parent (alice's Private): stricter than Girder on purpose.
    const refused = await copy(bob, x.s);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ message: `Write access denied for folder ${alicePrivate} (user ${bob._id}).`, type: 'access' });
    const first = await copy(alice, x.s);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ name: `${name} (1)`, parentId: alicePrivate, baseParentId: alice._id });
    const second = await copy(alice, x.s, { name: '' });
    expect(second.body.name).toBe(`${name} (2)`);
    // A sibling item holding the name counts too.
    const host = await newFolder(alice, alicePrivate, `host ${counter}`);
    await api.newItem(alice, host, 'Taken');
    const third = await copy(alice, x.s, { parentId: host, name: ' Taken ' });
    expect(third.status).toBe(200);
    expect(third.body.name).toBe('Taken (1)');
    expect((await copy(alice, x.s, { parentId: host, name: '   ' })).body).toEqual({ message: 'Folder name must not be empty.', type: 'validation', field: 'name' });
  });

  it('needs WRITE on a given parent, READ on the source; validates `public` as a string enum', async () => {
    const x = await tree();
    const denied = await copy(bob, x.s, { parentType: 'folder', parentId: alicePublic });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe(`Write access denied for folder ${alicePublic} (user ${bob._id}).`);
    const hidden = await copy(bob, x.h, { parentId: bobPrivate });
    expect(hidden.status).toBe(403);
    expect(hidden.body.message).toBe(`Read access denied for folder ${x.h} (user ${bob._id}).`);
    const bad = await copy(alice, x.s, { public: 'True' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'Invalid value for public: "True". Allowed values: true, false, original.', type: 'rest' });
    const missing = await copy(alice, x.s, { parentType: 'collection' });
    expect(missing.body).toEqual({ message: `No such collection: ${alicePrivate}`, type: 'validation', field: 'id' });
    const unknown = await copy(alice, x.s, { parentId: '0123456789abcdef01234567' });
    expect(unknown.body).toEqual({ message: 'No such folder: 0123456789abcdef01234567', type: 'validation', field: 'id' });
  });

  it('sets public as asked: true/false explicitly, original = the source’s, absent = inherited (or the source’s under a user)', async () => {
    const x = await tree(); // S is private (alice's Private folder is not public)
    await setAccess(alice, x.s, [{ id: alice._id, level: 2 }], { public: 'true' });
    const target = await newFolder(alice, alicePrivate, `private target ${counter}`, { public: 'false' });
    expect((await copy(alice, x.s, { parentId: target })).body.public).toBe(false);
    expect((await copy(alice, x.s, { parentId: target, public: 'original' })).body.public).toBe(true);
    expect((await copy(alice, x.s, { parentId: target, public: 'false' })).body.public).toBe(false);
    const publicCopy = await copy(alice, x.s, { parentId: target, public: 'true' });
    expect(publicCopy.body.public).toBe(true);
    // Subfolders inherit from their new parent.
    const [cA] = await children(alice, publicCopy.body._id);
    expect((await rm().folders.get(cA._id))!.public).toBe(true);
    // Under a user: no inherited value, so the source's is copied.
    const underUser = await copy(alice, x.s, { parentType: 'user', parentId: alice._id });
    expect(underUser.status).toBe(200);
    expect(underUser.body).toMatchObject({ parentCollection: 'user', public: true, baseParentId: alice._id });
    const [uA] = await children(alice, underUser.body._id);
    expect((await rm().folders.get(uA._id))!.public).toBe(true);
  });

  it('copies a folder into itself once: the copy is never copied again', async () => {
    const x = await tree();
    const res = await copy(alice, x.s, { parentId: x.s });
    expect(res.status).toBe(200);
    expect((await children(alice, x.s)).map((f) => f.name)).toEqual(['A', 'H', res.body.name]);
    expect((await children(alice, res.body._id)).map((f) => f.name)).toEqual(['A', 'H']);
    expect(await rm().subtree.subtreeCount(res.body._id)).toBe(1 + 4 + 3);
    // Into a descendant: same.
    const deep = await copy(alice, x.s, { parentId: x.a1 });
    expect(deep.status).toBe(200);
    const copied = await children(alice, deep.body._id);
    expect(copied.map((f) => f.name)).toEqual(['A', 'H', res.body.name]);
    const [dA] = copied;
    const [dA1] = await children(alice, dA._id);
    expect((await children(alice, dA1._id)).map((f) => f.name)).toEqual([]);
    // S, A, A1, H, H1 with items s, a, a1, and the earlier copy of all that: copied once, whole.
    expect(await rm().subtree.subtreeCount(deep.body._id)).toBe(2 * (1 + 4 + 3));
  });

  it('derives the ids of the copies from the operation', async () => {
    const x = await tree();
    const res = await copy(alice, x.s, { parentId: alicePublic });
    const events = await api.runtime.services.commands.readAll(`folder-${res.body._id}`);
    expect(events.map((e) => e.type)).toEqual(['FolderCopied']);
    const opId = (events[0].data as { opId: string }).opId;
    const [cA] = await children(alice, res.body._id);
    expect(cA._id).toBe(deriveId(opId, x.a));
    expect((await itemsIn(alice, res.body._id))[0]._id).toBe(deriveId(opId, x.itemS));
  });

  it('reports progress: total = the unfiltered subtree count of the source', async () => {
    const x = await tree();
    const name = (await rm().folders.get(x.s))!.name;
    expect((await copy(bob, x.s, { parentId: bobPrivate, progress: 'true' })).status).toBe(200);
    const records = (await api.runtime.services.notifications.list({ userId: bob._id, tokenId: null })).filter(
      (n) => n.data.title === `Copying folder ${name}`,
    );
    expect(records).toHaveLength(1);
    // S, A, A1, H, H1 + items s, a, a1 (H and H1 count although bob copies neither).
    expect(records[0].data).toMatchObject({ total: 8, current: 8, state: 'success', message: 'Done' });
  });

  it('records the copies and their sources in the history index', async () => {
    const x = await tree();
    const res = await copy(alice, x.s, { parentId: alicePublic });
    const [cA] = await children(alice, res.body._id);
    expect((await rm().subtree.subtreeOpsFor(cA._id)).map((o) => [o.operation, o.rootId])).toEqual([['copied', res.body._id]]);
    expect((await rm().subtree.subtreeOpsFor(x.a)).map((o) => [o.operation, o.rootId])).toEqual([['copiedFrom', res.body._id]]);
  });
});

describe('the copies are folders, items and files like any other', () => {
  it('can be renamed, moved, re-permissioned, given metadata, emptied, copied and deleted', async () => {
    const x = await tree();
    const c = (await copy(alice, x.s, { parentId: alicePublic })).body;
    const [cA] = await children(alice, c._id);
    const renamed = await api.as(alice).put(`/folder/${cA._id}`).type('form').send({ name: 'A renamed', metadata: JSON.stringify({ more: 1 }) });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'A renamed', metadata: { more: 1 } });
    const meta = await api.as(alice).put(`/folder/${cA._id}/metadata`).set('Content-Type', 'application/json').send('{"again": 2}');
    expect(meta.body.metadata).toEqual({ more: 1, again: 2 });
    expect((await api.as(alice).put(`/folder/${cA._id}/access`).type('form').send({ access: JSON.stringify({ users: [{ id: alice._id, level: 2 }] }), recurse: 'true' })).status).toBe(200);
    const moved = await api.as(alice).put(`/folder/${cA._id}`).type('form').send({ parentType: 'folder', parentId: alicePrivate });
    expect(moved.body).toMatchObject({ parentId: alicePrivate });
    // A sibling name the copy holds is taken.
    const clash = await api.as(alice).post('/folder').type('form').send({ parentType: 'folder', parentId: c._id, name: 'H' });
    expect(clash.body).toEqual({ message: 'A folder with that name already exists here.', type: 'validation', field: 'name' });
    // A copy of a copy.
    const again = await copy(alice, cA._id, { parentId: alicePublic });
    expect(again.status).toBe(200);
    expect((await children(alice, again.body._id)).map((f) => f.name)).toEqual(['A1']);
    // Items and files in a copy.
    const [cItem] = await itemsIn(alice, c._id);
    const updated = await api.as(alice).put(`/item/${cItem._id}`).type('form').send({ name: 's renamed' });
    expect(updated.status).toBe(200);
    expect(updated.body.name).toBe('s renamed');
    const itemCopy = await api.as(alice).post(`/item/${cItem._id}/copy`).type('form').send({ folderId: alicePublic });
    expect(itemCopy.status).toBe(200);
    expect(itemCopy.body.size).toBe(10);
    expect((await api.as(alice).delete(`/item/${cItem._id}`)).status).toBe(200);
    const cH = (await children(alice, c._id)).find((f) => f.name === 'H')!;
    expect((await api.as(alice).delete(`/folder/${cH._id}`)).body).toEqual({ message: 'Deleted folder H.' });
    expect((await api.as(alice).put(`/folder/${cH._id}`).type('form').send({ name: 'gone' })).status).toBe(400);
    expect((await api.as(alice).delete(`/folder/${c._id}/contents`)).status).toBe(200);
    expect((await api.as(alice).delete(`/folder/${c._id}`)).status).toBe(200);
    expect(await rm().folders.get(c._id)).toBeNull();
  });

  it('keeps the shared bytes until no file references them', async () => {
    const x = await tree();
    const blobId = (await rm().files.get(x.fileS))!.blobId;
    const c = (await copy(alice, x.s, { parentId: alicePublic })).body;
    expect((await api.as(alice).delete(`/folder/${x.s}`)).status).toBe(200);
    expect(await api.runtime.services.blobs.exists(blobId)).toBe(true);
    expect(await rm().files.isBlobReferenced(blobId)).toBe(true);
    expect((await api.as(alice).delete(`/folder/${c._id}`)).status).toBe(200);
    expect(await api.runtime.services.blobs.exists(blobId)).toBe(false);
  });
});

it('rebuilding the read models from the log gives exactly the live state (same copy ids)', async () => {
  const { eventStore, readModel } = api.runtime.services;
  const live = await readModel.dump();
  await rebuild(eventStore, readModel);
  expect(await readModel.dump()).toEqual(live);
});
