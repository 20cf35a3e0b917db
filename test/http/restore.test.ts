import { ok, startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { purgeExpiredBlobs } from '../../src/commands/blobReclaim';
import { rebuild } from '../../src/projections/rebuild';

let api: ApiClient;
let admin: TestUser;
let alice: TestUser;
let bob: TestUser;
let alicePrivate: string;

const rm = () => api.runtime.services.readModel;
const blobOf = async (fileId: string) => (await rm().files.get(fileId))!.blobId;
const userSize = async (user: TestUser) => (await api.as(admin).get(`/user/${user._id}`)).body.size as number;

let counter = 0;
/** Bytes no other test uses (binary, so a byte-exact round trip means something). */
const unique = (length: number) => {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + ++counter * 7) & 0xff;
  bytes.write(`u${counter}-${Math.random()}`.slice(0, Math.min(length, 20)));
  return bytes;
};

/**
 * T ─ A ─ A1 (item a1: file 1000 bytes, file 3 bytes)
 *   │   └ A2 (bob only; item a2: 2000 bytes)
 *   └ item t (40 bytes)
 */
async function tree(owner = alice, parent = alicePrivate) {
  const t = await api.newFolder(owner, parent, `T ${Math.random()}`);
  const a = await api.newFolder(owner, t, 'A');
  const a1 = await api.newFolder(owner, a, 'A1');
  const a2 = await api.newFolder(owner, a, 'A2');
  const bobOnly = { users: [{ id: bob._id, level: 2 }], groups: [] };
  ok(await api.putFolderAccess(admin, a2, bobOnly), 'access');
  ok(
    await api.as(owner).put(`/folder/${a1}/metadata`).set('Content-Type', 'application/json').send('{"k": "v"}'),
    'metadata',
  );
  const itemA1 = await api.newItem(owner, a1, 'a1');
  const bytes = { a1: unique(1000), a1b: unique(3), a2: unique(2000), t: unique(40) };
  const fileA1 = await api.addFile(owner, itemA1, bytes.a1, 'one.bin');
  const fileA1b = await api.addFile(owner, itemA1, bytes.a1b, 'two.bin');
  const itemA2 = await api.newItem(admin, a2, 'a2');
  const fileA2 = await api.addFile(admin, itemA2, bytes.a2);
  const itemT = await api.newItem(owner, t, 't');
  const fileT = await api.addFile(owner, itemT, bytes.t);
  return { t, a, a1, a2, itemA1, itemA2, itemT, fileA1, fileA1b, fileA2, fileT, bytes };
}

beforeAll(async () => {
  api = await startApi();
  admin = await api.createUser('admin');
  alice = await api.createUser('alice');
  bob = await api.createUser('bobby');
  alicePrivate = await api.defaultFolder(alice, 'Private');
});
afterAll(() => api.close());

