import { ok, startApi, type ApiClient, type TestUser } from '../support/apiClient';

let api: ApiClient;
let admin: TestUser;
let alice: TestUser;
let bob: TestUser;
let alicePrivate: string;
let alicePublic: string;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const at = async () => String(await api.headPosition());
const getAt = (user: TestUser, id: string, when: string) => api.as(user).get(`/folder/${id}`).query({ at: when });
const childrenAt = async (
  user: TestUser,
  parentId: string,
  when: string,
  query: Record<string, string> = {},
  parentType = 'folder',
) => {
  const res = await api
    .as(user)
    .get('/folder')
    .query({ parentType, parentId, at: when, ...query });
  return { res, names: Array.isArray(res.body) ? (res.body as { name: string }[]).map((f) => f.name) : res.body };
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

describe('GET /folder/:id?at=', () => {
  it('rebuilds the folder as it was at a position, with the same view fields as the normal GET', async () => {
    const f = await api.newFolder(alice, alicePrivate, 'Then');
    const created = await at();
    const initial = (await api.as(alice).get(`/folder/${f}`)).body;
    ok(await api.as(alice).put(`/folder/${f}`).type('form').send({ name: 'Now', description: 'changed' }), 'rename');
    const renamed = await at();
    ok(
      await api.as(alice).put(`/folder/${f}/metadata`).set('Content-Type', 'application/json').send('{"k": [1, 2]}'),
      'meta',
    );
    const item = await api.newItem(alice, f, 'i');
    await api.addFile(alice, item, Buffer.from('12345'));
    const sized = await at();
    ok(await api.as(alice).put(`/folder/${f}`).type('form').send({ parentType: 'user', parentId: alice._id }), 'move');
    const access = {
      users: [
        { id: alice._id, level: 2 },
        { id: bob._id, level: 2 },
      ],
      groups: [],
    };
    ok(await api.putFolderAccess(alice, f, access, { public: 'true' }), 'access');

    expect((await getAt(alice, f, created)).body).toEqual(initial);
    expect((await getAt(alice, f, renamed)).body).toMatchObject({
      name: 'Now',
      description: 'changed',
      metadata: {},
      size: 0,
      parentId: alicePrivate,
    });
    expect((await getAt(alice, f, sized)).body).toMatchObject({
      name: 'Now',
      metadata: { k: [1, 2] },
      size: 5,
      parentCollection: 'folder',
    });
    // At the head it is exactly what the read model serves.
    expect((await getAt(alice, f, await at())).body).toEqual((await api.as(alice).get(`/folder/${f}`)).body);
    expect((await getAt(admin, f, await at())).body).toEqual((await api.as(admin).get(`/folder/${f}`)).body);
    // _accessLevel is judged on the ACL it had then: bob had none before the access change.
    expect((await getAt(bob, f, sized)).body).toMatchObject({ _accessLevel: -1, name: 'Now' });
  });

  it('takes an ISO 8601 time: the state after the last event recorded by then', async () => {
    const f = await api.newFolder(alice, alicePrivate, 'Timed');
    await sleep(20);
    const between = new Date().toISOString();
    await sleep(20);
    ok(await api.as(alice).put(`/folder/${f}`).type('form').send({ name: 'Timed later' }), 'rename');
    expect((await getAt(alice, f, between)).body.name).toBe('Timed');
    expect((await getAt(alice, f, new Date(Date.now() + 60_000).toISOString())).body.name).toBe('Timed later');
    // Offsets are honoured (an hour ahead of UTC, the same instant).
    const d = new Date(Date.parse(between) + 3_600_000).toISOString().replace('Z', '+01:00');
    expect((await getAt(alice, f, d)).body.name).toBe('Timed');
  });

  it('refuses times before the folder existed, after it was deleted, and malformed values', async () => {
    const before = await at();
    const f = await api.newFolder(alice, alicePrivate, 'Short');
    const res = await getAt(alice, f, before);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: `The folder did not exist at ${before}.`, type: 'rest' });
    expect((await getAt(alice, f, '2001-01-01')).body).toEqual({
      message: 'The folder did not exist at 2001-01-01.',
      type: 'rest',
    });
    for (const bad of ['yesterday', '12abc', '2024-13-45T99:00', '-5']) {
      expect((await getAt(alice, f, bad)).body).toEqual({
        message: `Invalid value for at: "${bad}". Expected an ISO 8601 time or a position.`,
        type: 'rest',
      });
    }
    const alive = await at();
    ok(await api.as(alice).delete(`/folder/${f}`), 'delete');
    // Gone now: only a site admin may still look at its past.
    expect((await getAt(alice, f, alive)).status).toBe(400);
    expect((await getAt(admin, f, alive)).body.name).toBe('Short');
    expect((await getAt(admin, f, await at())).body).toEqual({
      message: `The folder did not exist at ${await at()}.`,
      type: 'rest',
    });
    ok(await api.as(alice).post(`/folder/${f}/restore`), 'restore');
    expect((await getAt(alice, f, await at())).body.name).toBe('Short');
  });

  it('needs ADMIN on the folder now', async () => {
    const f = await api.newFolder(alice, alicePrivate, 'Admins only');
    const read = {
      users: [
        { id: alice._id, level: 2 },
        { id: bob._id, level: 1 },
      ],
      groups: [],
    };
    ok(await api.putFolderAccess(alice, f, read), 'access');
    const res = await getAt(bob, f, await at());
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: `Admin access denied for folder ${f} (user ${bob._id}).`, type: 'access' });
    expect((await api.anonymous().get(`/folder/${f}`).query({ at: '1' })).status).toBe(401);
    expect((await getAt(admin, f, await at())).status).toBe(200);
  });

  it('rebuilds folders created by a copy (no events of their own) from their source', async () => {
    const t = await api.newFolder(alice, alicePrivate, `Source ${Math.random()}`);
    const a = await api.newFolder(alice, t, 'A');
    const b = await api.newFolder(alice, a, 'B');
    ok(
      await api.as(alice).put(`/folder/${b}/metadata`).set('Content-Type', 'application/json').send('{"deep": true}'),
      'meta',
    );
    const copy = ok(await api.as(alice).post(`/folder/${t}/copy`).type('form').send({ parentId: alicePublic }), 'copy');
    const copiedA = ok<{ _id: string }[]>(
      await api.as(alice).get(`/folder?parentType=folder&parentId=${copy._id}`),
      'list',
    )[0]._id;
    const copiedB = ok<{ _id: string }[]>(
      await api.as(alice).get(`/folder?parentType=folder&parentId=${copiedA}`),
      'list',
    )[0]._id;
    const afterCopy = await at();
    ok(await api.as(alice).put(`/folder/${copiedB}`).type('form').send({ name: 'B renamed' }), 'rename copy');
    ok(await api.as(alice).put(`/folder/${b}`).type('form').send({ name: 'source renamed' }), 'rename source');
    for (const id of [copy._id, copiedA, copiedB]) {
      expect((await getAt(alice, id, await at())).body).toEqual((await api.as(alice).get(`/folder/${id}`)).body);
    }
    expect((await getAt(alice, copiedB, afterCopy)).body).toMatchObject({
      name: 'B',
      metadata: { deep: true },
      parentId: copiedA,
    });
  });
});

