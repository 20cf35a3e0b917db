import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { rebuild } from '../../src/projections/rebuild';
import { createFolder, setFolderMetadata } from '../../src/commands/folderCommands';
import { createItem } from '../../src/commands/itemCommands';
import { systemMeta } from '../../src/commands/requestMeta';
import { toNewEvents } from '../../src/commands/streamHandle';
import { folderStream } from '../../src/domain/folder';

let api: ApiClient;
let admin: TestUser;
let alice: TestUser;
let bob: TestUser;
let alicePrivate: string;

async function newFolder(user: TestUser, parentId: string, name: string, parentType = 'folder'): Promise<string> {
  const res = await api.as(user).post('/folder').type('form').send({ parentType, parentId, name });
  if (res.status !== 200) throw new Error(`POST /folder: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body._id;
}

const blobOf = async (fileId: string) => (await api.runtime.services.readModel.files.get(fileId))!.blobId;
const blobExists = (blobId: string) => api.runtime.services.blobs.exists(blobId);
const folderDoc = (id: string) => api.runtime.services.readModel.folders.get(id);
const userSize = async (user: TestUser) => (await api.as(admin).get(`/user/${user._id}`)).body.size as number;
const progressRecords = async (user: TestUser, title: string) =>
  (await api.runtime.services.notifications.list({ userId: user._id, tokenId: null })).filter(
    (n) => n.data.title === title,
  );

let counter = 0;
/** Bytes no other test uses, of exactly `length` bytes. */
const unique = (length: number) => `u${++counter}-${Math.random()}`.slice(0, length).padEnd(length, 'z');

/**
 * T ─ A ─ A1 (item a1: 10 bytes)
 *   │   └ A2 (bob only; item a2: 20 bytes)
 *   ├ B (item b: 30 bytes, the same bytes as item `keep` outside T)
 *   └ item t (40 bytes)
 * Outside: item `keep` in alice's Private. Everything is under alice (admin created a2).
 */
async function tree() {
  const t = await newFolder(alice, alicePrivate, `T ${Math.random()}`);
  const a = await newFolder(alice, t, 'A');
  const a1 = await newFolder(alice, a, 'A1');
  const a2 = await newFolder(alice, a, 'A2');
  const bobOnly = { users: [{ id: bob._id, level: 2 }], groups: [] };
  expect((await api.putFolderAccess(admin, a2, bobOnly)).status).toBe(200);
  const b = await newFolder(alice, t, 'B');
  const itemA1 = await api.newItem(alice, a1, 'a1');
  const fileA1 = await api.addFile(alice, itemA1, unique(10));
  const itemA2 = await api.newItem(admin, a2, 'a2');
  const fileA2 = await api.addFile(admin, itemA2, unique(20));
  const itemB = await api.newItem(alice, b, 'b');
  const shared = unique(30);
  const fileB = await api.addFile(alice, itemB, shared);
  const itemT = await api.newItem(alice, t, 't');
  await api.addFile(alice, itemT, unique(40));
  const keep = await api.newItem(alice, alicePrivate, `keep ${t}`);
  await api.addFile(alice, keep, shared);
  return { t, a, a1, a2, b, itemA1, itemA2, itemB, itemT, fileA1, fileA2, fileB, keep };
}

beforeAll(async () => {
  // Bytes of deleted files go with the delete here (no retention for restore: see test/http/restore.test.ts).
  api = await startApi({ BLOB_RETENTION_DAYS: '0' });
  admin = await api.createUser('admin');
  alice = await api.createUser('alice');
  bob = await api.createUser('bobby');
  const folders = await api.as(alice).get(`/folder?parentType=user&parentId=${alice._id}`);
  alicePrivate = folders.body.find((f: { name: string }) => f.name === 'Private')._id;
});
afterAll(() => api.close());

describe('DELETE /folder/:id', () => {
  it('removes the folder, every descendant (readable or not), their items and files; sizes and bytes follow', async () => {
    const x = await tree();
    const parentBefore = await folderDoc(alicePrivate);
    const sizeBefore = await userSize(alice);
    const blobs = { a1: await blobOf(x.fileA1), a2: await blobOf(x.fileA2), b: await blobOf(x.fileB) };
    const name = (await folderDoc(x.t))!.name;

    const res = await api.as(alice).delete(`/folder/${x.t}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: `Deleted folder ${name}.` });

    for (const id of [x.t, x.a, x.a1, x.a2, x.b]) {
      expect((await api.as(admin).get(`/folder/${id}`)).body).toEqual({
        message: `Invalid folder id (${id}).`,
        type: 'rest',
      });
    }
    for (const id of [x.itemA1, x.itemA2, x.itemB, x.itemT])
      expect((await api.as(admin).get(`/item/${id}`)).status).toBe(400);
    expect(await api.runtime.services.readModel.files.get(x.fileA1)).toBeNull();
    // The parent folder's size counts its direct items only: unchanged, as is its `updated`.
    expect(await folderDoc(alicePrivate)).toEqual(parentBefore);
    expect(await userSize(alice)).toBe(sizeBefore - (10 + 20 + 30 + 40));
    // Bytes only the subtree referenced are gone; bytes a file outside still references stay.
    expect(await blobExists(blobs.a1)).toBe(false);
    expect(await blobExists(blobs.a2)).toBe(false);
    expect(await blobExists(blobs.b)).toBe(true);
    // Nothing of the subtree is left in the SQLite adapter's tables (folder rows and their children, ACL rows, text index); the
    // MongoDB adapter keeps those inside the documents, which the GETs above already proved gone.
    if (!process.env.TEST_READ_MODEL) {
      const db = api.runtime.db;
      const ids = JSON.stringify([x.t, x.a, x.a1, x.a2, x.b]);
      expect(
        db
          .prepare(
            'SELECT COUNT(*) AS n FROM rm_folders WHERE id IN (SELECT value FROM json_each(?)) OR parent_id IN (SELECT value FROM json_each(?))',
          )
          .get(ids, ids),
      ).toEqual({ n: 0 });
      expect(
        db.prepare('SELECT COUNT(*) AS n FROM rm_acl WHERE resource_id IN (SELECT value FROM json_each(?))').get(ids),
      ).toEqual({ n: 0 });
      expect(
        db.prepare('SELECT COUNT(*) AS n FROM rm_folders_fts WHERE id IN (SELECT value FROM json_each(?))').get(ids),
      ).toEqual({ n: 0 });
    }
  });

  it('takes the recursive size off the root user (the sum of every deleted folder’s direct items)', async () => {
    const t = await newFolder(alice, alicePrivate, 'Sized');
    const sub = await newFolder(alice, t, 'Sub');
    await api.addFile(alice, await api.newItem(alice, t, 'one'), '1234');
    await api.addFile(alice, await api.newItem(alice, sub, 'two'), '123456');
    const before = await userSize(alice);
    expect((await api.as(alice).delete(`/folder/${t}`)).status).toBe(200);
    expect(await userSize(alice)).toBe(before - 10);
  });

  it('reports progress when asked: total = 1 + folders + items below, final current = total', async () => {
    const x = await tree();
    const name = (await folderDoc(x.t))!.name;
    expect((await api.as(alice).delete(`/folder/${x.t}`).query({ progress: 'true' })).status).toBe(200);
    const [record] = await progressRecords(alice, `Deleting folder ${name}`);
    // T + A, A1, A2, B + items a1, a2, b, t
    expect(record.data).toMatchObject({
      title: `Deleting folder ${name}`,
      total: 9,
      current: 9,
      state: 'success',
      message: 'Done',
    });
  });

  it('records no progress without the flag', async () => {
    const t = await newFolder(alice, alicePrivate, 'Quiet');
    expect((await api.as(alice).delete(`/folder/${t}`).query({ progress: 'false' })).status).toBe(200);
    expect(await progressRecords(alice, 'Deleting folder Quiet')).toEqual([]);
  });

  it('needs ADMIN on the folder', async () => {
    const t = await newFolder(alice, alicePrivate, 'Guarded');
    const write = {
      users: [
        { id: alice._id, level: 2 },
        { id: bob._id, level: 1 },
      ],
      groups: [],
    };
    expect((await api.putFolderAccess(alice, t, write)).status).toBe(200);
    const res = await api.as(bob).delete(`/folder/${t}`);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: `Admin access denied for folder ${t} (user ${bob._id}).`, type: 'access' });
    expect(await folderDoc(t)).not.toBeNull();
  });

  it('makes every folder command refuse the deleted folder and its descendants', async () => {
    const x = await tree();
    expect((await api.as(alice).delete(`/folder/${x.t}`)).status).toBe(200);
    const invalid = (id: string) => ({ message: `Invalid folder id (${id}).`, type: 'rest' });
    for (const id of [x.t, x.a1]) {
      expect((await api.as(alice).put(`/folder/${id}`).type('form').send({ name: 'again' })).body).toEqual(invalid(id));
      expect(
        (await api.as(alice).put(`/folder/${id}/metadata`).set('Content-Type', 'application/json').send('{"a": 1}'))
          .body,
      ).toEqual(invalid(id));
      expect((await api.as(alice).put(`/folder/${id}/access`).type('form').send({ access: '{}' })).body).toEqual(
        invalid(id),
      );
      expect((await api.as(alice).delete(`/folder/${id}`)).body).toEqual(invalid(id));
      expect((await api.as(alice).delete(`/folder/${id}/contents`)).body).toEqual(invalid(id));
      expect((await api.as(alice).post(`/folder/${id}/copy`)).body).toEqual(invalid(id));
      const child = await api
        .as(alice)
        .post('/folder')
        .type('form')
        .send({ parentType: 'folder', parentId: id, name: 'child' });
      expect(child.body).toEqual({ message: `No such folder: ${id}`, type: 'validation', field: 'id' });
    }
  });

  it('frees the name: a folder of that name can be created again under the parent', async () => {
    const t = await newFolder(alice, alicePrivate, 'Reborn');
    expect((await api.as(alice).delete(`/folder/${t}`)).status).toBe(200);
    const again = await api
      .as(alice)
      .post('/folder')
      .type('form')
      .send({ parentType: 'folder', parentId: alicePrivate, name: 'Reborn' });
    expect(again.status).toBe(200);
    expect(again.body._id).not.toBe(t);
  });

  it('records every removed folder in the history index', async () => {
    const x = await tree();
    expect((await api.as(alice).delete(`/folder/${x.t}`)).status).toBe(200);
    const { subtree } = api.runtime.services.readModel;
    for (const id of [x.t, x.a, x.a2]) {
      const ops = await subtree.subtreeOpsFor(id);
      expect(ops).toEqual([{ folderId: id, position: expect.any(BigInt), operation: 'deleted', rootId: x.t }]);
    }
  });
});

