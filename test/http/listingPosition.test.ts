import { startApi, type ApiClient, type TestUser } from '../support/apiClient';

/** GET /folder/:id/position and GET /item/:id/position: the index a document has in its parent's listing. */
describe('listing positions', () => {
  let api: ApiClient;
  let alice: TestUser;
  let bob: TestUser;
  let parent: string;
  const folders: Record<string, string> = {};
  let itemFolder: string;
  const items: Record<string, string> = {};

  beforeAll(async () => {
    api = await startApi();
    await api.createUser('admin');
    alice = await api.createUser('alice');
    bob = await api.createUser('bobby');
    parent = await api.subfolder(alice, await api.defaultFolder(alice, 'Public'), 'parent');
    // lowerName order: alpha, beta, delta, gamma; name (binary) order: Beta, Gamma, alpha, delta. Beta is private.
    for (const name of ['Gamma', 'alpha', 'delta']) folders[name] = await api.subfolder(alice, parent, name);
    folders.Beta = await api.subfolder(alice, parent, 'Beta', { public: false });
    itemFolder = await api.subfolder(alice, parent, 'items', { public: false });
    for (const name of ['b', 'A', 'c']) items[name] = await api.newItem(alice, itemFolder, name);
  });
  afterAll(() => api.close());

  const folderPosition = (caller: TestUser | null, name: string, query: Record<string, string | number> = {}) =>
    api
      .as(caller)
      .get(`/folder/${folders[name]}/position`)
      .query({ parentType: 'folder', parentId: parent, ...query });

  describe('GET /folder/:id/position', () => {
    it("answers the folder's index in the listing, by lowerName ascending unless told", async () => {
      const expected: Record<string, number> = { alpha: 0, Beta: 1, delta: 2, Gamma: 3 };
      for (const [name, index] of Object.entries(expected)) {
        const res = await folderPosition(alice, name);
        expect({ name, status: res.status, body: res.body }).toEqual({ name, status: 200, body: index });
      }
      const listing = await api.as(alice).get('/folder').query({ parentType: 'folder', parentId: parent });
      expect(listing.body.map((f: { name: string }) => f.name)).toEqual(['alpha', 'Beta', 'delta', 'Gamma', 'items']);
    });

    it('follows sort and sortdir; limit and offset play no part', async () => {
      expect((await folderPosition(alice, 'Gamma', { sortdir: -1 })).body).toBe(1);
      expect((await folderPosition(alice, 'alpha', { sortdir: -1 })).body).toBe(4);
      expect((await folderPosition(alice, 'alpha', { sort: 'name' })).body).toBe(2);
      expect((await folderPosition(alice, 'Gamma', { sort: 'name', sortdir: -1 })).body).toBe(3);
      expect((await folderPosition(alice, 'delta', { limit: 1, offset: 3 })).body).toBe(2);
    });

    it('orders equal sort values by id', async () => {
      // Every folder here is empty: size 0 everywhere, so the order is the ids'.
      const ids = [...Object.values(folders), itemFolder].sort();
      for (const [name, id] of Object.entries(folders)) {
        expect({ name, body: (await folderPosition(alice, name, { sort: 'size' })).body }).toEqual({
          name,
          body: ids.indexOf(id),
        });
        expect({ name, body: (await folderPosition(alice, name, { sort: 'size', sortdir: -1 })).body }).toEqual({
          name,
          body: ids.length - 1 - ids.indexOf(id),
        });
      }
    });

    it('counts only what the caller may read, and what name or text select', async () => {
      expect((await folderPosition(bob, 'Gamma')).body).toBe(2);
      expect((await folderPosition(null, 'delta')).body).toBe(1);
      expect((await folderPosition(alice, 'delta', { name: 'delta' })).body).toBe(0);
      expect((await folderPosition(alice, 'Gamma', { text: 'gamma' })).body).toBe(0);
    });

    it('answers 400 "Invalid sort mode." for a sort the folder does not have at its top level', async () => {
      const res = await folderPosition(alice, 'alpha', { sort: 'metadata.key' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: 'Invalid sort mode.', type: 'rest' });
    });

    it('answers 400 "Invalid search mode." without a parent or text', async () => {
      const none = await api.as(alice).get(`/folder/${folders.alpha}/position`);
      expect(none.status).toBe(400);
      expect(none.body).toEqual({ message: 'Invalid search mode.', type: 'rest' });
    });

    it('without a parent, answers the position in the text search, among the folders the caller may read', async () => {
      const search = (caller: TestUser, name: string, query: Record<string, string | number> = {}) =>
        api
          .as(caller)
          .get(`/folder/${folders[name]}/position`)
          .query({ text: 'gamma beta', ...query });
      // Beta and Gamma match; bob does not read Beta.
      expect((await search(alice, 'Gamma')).body).toBe(1);
      expect((await search(alice, 'Beta')).body).toBe(0);
      expect((await search(alice, 'Gamma', { sortdir: -1 })).body).toBe(0);
      expect((await search(bob, 'Gamma')).body).toBe(0);
      const listing = await api.as(alice).get('/folder').query({ text: 'gamma beta' });
      expect(listing.body.map((f: { name: string }) => f.name)).toEqual(['Beta', 'Gamma']);
    });

    it('loads the folder at READ: 400 for an unknown id, 401/403 for a folder the caller may not read', async () => {
      const unknown = await api.as(alice).get('/folder/0123456789abcdef01234567/position');
      expect(unknown.status).toBe(400);
      expect(unknown.body).toEqual({ message: 'Invalid folder id (0123456789abcdef01234567).', type: 'rest' });
      const anonymous = await folderPosition(null, 'Beta');
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.type).toBe('access');
      const other = await folderPosition(bob, 'Beta');
      expect(other.status).toBe(403);
      expect(other.body.type).toBe('access');
    });
  });

  describe('GET /item/:id/position', () => {
    const itemPosition = (caller: TestUser | null, name: string, query: Record<string, string | number> = {}) =>
      api
        .as(caller)
        .get(`/item/${items[name]}/position`)
        .query({ folderId: itemFolder, ...query });

    it("answers the item's index in its folder's listing, following sort and sortdir", async () => {
      expect((await itemPosition(alice, 'A')).body).toBe(0);
      expect((await itemPosition(alice, 'b')).body).toBe(1);
      expect((await itemPosition(alice, 'c')).body).toBe(2);
      expect((await itemPosition(alice, 'c', { sortdir: -1 })).body).toBe(0);
      expect((await itemPosition(alice, 'b', { sort: 'name' })).body).toBe(1);
      expect((await itemPosition(alice, 'A', { sort: 'name', sortdir: -1 })).body).toBe(2);
      expect((await itemPosition(alice, 'c', { name: 'c' })).body).toBe(0);
    });

    it('without a folder, answers the position in the text search, among the items the caller may read', async () => {
      const search = (caller: TestUser, name: string, query: Record<string, string | number> = {}) =>
        api
          .as(caller)
          .get(`/item/${items[name]}/position`)
          .query({ text: 'b c', ...query });
      expect((await search(alice, 'b')).body).toBe(0);
      expect((await search(alice, 'c')).body).toBe(1);
      expect((await search(alice, 'b', { sortdir: -1 })).body).toBe(1);
      const listing = await api.as(alice).get('/item').query({ text: 'b c' });
      expect(listing.body.map((i: { name: string }) => i.name)).toEqual(['b', 'c']);
    });

    it('answers 400 for a bad sort or no folder, and refuses a caller who may not read the item', async () => {
      const sort = await itemPosition(alice, 'b', { sort: 'metadata.key' });
      expect({ status: sort.status, body: sort.body }).toEqual({
        status: 400,
        body: { message: 'Invalid sort mode.', type: 'rest' },
      });
      const none = await api.as(alice).get(`/item/${items.b}/position`);
      expect({ status: none.status, body: none.body }).toEqual({
        status: 400,
        body: { message: 'Invalid search mode.', type: 'rest' },
      });
      const other = await itemPosition(bob, 'b');
      expect(other.status).toBe(403);
      expect(other.body.type).toBe('access');
    });
  });
});
