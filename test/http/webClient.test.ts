import { startApi, type ApiClient, type TestUser } from '../support/apiClient';

const basic = (login: string, password: string) => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;

describe('the web client and the routes it calls', () => {
  let api: ApiClient;
  let admin: TestUser;
  let alice: TestUser;
  const folderOf = async (user: TestUser, name: string) =>
    (await api.as(user).get('/folder').query({ parentType: 'user', parentId: user._id, name })).body[0]._id as string;

  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin');
    alice = await api.createUser('alice', { firstName: 'Alice', lastName: 'Liddell' });
  });
  afterAll(() => api.close());

  describe('the page', () => {
    it("serves the client from the @girder/core package at /, with this service's scripts", async () => {
      const page = await api.site().get('/');
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.text).toContain('<div id="app" root=""></div>');
      expect(page.text).toContain('<script type="module" src="/static/boot.js"></script>');
      const boot = await api.site().get('/static/boot.js');
      expect(boot.text).toContain("import { girder } from '/static/girder/girder-core.js';");
      expect(boot.text).toContain('await girder.initializeDefaultApp(apiRoot);');
      const bundle = await api.site().get('/static/girder/girder-core.js');
      expect(bundle.status).toBe(200);
      expect(bundle.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(bundle.headers['cache-control']).toBe('public, max-age=3600');
      expect(bundle.text).toContain('export { mM as girder };');
      const css = await api.site().get('/static/girder/girder-core.css');
      expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
      const panel = await api.site().get('/static/activity-panel.js');
      expect(panel.status).toBe(200);
      expect(panel.text).toContain('fs-activity-panel');
      const files = await api.anonymous().get('/system/plugin_static_files');
      expect(files.body).toEqual({
        css: ['/static/user-quota.css'],
        js: [
          '/static/activity-panel.js',
          '/static/user-quota-common.js',
          '/static/user-quota-models.js',
          '/static/user-quota-dialog.js',
          '/static/user-quota-menus.js',
          '/static/user-quota-upload.js',
          '/static/user-quota-config.js',
        ],
      });
      for (const script of files.body.js as string[]) {
        const served = await api.site().get(script);
        expect([script, served.status, served.headers['content-type']]).toEqual([
          script,
          200,
          'text/javascript; charset=utf-8',
        ]);
      }
      const quotaCss = await api.site().get('/static/user-quota.css');
      expect(quotaCss.status).toBe(200);
      expect(quotaCss.headers['content-type']).toBe('text/css; charset=utf-8');
      expect(quotaCss.text).toContain('#g-policies-edit-form');
      expect((await api.anonymous().get('/system/access_flag')).body).toEqual({});
    });

    it('keeps Swagger UI at /api/v1', async () => {
      const docs = await api.anonymous().get('');
      expect(docs.status).toBe(200);
      expect(docs.text).toContain('swagger-ui');
    });
  });

  describe('system settings', () => {
    it("has public settings with this service's defaults", async () => {
      const res = await api.anonymous().get('/system/public_settings');
      expect(res.body).toEqual({
        'core.brand_name': 'Folder Service',
        'core.contact_email_address': 'admin@example.com',
        'core.privacy_notice': 'https://www.apache.org/licenses/LICENSE-2.0',
        'core.banner_color': '#3F3B3B',
        'core.registration_policy': 'open',
        'core.enable_password_login': true,
      });
    });

    it('sets, lists and unsets settings as a site administrator, validating each', async () => {
      const byUser = await api
        .as(alice)
        .put('/system/setting')
        .type('form')
        .send({ key: 'core.brand_name', value: 'Mine' });
      expect(byUser.status).toBe(403);
      expect(byUser.body).toEqual({ message: 'Administrator access required.', type: 'access' });
      expect((await api.anonymous().get('/system/setting').query({ key: 'core.brand_name' })).status).toBe(401);
      const set = await api
        .as(admin)
        .put('/system/setting')
        .type('form')
        .send({ key: 'core.brand_name', value: 'Data Lake' });
      expect(set.status).toBe(200);
      expect(set.body).toBe(true);
      expect((await api.anonymous().get('/system/public_settings')).body['core.brand_name']).toBe('Data Lake');
      expect((await api.as(admin).get('/system/setting').query({ key: 'core.brand_name' })).body).toBe('Data Lake');
      const listed = await api
        .as(admin)
        .put('/system/setting')
        .type('form')
        .send({
          list: JSON.stringify([
            { key: 'core.banner_color', value: '#112233' },
            { key: 'core.enable_password_login', value: 'true' },
          ]),
        });
      expect(listed.status).toBe(200);
      const got = await api
        .as(admin)
        .get('/system/setting')
        .query({ list: JSON.stringify(['core.banner_color', 'core.enable_password_login']) });
      expect(got.body).toEqual({ 'core.banner_color': '#112233', 'core.enable_password_login': true });
      const unknown = await api.as(admin).put('/system/setting').type('form').send({ key: 'core.nope', value: '1' });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toEqual({ message: 'Invalid setting key "core.nope".', type: 'validation', field: 'key' });
      const color = await api
        .as(admin)
        .put('/system/setting')
        .type('form')
        .send({ key: 'core.banner_color', value: 'red' });
      expect(color.body).toEqual({
        message: 'The banner color must be a hex color triplet',
        type: 'validation',
        field: 'value',
      });
      // All or nothing: the valid first entry is not stored when the second is refused.
      const partial = await api
        .as(admin)
        .put('/system/setting')
        .type('form')
        .send({
          list: JSON.stringify([
            { key: 'core.brand_name', value: 'Half' },
            { key: 'core.registration_policy', value: 'maybe' },
          ]),
        });
      expect(partial.body).toEqual({
        message: 'Registration policy must be "open", "closed", or "approve".',
        type: 'validation',
        field: 'value',
      });
      expect((await api.anonymous().get('/system/public_settings')).body['core.brand_name']).toBe('Data Lake');
      const noKey = await api.as(admin).get('/system/setting');
      expect(noKey.body).toEqual({ message: "Parameter 'key' is required.", type: 'rest' });
      const unset = await api.as(admin).delete('/system/setting').query({ key: 'core.brand_name' });
      expect(unset.status).toBe(200);
      expect((await api.anonymous().get('/system/public_settings')).body['core.brand_name']).toBe('Folder Service');
    });

    it('honours closed registration and disabled password login', async () => {
      await api
        .as(admin)
        .put('/system/setting')
        .type('form')
        .send({ key: 'core.registration_policy', value: 'closed' });
      const closed = await api
        .anonymous()
        .post('/user')
        .type('form')
        .send({ login: 'newbie', email: 'newbie@example.com', firstName: 'N', lastName: 'B', password: 'password1' });
      expect(closed.status).toBe(400);
      expect(closed.body).toEqual({
        message: 'Registration on this instance is closed. Contact an administrator to create an account for you.',
        type: 'rest',
      });
      const byAdmin = await api
        .as(admin)
        .post('/user')
        .type('form')
        .send({ login: 'newbie', email: 'newbie@example.com', firstName: 'N', lastName: 'B', password: 'password1' });
      expect(byAdmin.status).toBe(200);
      await api.as(admin).put('/system/setting').type('form').send({ key: 'core.registration_policy', value: 'open' });
      await api
        .as(admin)
        .put('/system/setting')
        .type('form')
        .send({ key: 'core.enable_password_login', value: 'false' });
      const login = await api.anonymous().get('/user/authentication').set('Authorization', basic('alice', 'password1'));
      expect(login.status).toBe(400);
      expect(login.body).toEqual({ message: 'Password login is disabled on this instance.', type: 'rest' });
      await api.as(admin).delete('/system/setting').query({ key: 'core.enable_password_login' });
      expect(
        (await api.anonymous().get('/user/authentication').set('Authorization', basic('alice', 'password1'))).status,
      ).toBe(200);
    });
  });

  describe('account and details routes', () => {
    it('changes the password with the old one', async () => {
      const bob = await api.createUser('bobby');
      const wrong = await api.as(bob).put('/user/password').type('form').send({ old: 'nope', new: 'another1' });
      expect(wrong.status).toBe(403);
      expect(wrong.body).toEqual({ message: 'Old password is incorrect.', type: 'access' });
      const short = await api.as(bob).put('/user/password').type('form').send({ old: 'password1', new: 'short' });
      expect(short.body).toEqual({
        message: 'Password must be at least 6 characters.',
        type: 'validation',
        field: 'password',
      });
      const changed = await api.as(bob).put('/user/password').type('form').send({ old: 'password1', new: 'another1' });
      expect(changed.body).toEqual({ message: 'Password changed.' });
      expect(
        (await api.anonymous().get('/user/authentication').set('Authorization', basic('bobby', 'password1'))).status,
      ).toBe(401);
      expect(
        (await api.anonymous().get('/user/authentication').set('Authorization', basic('bobby', 'another1'))).status,
      ).toBe(200);
    });

    it("counts users, a user's folders, collections and a collection's folders", async () => {
      expect((await api.anonymous().get('/user/details')).status).toBe(401);
      expect((await api.as(alice).get('/user/details')).body).toEqual({
        nUsers: (await api.as(admin).get('/user').query({ limit: 0 })).body.length,
      });
      expect((await api.as(alice).get(`/user/${alice._id}/details`)).body).toEqual({ nFolders: 2 });
      // Anonymous callers see Alice's Public folder only.
      expect((await api.anonymous().get(`/user/${alice._id}/details`)).body).toEqual({ nFolders: 1 });
      const collection = (await api.as(admin).post('/collection').type('form').send({ name: 'Shelf' })).body._id;
      await api
        .as(admin)
        .post('/folder')
        .type('form')
        .send({ parentType: 'collection', parentId: collection, name: 'A' });
      expect((await api.as(admin).get('/collection/details')).body).toEqual({ nCollections: 1 });
      expect((await api.anonymous().get('/collection/details')).body).toEqual({ nCollections: 0 });
      expect((await api.as(admin).get(`/collection/${collection}/details`)).body).toEqual({ nFolders: 1 });
    });

    it("gives an item's root path: its folder's, then the folder", async () => {
      const publicFolder = await folderOf(alice, 'Public');
      const item = await api.newItem(alice, publicFolder, 'notes');
      const res = await api.anonymous().get(`/item/${item}/rootpath`);
      expect(res.status).toBe(200);
      expect(res.body.map((e: { type: string; object: { _id: string } }) => [e.type, e.object._id])).toEqual([
        ['user', alice._id],
        ['folder', publicFolder],
      ]);
      const privateItem = await api.newItem(alice, await folderOf(alice, 'Private'), 'secret');
      const denied = await api.anonymous().get(`/item/${privateItem}/rootpath`);
      expect(denied.status).toBe(401);
      expect(denied.body).toEqual({
        message: `Read access denied for item ${privateItem} (user None).`,
        type: 'access',
      });
    });

    it('downloads an item: its one file as is, several files as a zip', async () => {
      const folder = await folderOf(alice, 'Public');
      const item = await api.newItem(alice, folder, 'one');
      await api.addFile(alice, item, 'single file bytes', 'one.txt');
      const single = await api
        .anonymous()
        .get(`/item/${item}/download`)
        .buffer(true)
        .parse((res, done) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => done(null, Buffer.concat(chunks)));
        });
      expect(single.status).toBe(200);
      expect((single.body as Buffer).toString()).toBe('single file bytes');
      await api.addFile(alice, item, 'second', 'two.txt');
      const zip = await api.anonymous().get(`/item/${item}/download`);
      expect(zip.status).toBe(200);
      expect(zip.headers['content-type']).toBe('application/zip');
      expect(zip.headers['content-disposition']).toBe('attachment; filename="one.zip"');
    });
  });

  describe('resource routes', () => {
    it('searches users, groups and folders by prefix and folders by text', async () => {
      await api.as(alice).post('/group').type('form').send({ name: 'Alpine club', public: 'true' });
      const prefix = await api
        .as(alice)
        .get('/resource/search')
        .query({ q: 'Al', mode: 'prefix', types: JSON.stringify(['user', 'group', 'folder']) });
      expect(prefix.status).toBe(200);
      expect(Object.keys(prefix.body).sort()).toEqual(['folder', 'group', 'user']);
      expect(prefix.body.folder).toEqual([]);
      expect(prefix.body.user.map((u: { login: string }) => u.login)).toEqual(['alice']);
      expect(prefix.body.group.map((g: { name: string }) => g.name)).toEqual(['Alpine club']);
      const text = await api
        .anonymous()
        .get('/resource/search')
        .query({ q: 'Public', types: JSON.stringify(['folder']) });
      expect(text.body.folder.length).toBeGreaterThan(0);
      const badMode = await api.anonymous().get('/resource/search').query({ q: 'x', mode: 'fuzzy', types: '[]' });
      expect(badMode.body).toEqual({ message: "Search mode handler 'fuzzy' not found.", type: 'rest' });
      const noTypes = await api.anonymous().get('/resource/search').query({ q: 'x' });
      expect(noTypes.body).toEqual({ message: "Parameter 'types' is required.", type: 'rest' });
    });

    it('moves, copies and deletes sets of folders and items', async () => {
      const publicFolder = await folderOf(alice, 'Public');
      const privateFolder = await folderOf(alice, 'Private');
      const sub = (
        await api
          .as(alice)
          .post('/folder')
          .type('form')
          .send({ parentType: 'folder', parentId: publicFolder, name: 'Box' })
      ).body._id;
      const item = await api.newItem(alice, publicFolder, 'loose');
      const resources = JSON.stringify({ folder: [sub], item: [item] });
      const toUser = await api
        .as(alice)
        .put('/resource/move')
        .type('form')
        .send({ resources, parentType: 'user', parentId: alice._id });
      expect(toUser.body).toEqual({ message: 'Invalid parentType.', type: 'rest' });
      const moved = await api
        .as(alice)
        .put('/resource/move')
        .type('form')
        .send({ resources, parentType: 'folder', parentId: privateFolder });
      expect(moved.status).toBe(200);
      expect((await api.as(alice).get(`/folder/${sub}`)).body.parentId).toBe(privateFolder);
      expect((await api.as(alice).get(`/item/${item}`)).body.folderId).toBe(privateFolder);
      const copied = await api
        .as(alice)
        .post('/resource/copy')
        .type('form')
        .send({ resources, parentType: 'folder', parentId: publicFolder });
      expect(copied.status).toBe(200);
      const publicNames = (
        await api.as(alice).get('/folder').query({ parentType: 'folder', parentId: publicFolder })
      ).body.map((f: { name: string }) => f.name);
      expect(publicNames).toContain('Box');
      const denied = await api
        .as(admin)
        .delete('/resource')
        .query({ resources: JSON.stringify({ user: [alice._id] }) });
      expect(denied.body).toEqual({ message: 'Invalid resource types requested: user', type: 'rest' });
      const empty = await api
        .as(alice)
        .delete('/resource')
        .query({ resources: JSON.stringify({ folder: [] }) });
      expect(empty.body).toEqual({ message: 'No resources specified.', type: 'rest' });
      const notHers = await api.createUser('mallory');
      const forbidden = await api.as(notHers).delete('/resource').query({ resources });
      expect(forbidden.status).toBe(403);
      const deleted = await api.as(alice).delete('/resource').query({ resources });
      expect(deleted.status).toBe(200);
      expect((await api.as(alice).get(`/folder/${sub}`)).body).toEqual({
        message: `Invalid folder id (${sub}).`,
        type: 'rest',
      });
      expect((await api.as(alice).get(`/item/${item}`)).body).toEqual({
        message: `Invalid item id (${item}).`,
        type: 'rest',
      });
    });
  });
});
