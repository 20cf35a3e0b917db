import { startApi, type ApiClient, type TestUser } from '../support/apiClient';

/**
 * Issue 27, rule 4: `PUT /resource/move`, `POST /resource/copy` and `DELETE /resource` are decided whole. With one
 * permitted and one refused resource the answer is the refusal and nothing changed: the log's head is where it was
 * and both resources are as they were. Girder acted on the permitted one first.
 */

let api: ApiClient;
let alice: TestUser;
let bob: TestUser;
let alicePublic: string;
let alicePrivate: string;
/** bob's folders: one alice reads but may not change, one she may not read. */
let bobReadable: string;
let bobUnreadable: string;
let bobItem: string;

beforeAll(async () => {
  api = await startApi();
  await api.createUser('admin');
  alice = await api.createUser('alice');
  bob = await api.createUser('bobby');
  alicePublic = await api.defaultFolder(alice, 'Public');
  alicePrivate = await api.defaultFolder(alice, 'Private');
  bobReadable = await api.subfolder(bob, await api.defaultFolder(bob, 'Public'), 'readable');
  bobUnreadable = await api.newFolder(bob, await api.defaultFolder(bob, 'Private'), 'unreadable');
  bobItem = await api.newItem(bob, bobReadable, 'bob item');
});
afterAll(() => api.close());

const denied = (level: 'Read' | 'Write' | 'Admin', model: string, id: string) => ({
  message: `${level} access denied for ${model} ${id} (user ${alice._id}).`,
  type: 'access',
});

const folderOf = async (id: string) => (await api.as(bob).get(`/folder/${id}`)).body as { parentId: string };
const itemOf = async (id: string) => (await api.as(bob).get(`/item/${id}`)).body as { folderId: string };
const childNames = async (folderId: string) => {
  const folders = (await api.as(alice).get('/folder').query({ parentType: 'folder', parentId: folderId })).body;
  const items = (await api.as(alice).get('/item').query({ folderId })).body;
  return [...folders, ...items].map((r: { name: string }) => r.name).sort();
};

/** Sends the request as alice and checks that it changed nothing: the log's head stays where it was. */
async function refusedWhole(send: () => Promise<{ status: number; body: unknown }>, status: number, body: unknown) {
  const head = await api.headPosition();
  const res = await send();
  expect({ status: res.status, body: res.body }).toEqual({ status, body });
  expect(await api.headPosition()).toBe(head);
}

describe('PUT /resource/move', () => {
  const move = (resources: unknown, parentId: string) => () =>
    api
      .as(alice)
      .put('/resource/move')
      .type('form')
      .send({ resources: JSON.stringify(resources), parentType: 'folder', parentId });

  it('moves nothing when one folder or item may not be written', async () => {
    const mine = await api.newFolder(alice, alicePublic, 'move me');
    const myItem = await api.newItem(alice, alicePublic, 'move me too');
    await refusedWhole(
      move({ folder: [mine, bobReadable], item: [myItem] }, alicePrivate),
      403,
      denied('Write', 'folder', bobReadable),
    );
    await refusedWhole(
      move({ folder: [mine], item: [myItem, bobItem] }, alicePrivate),
      403,
      denied('Write', 'item', bobItem),
    );
    expect((await folderOf(mine)).parentId).toBe(alicePublic);
    expect((await itemOf(myItem)).folderId).toBe(alicePublic);
    expect((await folderOf(bobReadable)).parentId).not.toBe(alicePrivate);
    expect((await itemOf(bobItem)).folderId).toBe(bobReadable);
  });

  it('moves nothing when one folder would land on a taken name or underneath itself', async () => {
    const from = await api.newFolder(alice, alicePublic, 'move source');
    const to = await api.newFolder(alice, alicePublic, 'move target');
    const first = await api.newFolder(alice, from, 'first');
    const clash = await api.newFolder(alice, from, 'clash');
    await api.newFolder(alice, to, 'clash');
    const before = await childNames(to);
    await refusedWhole(move({ folder: [first, clash] }, to), 400, {
      message: 'A folder with that name already exists here.',
      type: 'validation',
      field: 'name',
    });
    await refusedWhole(move({ folder: [first, from] }, first), 400, {
      message: 'You may not move a folder underneath itself.',
      type: 'validation',
    });
    expect(await childNames(to)).toEqual(before);
    expect(await childNames(from)).toEqual(['clash', 'first']);

    const moved = await move({ folder: [first] }, to)();
    expect(moved.status).toBe(200);
    expect(await childNames(to)).toEqual(['clash', 'first']);
  });
});

describe('POST /resource/copy', () => {
  const copy = (resources: unknown, parentId: string) => () =>
    api
      .as(alice)
      .post('/resource/copy')
      .type('form')
      .send({ resources: JSON.stringify(resources), parentType: 'folder', parentId });

  it('copies nothing when one folder may not be read', async () => {
    const target = await api.newFolder(alice, alicePrivate, 'copy target');
    const mine = await api.newFolder(alice, alicePublic, 'copy me');
    const myItem = await api.newItem(alice, alicePublic, 'copy me too');
    await refusedWhole(
      copy({ item: [myItem], folder: [mine, bobUnreadable] }, target),
      403,
      denied('Read', 'folder', bobUnreadable),
    );
    expect(await childNames(target)).toEqual([]);

    const copied = await copy({ item: [myItem], folder: [mine, bobReadable] }, target)();
    expect(copied.status).toBe(200);
    expect(await childNames(target)).toEqual(['copy me', 'copy me too', 'readable']);
  });
});

describe('DELETE /resource', () => {
  const remove = (resources: unknown) => () =>
    api
      .as(alice)
      .delete('/resource')
      .query({ resources: JSON.stringify(resources) });

  it('deletes nothing when one resource may not be administered', async () => {
    const mine = await api.newFolder(alice, alicePublic, 'delete me');
    const myItem = await api.newItem(alice, alicePublic, 'delete me too');
    await refusedWhole(
      remove({ item: [myItem], folder: [mine, bobReadable] }),
      403,
      denied('Admin', 'folder', bobReadable),
    );
    await refusedWhole(remove({ folder: [mine], item: [myItem, bobItem] }), 403, denied('Admin', 'item', bobItem));
    expect((await api.as(alice).get(`/folder/${mine}`)).status).toBe(200);
    expect((await api.as(alice).get(`/item/${myItem}`)).status).toBe(200);
    expect((await api.as(bob).get(`/folder/${bobReadable}`)).status).toBe(200);
  });

  it('deletes a set whose members lie inside each other as one', async () => {
    const outer = await api.newFolder(alice, alicePublic, 'outer');
    const inner = await api.newFolder(alice, outer, 'inner');
    const innerItem = await api.newItem(alice, inner, 'inner item');
    const res = await remove({ folder: [outer, inner], item: [innerItem, innerItem] })();
    expect(res.status).toBe(200);
    for (const url of [`/folder/${outer}`, `/folder/${inner}`, `/item/${innerItem}`])
      expect((await api.as(alice).get(url)).status).toBe(400);
  });
});