describe('DELETE /folder/:id/contents', () => {
  it('removes everything under the folder, readable or not; the folder stays with size 0 and the same `updated`', async () => {
    const x = await tree();
    const before = (await folderDoc(x.t))!;
    expect(before.size).toBe(40);
    const sizeBefore = await userSize(alice);
    const blobA2 = await blobOf(x.fileA2);
    // WRITE suffices (Girder), and removes A2 which the caller cannot even read.
    const write = {
      users: [
        { id: alice._id, level: 2 },
        { id: bob._id, level: 1 },
      ],
      groups: [],
    };
    expect((await api.putFolderAccess(alice, x.t, write)).status).toBe(200);

    const res = await api.as(bob).delete(`/folder/${x.t}/contents`).query({ progress: 'true' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: `Cleaned folder ${before.name}.` });

    const after = (await folderDoc(x.t))!;
    expect(after).toMatchObject({ size: 0, updated: before.updated, name: before.name });
    expect((await api.as(admin).get(`/folder/${x.t}/details`)).body).toEqual({ nItems: 0, nFolders: 0 });
    for (const id of [x.a, x.a1, x.a2, x.b]) expect(await folderDoc(id)).toBeNull();
    for (const id of [x.itemA1, x.itemA2, x.itemB, x.itemT])
      expect(await api.runtime.services.readModel.items.get(id)).toBeNull();
    expect(await userSize(alice)).toBe(sizeBefore - (10 + 20 + 30 + 40));
    expect(await blobExists(blobA2)).toBe(false);
    const [record] = await progressRecords(bob, `Clearing folder ${before.name}`);
    expect(record.data).toMatchObject({ total: 8, current: 8, state: 'success', message: 'Done' });
    const ops = await api.runtime.services.readModel.subtree.subtreeOpsFor(x.t);
    expect(ops.map((o) => [o.operation, o.rootId])).toEqual([['cleared', x.t]]);
    expect((await api.runtime.services.readModel.subtree.subtreeOpsFor(x.a1)).map((o) => o.operation)).toEqual([
      'deleted',
    ]);
  });

  it('needs WRITE', async () => {
    const t = await newFolder(alice, alicePrivate, 'Readers only');
    const read = {
      users: [
        { id: alice._id, level: 2 },
        { id: bob._id, level: 0 },
      ],
      groups: [],
    };
    expect((await api.putFolderAccess(alice, t, read)).status).toBe(200);
    const res = await api.as(bob).delete(`/folder/${t}/contents`);
    expect(res.status).toBe(403);
    expect(res.body.message).toBe(`Write access denied for folder ${t} (user ${bob._id}).`);
  });

  it('leaves the folder usable: new children (of the old names too) appear in it', async () => {
    const t = await newFolder(alice, alicePrivate, 'Reused');
    await newFolder(alice, t, 'Child');
    expect((await api.as(alice).delete(`/folder/${t}/contents`)).status).toBe(200);
    const child = await newFolder(alice, t, 'Child');
    expect((await api.as(alice).get(`/folder/${t}/details`)).body).toEqual({ nItems: 0, nFolders: 1 });
    expect((await api.as(alice).get(`/folder/${child}/rootpath`)).status).toBe(200);
  });
});

