import { ok, startApi, type ApiClient, type TestUser } from '../support/apiClient';

let api: ApiClient;
let admin: TestUser;
let alice: TestUser;
let bob: TestUser;
let alicePrivate: string;
let alicePublic: string;

interface Entry {
  revision: number;
  position: string;
  type: string;
  at: string;
  userId: string | null;
  login: string | null;
  requestId: string | null;
  data: Record<string, unknown> & { via?: { folderId?: string; operation: string; inFolder?: string } };
}

const history = async (user: TestUser, path: string, query: Record<string, string | number> = {}) => {
  const res = await api.as(user).get(`${path}/history`).query(query);
  return { res, entries: res.body as Entry[] };
};

beforeAll(async () => {
  api = await startApi();
  admin = await api.createUser('admin');
  alice = await api.createUser('alice');
  bob = await api.createUser('bobby');
  alicePrivate = await api.defaultFolder(alice, 'Private');
  alicePublic = await api.defaultFolder(alice, 'Public');
});
afterAll(() => api.close());

describe('GET /folder/:id/history', () => {
  it("lists the folder's events oldest first, with provenance", async () => {
    const f = await api.newFolder(alice, alicePrivate, 'Audited');
    ok(await api.as(alice).put(`/folder/${f}`).type('form').send({ name: 'Audited 2', description: 'd' }), 'rename');
    ok(
      await api.as(alice).put(`/folder/${f}/metadata`).set('Content-Type', 'application/json').send('{"k": 1}'),
      'meta',
    );
    ok(
      await api.as(alice).put(`/folder/${f}`).type('form').send({ parentType: 'folder', parentId: alicePublic }),
      'move',
    );
    const access = {
      users: [
        { id: alice._id, level: 2 },
        { id: bob._id, level: 0 },
      ],
      groups: [],
    };
    const changed = await api.putFolderAccess(alice, f, access);
    const requestId = changed.headers['girder-request-uid'];

    const { res, entries } = await history(alice, `/folder/${f}`);
    expect(res.status).toBe(200);
    // A move through PUT /folder/:id also advances `updated` (FolderUpdated), in the same append.
    expect(res.headers['girder-total-count']).toBe('6');
    expect(entries.map((e) => [e.revision, e.type])).toEqual([
      [0, 'FolderCreated'],
      [1, 'FolderUpdated'],
      [2, 'FolderMetadataChanged'],
      [3, 'FolderUpdated'],
      [4, 'FolderMoved'],
      [5, 'FolderAccessChanged'],
    ]);
    const positions = entries.map((e) => BigInt(e.position));
    expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : 1)));
    for (const e of entries) {
      expect(typeof e.position).toBe('string');
      expect(e).toMatchObject({ userId: alice._id, login: 'alice' });
      expect(Date.parse(e.at)).not.toBeNaN();
      expect(typeof e.requestId).toBe('string');
    }
    expect(entries[5].requestId).toBe(requestId);
    expect(entries[3].requestId).toBe(entries[4].requestId);
    expect(entries[0].data).toMatchObject({
      folderId: f,
      name: 'Audited',
      parentType: 'folder',
      parentId: alicePrivate,
    });
    expect(entries[1].data).toMatchObject({ name: 'Audited 2', description: 'd' });
    expect(entries[4].data).toMatchObject({ fromParentId: alicePrivate, parentId: alicePublic });
    expect(entries[5].data).toMatchObject({ access });
    expect(Object.keys(entries[0]).sort()).toEqual([
      'at',
      'data',
      'login',
      'position',
      'requestId',
      'revision',
      'type',
      'userId',
    ]);
  });

  it('pages with limit and offset, or after a revision', async () => {
    const f = await api.newFolder(alice, alicePrivate, 'Paged');
    for (let i = 0; i < 6; i++)
      ok(
        await api
          .as(alice)
          .put(`/folder/${f}`)
          .type('form')
          .send({ description: `v${i}` }),
        'update',
      );
    const page = await history(alice, `/folder/${f}`, { limit: 2, offset: 3 });
    expect(page.entries.map((e) => e.revision)).toEqual([3, 4]);
    expect(page.res.headers['girder-total-count']).toBe('7');
    const after = await history(alice, `/folder/${f}`, { after: 4 });
    expect(after.entries.map((e) => e.revision)).toEqual([5, 6]);
    expect(after.res.headers['girder-total-count']).toBe('2');
    expect((await history(alice, `/folder/${f}`, { limit: 0 })).entries).toHaveLength(7);
    expect((await history(alice, `/folder/${f}`)).entries).toHaveLength(7);
    const missing = await history(alice, `/folder/${f}`, { after: 99 });
    expect(missing.res.status).toBe(400);
    expect(missing.res.body).toEqual({ message: 'No event at revision 99 of this history.', type: 'rest' });
    expect((await history(alice, `/folder/${f}`, { limit: 'x' })).res.body.message).toBe(
      'Invalid value for integer parameter limit: x.',
    );
  });

  it('merges in what operations on ancestors did to the folder, in log order', async () => {
    const t = await api.newFolder(alice, alicePrivate, `T ${Math.random()}`);
    const a = await api.newFolder(alice, t, 'A');
    const b = await api.newFolder(alice, a, 'B');
    const access = { users: [{ id: alice._id, level: 2 }], groups: [] };
    ok(await api.putFolderAccess(alice, t, access, { recurse: 'true' }), 'recursive access');
    const copy = ok(await api.as(alice).post(`/folder/${t}/copy`).type('form').send({ parentId: alicePublic }), 'copy');
    const copiedA = ok<{ _id: string }[]>(
      await api.as(alice).get(`/folder?parentType=folder&parentId=${copy._id}`),
      'list',
    )[0]._id;
    ok(await api.as(alice).put(`/folder/${b}`).type('form').send({ description: 'own change' }), 'own change');
    ok(await api.as(alice).delete(`/folder/${t}`), 'delete');

    const { entries } = await history(alice, `/folder/${b}`);
    expect(entries.map((e) => [e.type, e.data.via?.operation ?? null, e.data.via?.folderId ?? null])).toEqual([
      ['FolderCreated', null, null],
      ['FolderAccessChanged', 'accessChanged', t],
      ['FolderCopied', 'copiedFrom', copy._id],
      ['FolderUpdated', null, null],
      ['FolderDeleted', 'deleted', t],
    ]);
    const deleted = entries[4];
    expect(deleted.data).toMatchObject({ folderId: t, via: { folderId: t, operation: 'deleted' } });
    expect(deleted.revision).toBe(Number((await history(alice, `/folder/${t}`)).entries.at(-1)!.revision));

    // A folder a copy created: its creation is the copy of its ancestor.
    const copied = await history(alice, `/folder/${copiedA}`);
    expect(copied.entries.map((e) => [e.type, e.data.via])).toEqual([
      ['FolderCopied', { folderId: copy._id, operation: 'copied' }],
    ]);
    // The deleted root itself: its own stream, and the copy made of it (on the copy's stream).
    expect((await history(alice, `/folder/${t}`)).entries.map((e) => [e.type, e.data.via ?? null])).toEqual([
      ['FolderCreated', null],
      ['FolderAccessChanged', null],
      ['FolderCopied', { folderId: copy._id, operation: 'copiedFrom' }],
      ['FolderDeleted', null],
    ]);
  });

  it('needs ADMIN; for a deleted folder, ADMIN as it was, or site admin', async () => {
    const f = await api.newFolder(alice, alicePrivate, 'Guarded');
    const read = {
      users: [
        { id: alice._id, level: 2 },
        { id: bob._id, level: 1 },
      ],
      groups: [],
    };
    ok(await api.putFolderAccess(alice, f, read), 'access');
    const denied = await history(bob, `/folder/${f}`);
    expect(denied.res.status).toBe(403);
    expect(denied.res.body).toEqual({
      message: `Admin access denied for folder ${f} (user ${bob._id}).`,
      type: 'access',
    });
    expect((await api.anonymous().get(`/folder/${f}/history`)).status).toBe(401);
    expect((await history(admin, `/folder/${f}`)).res.status).toBe(200);

    ok(await api.as(alice).delete(`/folder/${f}`), 'delete');
    expect((await history(alice, `/folder/${f}`)).entries.map((e) => e.type)).toEqual([
      'FolderCreated',
      'FolderAccessChanged',
      'FolderDeleted',
    ]);
    expect((await history(bob, `/folder/${f}`)).res.status).toBe(403);
    expect((await history(admin, `/folder/${f}`)).res.status).toBe(200);

    const unknown = '0123456789abcdef01234567';
    expect((await history(admin, `/folder/${unknown}`)).res.body).toEqual({
      message: `Invalid folder id (${unknown}).`,
      type: 'rest',
    });
    expect((await history(admin, '/folder/nope')).res.body).toEqual({
      message: 'Invalid folder id (nope).',
      type: 'rest',
    });
  });

  it('never shows password or token hashes', async () => {
    const f = await api.newFolder(alice, alicePrivate, 'No secrets');
    const { res } = await history(alice, `/folder/${f}`);
    expect(JSON.stringify(res.body)).not.toMatch(/passwordHash|scrypt\$/);
  });
});

