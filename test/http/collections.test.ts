import fs from 'node:fs';
import path from 'node:path';
import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { rebuild } from '../../src/projections/rebuild';

const VIEW_FIELDS = [
  '_accessLevel',
  '_id',
  '_modelType',
  'created',
  'description',
  'meta',
  'name',
  'public',
  'size',
  'updated',
];

describe('collections', () => {
  let api: ApiClient;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;

  const create = async (name: string, extra: Record<string, string> = {}) => {
    const res = await api
      .as(admin)
      .post('/collection')
      .type('form')
      .send({ name, ...extra });
    if (res.status !== 200) throw new Error(`create ${name}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { _id: string; name: string; updated: string };
  };
  const grant = (id: string, users: { id: string; level: number }[], extra: Record<string, string> = {}) =>
    api
      .as(admin)
      .put(`/collection/${id}/access`)
      .type('form')
      .send({ access: JSON.stringify({ users, groups: [] }), ...extra });
  const names = (body: { name: string }[]) => body.map((c) => c.name);

  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin', { firstName: 'Site', lastName: 'Admin' });
    alice = await api.createUser('alice', { firstName: 'Alice', lastName: 'Liddell' });
    bob = await api.createUser('bobby');
  });
  afterAll(() => api.close());

  describe('POST /collection', () => {
    it('is for site administrators only under the default collection creation policy', async () => {
      const anonymous = await api.anonymous().post('/collection').type('form').send({ name: 'x' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({ message: 'You must be logged in.', type: 'access' });
      const user = await api.as(alice).post('/collection').type('form').send({ name: 'x' });
      expect(user.status).toBe(403);
      expect(user.body).toEqual({ message: 'You are not authorized to create collections.', type: 'access' });
    });

    it('creates a private collection with stripped fields, the creator holding ADMIN', async () => {
      const res = await api
        .as(admin)
        .post('/collection')
        .type('form')
        .send({ name: '  Research  ', description: '  Lab data ' });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(VIEW_FIELDS);
      expect(res.body).toMatchObject({
        _modelType: 'collection',
        _accessLevel: 2,
        name: 'Research',
        description: 'Lab data',
        public: false,
        size: 0,
        meta: {},
      });
      expect(res.body.created).toBe(res.body.updated);
      expect(res.body.created).toMatch(/\+00:00$/);
      const access = await api.as(admin).get(`/collection/${res.body._id}/access`);
      expect(access.body).toEqual({
        users: [{ id: admin._id, level: 2, flags: [], login: 'admin', name: 'Site Admin' }],
        groups: [],
      });
      const pub = await api.as(admin).post('/collection').type('form').send({ name: 'Open', public: 'true' });
      expect(pub.body).toMatchObject({ public: true, description: '' });
    });

    it('validates the name with the reference messages', async () => {
      const missing = await api.as(admin).post('/collection').type('form').send({ description: 'x' });
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ message: "Parameter 'name' is required.", type: 'rest' });
      const empty = await api.as(admin).post('/collection').type('form').send({ name: '   ' });
      expect(empty.status).toBe(400);
      expect(empty.body).toEqual({ message: 'Collection name must not be empty.', type: 'validation', field: 'name' });
      await create('Unique');
      const dup = await api.as(admin).post('/collection').type('form').send({ name: ' Unique ' });
      expect(dup.status).toBe(400);
      expect(dup.body).toEqual({
        message: 'A collection with that name already exists.',
        type: 'validation',
        field: 'name',
      });
      // Names are case-sensitive, as Girder's exact-match query.
      const otherCase = await api.as(admin).post('/collection').type('form').send({ name: 'unique' });
      expect(otherCase.status).toBe(200);
    });

    it('lets exactly one of 20 concurrent creations with one name succeed', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          api
            .as(admin)
            .post('/collection')
            .type('form')
            .send({ name: 'Contended', description: `attempt ${i}` }),
        ),
      );
      const ok = results.filter((r) => r.status === 200);
      expect(ok).toHaveLength(1);
      for (const r of results.filter((x) => x.status !== 200)) {
        expect(r.status).toBe(400);
        expect(r.body).toEqual({
          message: 'A collection with that name already exists.',
          type: 'validation',
          field: 'name',
        });
      }
      const listed = await api.as(admin).get('/collection?limit=0');
      expect(names(listed.body).filter((n) => n === 'Contended')).toHaveLength(1);
    });
  });

  describe('reading', () => {
    let hidden: { _id: string };
    let shown: { _id: string };
    let shared: { _id: string };
    beforeAll(async () => {
      hidden = await create('R Hidden');
      shown = await create('R Shown', { public: 'true', description: 'astronomy images' });
      shared = await create('R Shared', { description: 'telescope logs' });
      expect((await grant(shared._id, [{ id: alice._id, level: 0 }])).status).toBe(200);
    });

    it('GET /collection/:id needs READ and names the caller when denied', async () => {
      const anonymous = await api.anonymous().get(`/collection/${hidden._id}`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({
        message: `Read access denied for collection ${hidden._id} (user None).`,
        type: 'access',
      });
      const user = await api.as(alice).get(`/collection/${hidden._id}`);
      expect(user.status).toBe(403);
      expect(user.body).toEqual({
        message: `Read access denied for collection ${hidden._id} (user ${alice._id}).`,
        type: 'access',
      });
      const publicOne = await api.anonymous().get(`/collection/${shown._id}`);
      expect(publicOne.status).toBe(200);
      expect(Object.keys(publicOne.body).sort()).toEqual(VIEW_FIELDS);
      expect(publicOne.body._accessLevel).toBe(0);
      const loggedIn = await api.as(bob).get(`/collection/${shown._id}`);
      expect(loggedIn.body._accessLevel).toBe(-1);
      const granted = await api.as(alice).get(`/collection/${shared._id}`);
      expect(granted.status).toBe(200);
      expect(granted.body._accessLevel).toBe(0);
    });

    it('GET /collection/:id answers 400 for ids that do not resolve', async () => {
      for (const id of ['0123456789abcdef01234567', 'nope']) {
        const res = await api.as(admin).get(`/collection/${id}`);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ message: `Invalid collection id (${id}).`, type: 'rest' });
      }
    });

    it('GET /collection lists what the caller may read, by name, with paging and text search', async () => {
      const anonymous = await api.anonymous().get('/collection?text=R');
      expect(names((await api.anonymous().get('/collection')).body)).toEqual(['Open', 'R Shown']);
      expect(anonymous.status).toBe(200);
      const forAlice = await api.as(alice).get('/collection');
      expect(names(forAlice.body)).toEqual(['Open', 'R Shared', 'R Shown']);
      expect(forAlice.headers['girder-total-count']).toBe('3');
      const forAdmin = await api.as(admin).get('/collection?limit=2&offset=1');
      const all = names((await api.as(admin).get('/collection?limit=0')).body);
      expect(all).toEqual([...all].sort());
      expect(names(forAdmin.body)).toEqual(all.slice(1, 3));
      expect(forAdmin.headers['girder-total-count']).toBe(String(all.length));
      const desc = await api.as(alice).get('/collection?sortdir=-1');
      expect(names(desc.body)).toEqual(['R Shown', 'R Shared', 'Open']);
      const text = await api.as(alice).get('/collection?text=telescope');
      expect(names(text.body)).toEqual(['R Shared']);
      const textAnon = await api.anonymous().get('/collection?text=telescope');
      expect(textAnon.body).toEqual([]);
      const byName = await api.anonymous().get('/collection?text=astronomy');
      expect(names(byName.body)).toEqual(['R Shown']);
    });
  });

  describe('PUT /collection/:id', () => {
    it('needs WRITE', async () => {
      const c = await create('W Target');
      await grant(c._id, [
        { id: alice._id, level: 0 },
        { id: admin._id, level: 2 },
      ]);
      const reader = await api.as(alice).put(`/collection/${c._id}`).type('form').send({ name: 'Taken over' });
      expect(reader.status).toBe(403);
      expect(reader.body).toEqual({
        message: `Write access denied for collection ${c._id} (user ${alice._id}).`,
        type: 'access',
      });
      const anonymous = await api.anonymous().put(`/collection/${c._id}`).type('form').send({ name: 'x' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({ message: 'You must be logged in.', type: 'access' });
      await grant(c._id, [
        { id: alice._id, level: 1 },
        { id: admin._id, level: 2 },
      ]);
      const writer = await api.as(alice).put(`/collection/${c._id}`).type('form').send({ description: '  edited  ' });
      expect(writer.status).toBe(200);
      expect(writer.body).toMatchObject({ name: 'W Target', description: 'edited', _accessLevel: 1 });
      expect(writer.body.updated > c.updated).toBe(true);
    });

    it('text search follows a rename, a new description and a delete', async () => {
      const found = async (text: string) =>
        names((await api.as(admin).get('/collection').query({ text })).body as { name: string }[]);
      const c = await create('Nebula atlas', { description: 'stars' });
      expect(await found('nebula')).toEqual(['Nebula atlas']);
      const put = (form: Record<string, string>) => api.as(admin).put(`/collection/${c._id}`).type('form').send(form);
      expect((await put({ name: 'Galaxy atlas' })).status).toBe(200);
      expect(await found('nebula')).toEqual([]);
      expect(await found('galaxy')).toEqual(['Galaxy atlas']);
      expect(await found('stars')).toEqual(['Galaxy atlas']);
      expect((await put({ description: 'planets' })).status).toBe(200);
      expect(await found('stars')).toEqual([]);
      expect(await found('planet')).toEqual(['Galaxy atlas']);
      expect((await api.as(admin).delete(`/collection/${c._id}`)).status).toBe(200);
      expect(await found('galaxy')).toEqual([]);
      expect(await found('planet')).toEqual([]);
    });

    it('renames, releasing the old name and claiming the new one', async () => {
      const c = await create('Old Name');
      await create('Occupied');
      const clash = await api.as(admin).put(`/collection/${c._id}`).type('form').send({ name: 'Occupied' });
      expect(clash.status).toBe(400);
      expect(clash.body).toEqual({
        message: 'A collection with that name already exists.',
        type: 'validation',
        field: 'name',
      });
      const empty = await api.as(admin).put(`/collection/${c._id}`).type('form').send({ name: ' ' });
      expect(empty.status).toBe(400);
      expect(empty.body).toEqual({ message: 'Collection name must not be empty.', type: 'validation', field: 'name' });
      const same = await api.as(admin).put(`/collection/${c._id}`).type('form').send({ name: ' Old Name ' });
      expect(same.status).toBe(200);
      const renamed = await api.as(admin).put(`/collection/${c._id}`).type('form').send({ name: '  New Name ' });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ _id: c._id, name: 'New Name' });
      expect((await api.as(admin).get(`/collection/${c._id}`)).body.name).toBe('New Name');
      const reuse = await api.as(admin).post('/collection').type('form').send({ name: 'Old Name' });
      expect(reuse.status).toBe(200);
      const clashNew = await api.as(admin).post('/collection').type('form').send({ name: 'New Name' });
      expect(clashNew.status).toBe(400);
      expect(clashNew.body.message).toBe('A collection with that name already exists.');
    });

    it('concurrent renames to one name leave exactly one holder', async () => {
      const cs = await Promise.all(['Swap A', 'Swap B', 'Swap C', 'Swap D'].map((n) => create(n)));
      const results = await Promise.all(
        cs.map((c) => api.as(admin).put(`/collection/${c._id}`).type('form').send({ name: 'Swap Target' })),
      );
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      const listed = names((await api.as(admin).get('/collection?limit=0')).body);
      expect(listed.filter((n) => n === 'Swap Target')).toHaveLength(1);
      expect(listed.filter((n) => n.startsWith('Swap '))).toHaveLength(4);
    });
  });

  describe('access', () => {
    it('GET /collection/:id/access needs ADMIN and expands users', async () => {
      const c = await create('A Target');
      await grant(c._id, [
        { id: admin._id, level: 2 },
        { id: alice._id, level: 1 },
      ]);
      const writer = await api.as(alice).get(`/collection/${c._id}/access`);
      expect(writer.status).toBe(403);
      expect(writer.body).toEqual({
        message: `Admin access denied for collection ${c._id} (user ${alice._id}).`,
        type: 'access',
      });
      const res = await api.as(admin).get(`/collection/${c._id}/access`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        users: [
          { id: admin._id, level: 2, flags: [], login: 'admin', name: 'Site Admin' },
          { id: alice._id, level: 1, flags: [], login: 'alice', name: 'Alice Liddell' },
        ],
        groups: [],
      });
      // What GET returns can be PUT back.
      const back = await api
        .as(admin)
        .put(`/collection/${c._id}/access`)
        .type('form')
        .send({ access: JSON.stringify(res.body) });
      expect(back.status).toBe(200);
      expect(back.body.access).toEqual({
        users: [
          { id: admin._id, level: 2, flags: [] },
          { id: alice._id, level: 1, flags: [] },
        ],
        groups: [],
      });
    });

    it('PUT /collection/:id/access replaces the ACL, public and publicFlags, and answers the view with access', async () => {
      const c = await create('P Target');
      const res = await api
        .as(admin)
        .put(`/collection/${c._id}/access`)
        .type('form')
        .send({
          access: JSON.stringify({ users: [{ id: bob._id, level: 2, flags: ['x'] }] }),
          public: 'true',
          publicFlags: '["some.flag"]',
        });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual([...VIEW_FIELDS, 'access', 'publicFlags'].sort());
      expect(res.body).toMatchObject({
        _id: c._id,
        public: true,
        publicFlags: [],
        _accessLevel: 2,
        updated: c.updated,
      });
      expect(res.body.access).toEqual({ users: [{ id: bob._id, level: 2, flags: [] }], groups: [] });
      expect((await api.anonymous().get(`/collection/${c._id}`)).body.public).toBe(true);
      // Bob now administers it; the admin's own entry is gone but site admins pass anyway.
      const bobView = await api.as(bob).get(`/collection/${c._id}/access`);
      expect(bobView.status).toBe(200);
      const keepPublic = await api.as(bob).put(`/collection/${c._id}/access`).type('form').send({ access: '{}' });
      expect(keepPublic.body).toMatchObject({ public: true, access: { users: [], groups: [] } });
      const lockedOut = await api.as(bob).get(`/collection/${c._id}/access`);
      expect(lockedOut.status).toBe(403);
    });

    it('validates access, publicFlags and the caller', async () => {
      const c = await create('V Target');
      const cases: [Record<string, string>, unknown][] = [
        [{}, { message: "Parameter 'access' is required.", type: 'rest' }],
        [{ access: 'nope' }, { message: 'Parameter access must be valid JSON.', type: 'rest' }],
        [{ access: '[]' }, { message: 'Parameter access must be a JSON object.', type: 'rest' }],
        [
          { access: '{"users":[{"id":"0123456789abcdef01234567"}]}' },
          { message: 'Invalid access list', type: 'validation', field: 'access' },
        ],
        [
          { access: '{"users":[{"id":"0123456789abcdef01234567","level":3}]}' },
          { message: 'Invalid access level', type: 'validation', field: 'access' },
        ],
        [
          { access: '{}', publicFlags: '{}' },
          { message: 'Parameter publicFlags must be a JSON array.', type: 'rest' },
        ],
      ];
      for (const [params, body] of cases) {
        const res = await api.as(admin).put(`/collection/${c._id}/access`).type('form').send(params);
        expect({ params, status: res.status, body: res.body }).toEqual({ params, status: 400, body });
      }
      const denied = await api.as(alice).put(`/collection/${c._id}/access`).type('form').send({ access: '{}' });
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({
        message: `Admin access denied for collection ${c._id} (user ${alice._id}).`,
        type: 'access',
      });
    });
  });

  describe('DELETE /collection/:id', () => {
    it('needs ADMIN, deletes, frees the name and removes the folders rooted in it from the read model', async () => {
      const c = await create('D Target');
      await grant(c._id, [
        { id: admin._id, level: 2 },
        { id: alice._id, level: 1 },
      ]);
      const top = await api
        .as(admin)
        .post('/folder')
        .type('form')
        .send({ parentType: 'collection', parentId: c._id, name: 'Top' });
      expect(top.status).toBe(200);
      const sub = await api
        .as(admin)
        .post('/folder')
        .type('form')
        .send({ parentType: 'folder', parentId: top.body._id, name: 'Sub' });
      expect(sub.status).toBe(200);
      const userFolders = await api.runtime.services.readModel.folders.listChildren({
        parentType: 'user',
        parentId: alice._id,
        viewer: null,
        paging: { limit: 0, offset: 0, sort: 'name', sortdir: 1 },
      });

      const writer = await api.as(alice).delete(`/collection/${c._id}`);
      expect(writer.status).toBe(403);
      expect(writer.body).toEqual({
        message: `Admin access denied for collection ${c._id} (user ${alice._id}).`,
        type: 'access',
      });
      const res = await api.as(admin).delete(`/collection/${c._id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: 'Deleted collection D Target.' });

      const gone = await api.as(admin).get(`/collection/${c._id}`);
      expect(gone.status).toBe(400);
      expect(gone.body).toEqual({ message: `Invalid collection id (${c._id}).`, type: 'rest' });
      const again = await api.as(admin).delete(`/collection/${c._id}`);
      expect(again.status).toBe(400);
      const rm = api.runtime.services.readModel;
      expect(await rm.folders.get(top.body._id)).toBeNull();
      expect(await rm.folders.get(sub.body._id)).toBeNull();
      const stillThere = await rm.folders.listChildren({
        parentType: 'user',
        parentId: alice._id,
        viewer: null,
        paging: { limit: 0, offset: 0, sort: 'name', sortdir: 1 },
      });
      expect(stillThere.rows.map((f) => f._id)).toEqual(userFolders.rows.map((f) => f._id));
      const recreated = await api.as(admin).post('/collection').type('form').send({ name: 'D Target' });
      expect(recreated.status).toBe(200);
      expect(recreated.body._id).not.toBe(c._id);
    });

    it('removes every folder, item and file under the collection and reclaims the bytes nothing else references', async () => {
      const c = await create('D Whole');
      const folder = async (parentType: string, parentId: string, name: string) => {
        const res = await api.as(admin).post('/folder').type('form').send({ parentType, parentId, name });
        expect(res.status).toBe(200);
        return res.body._id as string;
      };
      const item = async (folderId: string, name: string) => {
        const res = await api.as(admin).post('/item').type('form').send({ folderId, name });
        expect(res.status).toBe(200);
        return res.body._id as string;
      };
      const upload = async (parentType: 'folder' | 'item', parentId: string, name: string, bytes: Buffer) => {
        const res = await api
          .as(admin)
          .post('/file')
          .query({ parentType, parentId, name, size: bytes.length })
          .set('Content-Type', 'application/octet-stream')
          .send(bytes);
        expect(res.status).toBe(200);
        return res.body as { _id: string; itemId: string };
      };
      const rm = api.runtime.services.readModel;
      const blobOf = async (fileId: string) => (await rm.files.get(fileId))!.blobId;
      const blobFile = (blobId: string) => path.join(api.server.dataDir, 'blobs', blobId.slice(0, 2), blobId);

      const top = await folder('collection', c._id, 'Top');
      const sub = await folder('folder', top, 'Sub');
      const deep = await folder('folder', sub, 'Deep');
      const other = await folder('collection', c._id, 'Other');
      const folderIds = [top, sub, deep, other];
      const topItem = await item(top, 'top item');
      const deepItem = await item(deep, 'deep item');
      const files = [
        await upload('item', topItem, 'a.bin', Buffer.from('collection delete: bytes of a')),
        await upload('item', deepItem, 'b.bin', Buffer.from('collection delete: bytes of b')),
        await upload('folder', sub, 'uploaded.txt', Buffer.from('collection delete: an upload into a folder')),
        await upload('folder', other, 'shared.bin', Buffer.from('collection delete: bytes also outside')),
      ];
      const itemIds = [topItem, deepItem, files[2].itemId, files[3].itemId];
      // The same bytes in a folder outside the collection: that blob stays.
      const adminFolders = await api.as(admin).get(`/folder?parentType=user&parentId=${admin._id}`);
      const outside = await upload(
        'folder',
        adminFolders.body[0]._id,
        'shared.bin',
        Buffer.from('collection delete: bytes also outside'),
      );
      const blobs = await Promise.all(files.map((f) => blobOf(f._id)));
      expect(await blobOf(outside._id)).toBe(blobs[3]);
      for (const blobId of blobs) expect(fs.existsSync(blobFile(blobId))).toBe(true);
      expect((await api.as(admin).get(`/collection/${c._id}`)).body.size).toBeGreaterThan(0);

      const res = await api.as(admin).delete(`/collection/${c._id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: 'Deleted collection D Whole.' });

      for (const id of folderIds) {
        const gone = await api.as(admin).get(`/folder/${id}`);
        expect([gone.status, gone.body]).toEqual([400, { message: `Invalid folder id (${id}).`, type: 'rest' }]);
      }
      for (const id of itemIds) {
        const gone = await api.as(admin).get(`/item/${id}`);
        expect([gone.status, gone.body]).toEqual([400, { message: `Invalid item id (${id}).`, type: 'rest' }]);
      }
      for (const { _id: id } of files) {
        const gone = await api.as(admin).get(`/file/${id}`);
        expect([gone.status, gone.body]).toEqual([400, { message: `Invalid file id (${id}).`, type: 'rest' }]);
      }
      expect(blobs.slice(0, 3).map((b) => fs.existsSync(blobFile(b)))).toEqual([false, false, false]);
      expect(fs.existsSync(blobFile(blobs[3]))).toBe(true);
      expect((await api.as(admin).get(`/file/${outside._id}/download`)).status).toBe(200);
      // History index: each removed folder was deleted along with the collection.
      for (const id of folderIds) {
        expect((await rm.subtree.subtreeOpsFor(id)).map((op) => [op.operation, op.rootId])).toEqual([
          ['deleted', c._id],
        ]);
      }

      const live = await rm.dump();
      await rebuild(api.runtime.services.eventStore, rm);
      expect(await rm.dump()).toEqual(live);
    });
  });

  describe('event log', () => {
    it('rebuilding the read models from the log gives the live state (runs last)', async () => {
      const { eventStore, readModel } = api.runtime.services;
      const live = await readModel.dump();
      const checkpoint = await readModel.checkpoint('read-models');
      await api.runtime.services.projector.stop();
      await rebuild(eventStore, readModel);
      expect(await readModel.dump()).toEqual(live);
      expect(await readModel.checkpoint('read-models')).toBe(checkpoint);
      expect(live.rm_collections.length).toBeGreaterThan(10);
    });
  });
});