describe('POST /folder/:id/restore', () => {
  it('brings a deleted folder back with its subtree, items and files, byte for byte', async () => {
    const x = await tree();
    const before = {
      t: (await api.as(admin).get(`/folder/${x.t}`)).body,
      a1: (await api.as(admin).get(`/folder/${x.a1}`)).body,
      a2Access: (await api.as(admin).get(`/folder/${x.a2}/access`)).body,
      items: (await api.as(admin).get(`/item/${x.itemA1}`)).body,
      files: (await api.as(admin).get(`/item/${x.itemA1}/files`)).body,
      size: await userSize(alice),
    };
    const blobs = [await blobOf(x.fileA1), await blobOf(x.fileA2), await blobOf(x.fileT)];
    ok(await api.as(alice).delete(`/folder/${x.t}`), 'delete');
    expect((await api.as(alice).get(`/folder/${x.t}`)).status).toBe(400);
    expect(await userSize(alice)).toBe(before.size - 3043);
    // The bytes are kept for the retention period.
    for (const blobId of blobs) expect(await api.runtime.services.blobs.exists(blobId)).toBe(true);

    const res = await api.as(alice).post(`/folder/${x.t}/restore`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(before.t);
    expect((await api.as(admin).get(`/folder/${x.a1}`)).body).toEqual(before.a1);
    expect((await api.as(admin).get(`/folder/${x.a2}/access`)).body).toEqual(before.a2Access);
    expect((await api.as(admin).get(`/item/${x.itemA1}`)).body).toEqual(before.items);
    expect((await api.as(admin).get(`/item/${x.itemA1}/files`)).body).toEqual(before.files);
    expect(await userSize(alice)).toBe(before.size);
    // ACLs as before: alice does not see bob's A2, bob does.
    expect((await api.as(alice).get(`/folder/${x.a2}`)).status).toBe(403);
    expect((await api.as(bob).get(`/folder/${x.a2}`)).status).toBe(200);
    const listed = ok<{ name: string }[]>(
      await api.as(alice).get(`/folder?parentType=folder&parentId=${x.a}`),
      'list',
    ).map((f) => f.name);
    expect(listed).toEqual(['A1']);
    expect((await api.as(admin).get(`/folder/${x.t}/details`)).body).toEqual({ nItems: 1, nFolders: 1 });
    // Search finds them again.
    expect(
      ok<{ _id: string }[]>(await api.as(admin).get('/item').query({ text: 'a1' }), 'search').map((i) => i._id),
    ).toContain(x.itemA1);

    // Byte-exact downloads.
    for (const [fileId, bytes, user] of [
      [x.fileA1, x.bytes.a1, alice],
      [x.fileA1b, x.bytes.a1b, alice],
      [x.fileA2, x.bytes.a2, bob],
      [x.fileT, x.bytes.t, alice],
    ] as const) {
      const got = await api.download(user, fileId);
      expect(got.status).toBe(200);
      expect(Buffer.compare(got.body as Buffer, bytes)).toBe(0);
    }

    // The restored folder works like any other: writes, a second delete and restore.
    ok(await api.as(alice).put(`/folder/${x.t}`).type('form').send({ description: 'after restore' }), 'update');
    ok(await api.as(alice).delete(`/folder/${x.t}`), 'delete again');
    expect((await api.as(alice).post(`/folder/${x.t}/restore`)).status).toBe(200);
    expect((await api.as(alice).get(`/folder/${x.t}`)).body.description).toBe('after restore');

    // A rebuild from the log gives exactly the live read models (restore is replayable).
    const live = await rm().dump();
    await rebuild(api.runtime.services.eventStore, rm());
    expect(await rm().dump()).toEqual(live);
  });

  it('restores under the old parent, renaming on a collision', async () => {
    const t = await api.newFolder(alice, alicePrivate, 'Twin');
    ok(await api.as(alice).delete(`/folder/${t}`), 'delete');
    const other = await api.newFolder(alice, alicePrivate, 'Twin');
    const res = await api.as(alice).post(`/folder/${t}/restore`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ _id: t, name: 'Twin (1)', parentId: alicePrivate });
    expect((await api.as(alice).get(`/folder/${other}`)).body.name).toBe('Twin');
  });

  it('needs parentId when the original parent is gone, and restores there', async () => {
    const outer = await api.newFolder(alice, alicePrivate, `Outer ${Math.random()}`);
    const x = await tree(alice, outer);
    ok(await api.as(alice).delete(`/folder/${x.a}`), 'delete A');
    ok(await api.as(alice).delete(`/folder/${outer}`), 'delete outer (and T)');
    // A1 went with A; its parent A is gone too.
    const missing = await api.as(alice).post(`/folder/${x.a}/restore`);
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({
      message: 'The original parent no longer exists; pass parentId.',
      type: 'validation',
      field: 'parentId',
    });
    const res = await api.as(alice).post(`/folder/${x.a}/restore`).query({ parentId: alicePrivate });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ _id: x.a, name: 'A', parentCollection: 'folder', parentId: alicePrivate });
    expect((await api.as(alice).get(`/folder/${x.a1}`)).body.parentId).toBe(x.a);
    expect((await api.as(admin).get(`/item/${x.itemA1}`)).body.folderId).toBe(x.a1);
    expect(
      (await api.as(admin).get(`/folder/${x.a1}/rootpath`)).body.map((e: { object: { _id: string } }) => e.object._id),
    ).toEqual([alice._id, alicePrivate, x.a]);
    // T (deleted with outer) comes back without A, which was restored on its own.
    const t = await api.as(alice).post(`/folder/${x.t}/restore`).query({ parentType: 'user', parentId: alice._id });
    expect(t.status).toBe(200);
    expect(t.body).toMatchObject({ parentCollection: 'user', parentId: alice._id, baseParentType: 'user' });
    expect((await api.as(admin).get(`/folder/${x.t}/details`)).body).toEqual({ nItems: 1, nFolders: 0 });
  });

  it('restores a subfolder removed by emptying its parent', async () => {
    const x = await tree();
    ok(await api.as(alice).delete(`/folder/${x.t}/contents`), 'clear');
    expect((await api.as(alice).get(`/folder/${x.a}`)).status).toBe(400);
    const res = await api.as(alice).post(`/folder/${x.a}/restore`);
    expect(res.status).toBe(200);
    expect(res.body.parentId).toBe(x.t);
    expect((await api.as(admin).get(`/folder/${x.t}/details`)).body).toEqual({ nItems: 0, nFolders: 1 });
    expect(Buffer.compare((await api.download(alice, x.fileA1)).body as Buffer, x.bytes.a1)).toBe(0);
  });

  it('is allowed to site admins and to who had ADMIN on the folder when it was deleted', async () => {
    const x = await tree();
    ok(await api.as(alice).delete(`/folder/${x.t}`), 'delete');
    const denied = await api.as(bob).post(`/folder/${x.t}/restore`);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({
      message: `Admin access denied for folder ${x.t} (user ${bob._id}).`,
      type: 'access',
    });
    expect((await api.anonymous().post(`/folder/${x.t}/restore`)).status).toBe(401);
    // bob had ADMIN on A2 (deleted with T): he may restore it, somewhere he can write.
    const bobPrivate = await api.defaultFolder(bob, 'Private');
    expect((await api.as(bob).post(`/folder/${x.a2}/restore`).query({ parentId: bobPrivate })).status).toBe(200);
    expect((await api.as(admin).post(`/folder/${x.t}/restore`)).status).toBe(200);
  });

  it('refuses folders that are not deleted, unknown ids and parents the caller cannot write', async () => {
    const t = await api.newFolder(alice, alicePrivate, 'Alive');
    expect((await api.as(alice).post(`/folder/${t}/restore`)).body).toEqual({
      message: 'The folder is not deleted.',
      type: 'rest',
    });
    const unknown = '0123456789abcdef01234567';
    expect((await api.as(admin).post(`/folder/${unknown}/restore`)).body).toEqual({
      message: `Invalid folder id (${unknown}).`,
      type: 'rest',
    });
    ok(await api.as(alice).delete(`/folder/${t}`), 'delete');
    const bobPrivate = await api.defaultFolder(bob, 'Private');
    const res = await api.as(alice).post(`/folder/${t}/restore`).query({ parentId: bobPrivate });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe(`Write access denied for folder ${bobPrivate} (user ${alice._id}).`);
  });

  it('keeps the bytes for BLOB_RETENTION_DAYS, then the purge removes them and restore is refused', async () => {
    const x = await tree();
    const blobA1 = await blobOf(x.fileA1);
    ok(await api.as(alice).delete(`/folder/${x.t}`), 'delete');
    const services = api.runtime.services;
    expect(await services.blobs.exists(blobA1)).toBe(true);
    // Eight days on, the retention (7 days by default) is over: the purge takes the bytes.
    await purgeExpiredBlobs(services, new Date(0).toISOString(), Date.now() + 8 * 86_400_000);
    expect(await services.blobs.exists(blobA1)).toBe(false);
    const res = await api.as(alice).post(`/folder/${x.t}/restore`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: "The folder's files were purged; it can no longer be restored.",
      type: 'rest',
    });
  });
});

describe('restore with BLOB_RETENTION_DAYS=0', () => {
  let zero: ApiClient;
  afterAll(() => zero?.close());

  it('purges the bytes with the delete, and refuses the restore', async () => {
    zero = await startApi({ BLOB_RETENTION_DAYS: '0' });
    const owner = await zero.createUser('owner');
    const privateId = await zero.defaultFolder(owner, 'Private');
    const folder = await zero.newFolder(owner, privateId, 'Short-lived');
    const item = await zero.newItem(owner, folder, 'i');
    const file = await zero.addFile(owner, item, unique(64));
    const blobId = (await zero.runtime.services.readModel.files.get(file))!.blobId;
    ok(await zero.as(owner).delete(`/folder/${folder}`), 'delete');
    expect(await zero.runtime.services.blobs.exists(blobId)).toBe(false);
    const res = await zero.as(owner).post(`/folder/${folder}/restore`);
    expect(res.body).toEqual({
      message: "The folder's files were purged; it can no longer be restored.",
      type: 'rest',
    });
  });
});