describe('writes racing a subtree delete (the projection never stops)', () => {
  const meta = systemMeta('race-test');

  it('skips a folder created, changed or moved under a folder deleted earlier in the log', async () => {
    const services = api.runtime.services;
    const doomed = await newFolder(alice, alicePrivate, 'Doomed');
    const inner = await newFolder(alice, doomed, 'Inner');
    const mover = await newFolder(alice, alicePrivate, 'Mover');
    const moverChild = await newFolder(alice, mover, 'Mover child');
    await api.addFile(alice, await api.newItem(alice, moverChild, 'bytes'), '12345678');
    const staleParent = (await services.readModel.folders.get(inner))!;
    expect((await api.as(alice).delete(`/folder/${doomed}`)).status).toBe(200);
    const sizeBefore = await userSize(alice);

    // A create under a parent the command saw before the delete: appended after it.
    const created = await createFolder(
      services,
      {
        parent: { type: 'folder', doc: staleParent },
        name: 'late',
        description: '',
        reuseExisting: false,
        creatorId: alice._id,
      },
      meta,
    );
    expect(await folderDoc(created)).toBeNull();
    // A metadata change of the deleted descendant (its stream knows nothing of the delete).
    await setFolderMetadata(services, inner, { late: true }, false, meta);
    expect(await folderDoc(inner)).toBeNull();
    // An item created in it.
    const item = await createItem(
      services,
      { folder: staleParent, name: 'late item', description: '', reuseExisting: false, creatorId: alice._id },
      meta,
    );
    expect(await services.readModel.items.get(item)).toBeNull();
    // A move into it (decided before the delete): the moved subtree goes with it, and its size leaves the root.
    const moved = await services.eventStore.streamRevision(folderStream(mover));
    const move = {
      type: 'FolderMoved',
      data: {
        folderId: mover,
        fromParentType: 'folder',
        fromParentId: alicePrivate,
        parentType: 'folder',
        parentId: inner,
        updated: '2024-01-01T00:00:00+00:00',
      },
    };
    const { position } = await services.eventStore.appendToStreams([
      { streamId: folderStream(mover), expectedState: moved, events: toNewEvents([move], meta) },
    ]);
    await services.projector.waitFor(position);
    expect(await folderDoc(mover)).toBeNull();
    expect(await folderDoc(moverChild)).toBeNull();
    expect(await userSize(alice)).toBe(sizeBefore - 8);

    expect(services.projector.failed).toBeNull();
    // The projector still runs.
    expect(
      (
        await api
          .as(alice)
          .post('/folder')
          .type('form')
          .send({ parentType: 'folder', parentId: alicePrivate, name: 'after the race' })
      ).status,
    ).toBe(200);
  });
});

it('rebuilding the read models from the log gives exactly the live state (history index included)', async () => {
  const { eventStore, readModel } = api.runtime.services;
  const live = await readModel.dump();
  expect(live.rm_subtree_ops.length).toBeGreaterThan(0);
  await rebuild(eventStore, readModel);
  expect(await readModel.dump()).toEqual(live);
});