describe('GET /item/:id/history', () => {
  it("lists the item's and its files' events, and what happened to its folder", async () => {
    const t = await api.newFolder(alice, alicePrivate, `Items ${Math.random()}`);
    const sub = await api.newFolder(alice, t, 'Sub');
    const item = await api.newItem(alice, sub, 'thing');
    ok(await api.as(alice).put(`/item/${item}`).type('form').send({ name: 'thing 2' }), 'rename');
    await api.addFile(alice, item, Buffer.from('hello'), 'hello.txt');
    ok(await api.as(alice).put(`/item/${item}`).type('form').send({ folderId: t }), 'move');
    ok(await api.as(alice).delete(`/folder/${t}/contents`), 'clear');

    const { res, entries } = await history(alice, `/item/${item}`);
    expect(res.status).toBe(200);
    expect(entries.map((e) => [e.type, e.data.via ?? null])).toEqual([
      ['ItemCreated', null],
      ['ItemUpdated', null],
      ['FileCreated', null],
      // A move through PUT /item/:id also advances `updated` (ItemUpdated).
      ['ItemUpdated', null],
      ['ItemMoved', null],
      ['FolderContentsCleared', { folderId: t, operation: 'cleared', inFolder: t }],
    ]);
    expect(entries[2].data).toMatchObject({ name: 'hello.txt', size: 5 });
    expect((await history(bob, `/item/${item}`)).res.status).toBe(403);

    // Restoring the folder it was cleared from is not possible (the folder stays); the history still answers.
    const other = await api.newItem(alice, t, 'other');
    ok(await api.as(alice).delete(`/item/${other}`), 'delete item');
    expect((await history(alice, `/item/${other}`)).entries.map((e) => e.type)).toEqual(['ItemCreated', 'ItemDeleted']);
    const unknown = '0123456789abcdef01234567';
    expect((await history(admin, `/item/${unknown}`)).res.body).toEqual({
      message: `Invalid item id (${unknown}).`,
      type: 'rest',
    });
  });

  it('shows the delete and restore of the folder around an item', async () => {
    const t = await api.newFolder(alice, alicePrivate, `Around ${Math.random()}`);
    const item = await api.newItem(alice, t, 'kept');
    ok(await api.as(alice).delete(`/folder/${t}`), 'delete');
    expect((await history(alice, `/item/${item}`)).entries.map((e) => [e.type, e.data.via?.operation ?? null])).toEqual(
      [
        ['ItemCreated', null],
        ['FolderDeleted', 'deleted'],
      ],
    );
    ok(await api.as(alice).post(`/folder/${t}/restore`), 'restore');
    expect((await history(alice, `/item/${item}`)).entries.map((e) => [e.type, e.data.via?.operation ?? null])).toEqual(
      [
        ['ItemCreated', null],
        ['FolderDeleted', 'deleted'],
        ['FolderRestored', 'restored'],
      ],
    );
    expect((await history(alice, `/folder/${t}`)).entries.map((e) => e.type)).toEqual([
      'FolderCreated',
      'FolderDeleted',
      'FolderRestored',
    ]);
  });
});