describe('GET /folder?parentType=&parentId=&at=', () => {
  it('lists the children as they were: created, moved away, deleted, cleared, restored', async () => {
    const p = await api.newFolder(alice, alicePrivate, `Parent ${Math.random()}`);
    const c1 = await api.newFolder(alice, p, 'c1');
    const c2 = await api.newFolder(alice, p, 'c2');
    const c3 = await api.newFolder(alice, p, 'c3');
    const three = await at();
    ok(
      await api.as(alice).put(`/folder/${c2}`).type('form').send({ parentType: 'folder', parentId: alicePublic }),
      'move c2 away',
    );
    ok(await api.as(alice).put(`/folder/${c3}`).type('form').send({ name: 'c3 renamed' }), 'rename c3');
    const moved = await at();
    ok(await api.as(alice).delete(`/folder/${c1}`), 'delete c1');
    const deleted = await at();
    ok(await api.as(alice).delete(`/folder/${p}/contents`), 'clear');
    const cleared = await at();
    ok(await api.as(alice).post(`/folder/${c1}/restore`), 'restore c1');

    expect((await childrenAt(alice, p, three)).names).toEqual(['c1', 'c2', 'c3']);
    expect((await childrenAt(alice, p, moved)).names).toEqual(['c1', 'c3 renamed']);
    expect((await childrenAt(alice, p, deleted)).names).toEqual(['c3 renamed']);
    expect((await childrenAt(alice, p, cleared)).names).toEqual([]);
    expect((await childrenAt(alice, p, await at())).names).toEqual(['c1']);
    // Paging and sorting as the normal listing, with the total.
    const page = await childrenAt(alice, p, three, { limit: '1', offset: '1', sort: 'name', sortdir: '-1' });
    expect(page.names).toEqual(['c2']);
    expect(page.res.headers['girder-total-count']).toBe('3');
    expect((await childrenAt(alice, p, three, { name: 'c3' })).names).toEqual(['c3']);
    // The rows are the point-in-time views of the children.
    const rows = (await childrenAt(alice, p, three)).res.body as Record<string, unknown>[];
    expect(rows[2]).toEqual((await getAt(admin, c3, three)).body); // c3 is gone now: a site admin may still look
    // At the head, the listing is what the read model lists.
    const now = ok(await api.as(alice).get('/folder').query({ parentType: 'folder', parentId: p }), 'now');
    expect((await childrenAt(alice, p, await at())).res.body).toEqual(now);
  });

  it('lists copies under a copied folder, and under users; needs ADMIN on the parent; checks at', async () => {
    const t = await api.newFolder(alice, alicePrivate, `Copied ${Math.random()}`);
    await api.newFolder(alice, t, 'x');
    await api.newFolder(alice, t, 'y');
    const copy = ok(await api.as(alice).post(`/folder/${t}/copy`).type('form').send({ parentId: alicePublic }), 'copy');
    expect((await childrenAt(alice, copy._id, await at())).names).toEqual(['x', 'y']);
    const rootNow = ok(
      await api.as(alice).get('/folder').query({ parentType: 'user', parentId: alice._id }),
      'user root',
    );
    expect((await childrenAt(alice, alice._id, await at(), {}, 'user')).res.body).toEqual(rootNow);

    expect((await childrenAt(bob, t, await at())).res.status).toBe(403);
    expect((await childrenAt(alice, t, 'soon')).res.body).toEqual({
      message: 'Invalid value for at: "soon". Expected an ISO 8601 time or a position.',
      type: 'rest',
    });
    expect((await childrenAt(alice, copy._id, '3')).res.body).toEqual({
      message: 'The folder did not exist at 3.',
      type: 'rest',
    });
    expect((await api.as(alice).get('/folder').query({ text: 'x', at: '3' })).body).toEqual({
      message: 'The at parameter needs parentType and parentId.',
      type: 'rest',
    });
  });

  it('shows only the children the caller could read then', async () => {
    const p = await api.newFolder(admin, alicePublic, `Mixed ${Math.random()}`);
    const hidden = await api.newFolder(admin, p, 'hidden');
    await api.newFolder(admin, p, 'shown');
    const adminOnly = { users: [{ id: admin._id, level: 2 }], groups: [] };
    ok(await api.putFolderAccess(admin, hidden, adminOnly, { public: 'false' }), 'access');
    expect((await childrenAt(alice, p, await at())).names).toEqual(['shown']);
    expect((await childrenAt(admin, p, await at())).names).toEqual(['hidden', 'shown']);
  });
});
