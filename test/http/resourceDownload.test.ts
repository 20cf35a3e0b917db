import { binary, startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { readZip } from '../support/readZip';

/**
 * Downloads of many resources (Girder's layouts): `GET /collection/:id/download`, `GET /item/:id/download` with
 * `format=zip`, `offset` and `contentDisposition`, and `GET`/`POST /resource/download` with `includeMetadata`.
 */
describe('downloads of many resources', () => {
  let api: ApiClient;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let collectionId: string;
  let openFolder: string;
  let hiddenFolder: string;
  let single: string;
  let multi: string;
  let described: string;
  let singleFile: string;

  async function post(user: TestUser, url: string, form: Record<string, string>) {
    const res = await api.as(user).post(url).type('form').send(form);
    if (res.status !== 200) throw new Error(`POST ${url}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Record<string, any>;
  }
  async function upload(user: TestUser, itemId: string, name: string, text: string, mimeType = 'text/plain') {
    const bytes = Buffer.from(text);
    const res = await api
      .as(user)
      .post('/file')
      .query({ parentType: 'item', parentId: itemId, name, size: bytes.length, mimeType })
      .send(bytes);
    if (res.status !== 200) throw new Error(`POST /file ${name}: ${res.status}`);
    return res.body as Record<string, any>;
  }
  const get = (user: TestUser | null, url: string, query: Record<string, string> = {}) =>
    api.as(user).get(url).query(query).buffer(true).parse(binary);
  /** The archive's entries as [name, text] pairs, in archive order. */
  const entries = async (body: Buffer) => (await readZip(body)).map((e) => [e.name, e.data.toString('utf8')]);
  const jsonOf = (body: Buffer) => JSON.parse(body.toString('utf8'));

  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin');
    alice = await api.createUser('alice');
    bob = await api.createUser('bobby');
    collectionId = (await post(admin, '/collection', { name: 'Lab: data', public: 'true' }))._id;
    openFolder = (
      await post(admin, '/folder', { parentType: 'collection', parentId: collectionId, name: 'Open', public: 'true' })
    )._id;
    hiddenFolder = (
      await post(admin, '/folder', {
        parentType: 'collection',
        parentId: collectionId,
        name: 'Hidden',
        public: 'false',
      })
    )._id;
    const sub = (await post(admin, '/folder', { parentId: openFolder, name: 'Sub' }))._id;
    single = (await post(admin, '/item', { folderId: openFolder, name: 'one.txt' }))._id;
    singleFile = (await upload(admin, single, 'one.txt', 'single file'))._id;
    multi = (await post(admin, '/item', { folderId: openFolder, name: 'pair' }))._id;
    await upload(admin, multi, 'a.txt', 'A');
    await upload(admin, multi, 'b.csv', 'B', 'text/csv');
    described = (await post(admin, '/item', { folderId: sub, name: 'described.txt' }))._id;
    await upload(admin, described, 'described.txt', 'with meta');
    await api
      .as(admin)
      .put(`/item/${described}/metadata`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ ünit: 'µm', n: [1, 2] }));
    await api
      .as(admin)
      .put(`/folder/${sub}/metadata`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ k: 'v' }));
    const secret = (await post(admin, '/item', { folderId: hiddenFolder, name: 'secret' }))._id;
    await upload(admin, secret, 'secret.txt', 'secret');
  });
  afterAll(() => api.close());

  describe('GET /collection/:id/download', () => {
    it("zips the collection's readable folders under its name, as the caller may read them", async () => {
      const res = await get(admin, `/collection/${collectionId}/download`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/zip');
      expect(res.headers['content-disposition']).toBe('attachment; filename="Lab: data.zip"');
      // Girder's layout; the root segment's `:` becomes `_` (src/queries/zipLayout.ts).
      expect(await entries(res.body)).toEqual([
        ['Lab_ data/Open/Sub/described.txt', 'with meta'],
        ['Lab_ data/Open/one.txt', 'single file'],
        ['Lab_ data/Open/pair/a.txt', 'A'],
        ['Lab_ data/Open/pair/b.csv', 'B'],
        ['Lab_ data/Hidden/secret/secret.txt', 'secret'],
      ]);
      const anonymous = await get(null, `/collection/${collectionId}/download`);
      expect(anonymous.status).toBe(200);
      expect((await entries(anonymous.body)).map(([name]) => name)).toEqual([
        'Lab_ data/Open/Sub/described.txt',
        'Lab_ data/Open/one.txt',
        'Lab_ data/Open/pair/a.txt',
        'Lab_ data/Open/pair/b.csv',
      ]);
    });

    it('keeps only the MIME types of mimeFilter', async () => {
      const res = await get(admin, `/collection/${collectionId}/download`, { mimeFilter: '["text/csv"]' });
      expect(await entries(res.body)).toEqual([['Lab_ data/Open/pair/b.csv', 'B']]);
      const bad = await get(admin, `/collection/${collectionId}/download`, { mimeFilter: '{"a":1}' });
      expect(bad.status).toBe(400);
      expect(jsonOf(bad.body)).toEqual({ message: 'Parameter mimeFilter must be a JSON array.', type: 'rest' });
    });

    it('needs READ on the collection', async () => {
      const hidden = await post(admin, '/collection', { name: 'Private one' });
      const denied = await get(bob, `/collection/${hidden._id}/download`);
      expect(denied.status).toBe(403);
      expect(jsonOf(denied.body)).toEqual({
        message: `Read access denied for collection ${hidden._id} (user ${bob._id}).`,
        type: 'access',
      });
      const missing = await get(bob, '/collection/000000000000000000000000/download');
      expect(missing.status).toBe(400);
      expect(jsonOf(missing.body)).toEqual({
        message: 'Invalid collection id (000000000000000000000000).',
        type: 'rest',
      });
    });
  });

  describe('GET /item/:id/download', () => {
    it('sends the one file from offset, with the disposition asked for', async () => {
      const whole = await get(alice, `/item/${single}/download`);
      expect(whole.status).toBe(200);
      expect(whole.body.toString()).toBe('single file');
      const part = await get(alice, `/item/${single}/download`, { offset: '7', contentDisposition: 'inline' });
      expect(part.status).toBe(206);
      expect(part.body.toString()).toBe('file');
      expect(part.headers['content-range']).toBe('bytes 7-10/11');
      expect(part.headers['content-disposition']).toBe('inline; filename="one.txt"');
    });

    it('zips even a single file with format=zip, under the item name', async () => {
      const res = await get(alice, `/item/${single}/download`, { format: 'zip' });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/zip');
      expect(res.headers['content-disposition']).toBe('attachment; filename="one.txt.zip"');
      expect(await entries(res.body)).toEqual([['one.txt/one.txt', 'single file']]);
      const pair = await get(alice, `/item/${multi}/download`, { format: '' });
      expect(await entries(pair.body)).toEqual([
        ['pair/a.txt', 'A'],
        ['pair/b.csv', 'B'],
      ]);
    });

    it("refuses another format and another disposition with Girder's messages", async () => {
      const format = await get(alice, `/item/${single}/download`, { format: 'tar' });
      expect(format.status).toBe(400);
      expect(jsonOf(format.body)).toEqual({ message: 'Unsupported format: tar.', type: 'rest' });
      const disposition = await get(alice, `/item/${single}/download`, { contentDisposition: 'evil' });
      expect(disposition.status).toBe(400);
      expect(jsonOf(disposition.body)).toEqual({
        message: 'Invalid value for contentDisposition: "evil". Allowed values: inline, attachment.',
        type: 'rest',
      });
    });
  });

  describe('GET and POST /resource/download', () => {
    it('zips each resource under its own name, in the order the set names them', async () => {
      const resources = JSON.stringify({ item: [single, multi], folder: [openFolder] });
      const res = await get(admin, '/resource/download', { resources });
      expect(res.status).toBe(200);
      expect(res.headers['content-disposition']).toBe('attachment; filename="Resources.zip"');
      expect(await entries(res.body)).toEqual([
        ['one.txt', 'single file'],
        ['pair/a.txt', 'A'],
        ['pair/b.csv', 'B'],
        ['Open/Sub/described.txt', 'with meta'],
        ['Open/one.txt', 'single file'],
        ['Open/pair/a.txt', 'A'],
        ['Open/pair/b.csv', 'B'],
      ]);
      const posted = await api
        .as(admin)
        .post('/resource/download')
        .type('form')
        .send({ resources: JSON.stringify({ collection: [collectionId], user: [alice._id] }) })
        .buffer(true)
        .parse(binary);
      expect(posted.status).toBe(200);
      // alice's default folders hold nothing: the user adds no entry.
      expect((await entries(posted.body)).map(([name]) => name)).toEqual([
        'Lab_ data/Open/Sub/described.txt',
        'Lab_ data/Open/one.txt',
        'Lab_ data/Open/pair/a.txt',
        'Lab_ data/Open/pair/b.csv',
        'Lab_ data/Hidden/secret/secret.txt',
      ]);
    });

    it("adds items' and folders' metadata as Girder's JSON files with includeMetadata", async () => {
      const resources = JSON.stringify({ folder: [openFolder], item: [described] });
      const res = await get(admin, '/resource/download', { resources, includeMetadata: 'true' });
      expect(await entries(res.body)).toEqual([
        ['Open/Sub/described.txt/described.txt', 'with meta'],
        ['Open/Sub/described.txt/girder-item-metadata.json', '{"\\u00fcnit": "\\u00b5m", "n": [1, 2]}'],
        ['Open/Sub/girder-folder-metadata.json', '{"k": "v"}'],
        ['Open/one.txt', 'single file'],
        ['Open/pair/a.txt', 'A'],
        ['Open/pair/b.csv', 'B'],
        ['described.txt/described.txt', 'with meta'],
        ['described.txt/girder-item-metadata.json', '{"\\u00fcnit": "\\u00b5m", "n": [1, 2]}'],
      ]);
    });

    it("checks the whole set first, with Girder's messages", async () => {
      const missing = await get(admin, '/resource/download', {
        resources: JSON.stringify({ item: [single, '000000000000000000000000'] }),
      });
      expect(missing.status).toBe(400);
      expect(jsonOf(missing.body)).toEqual({
        message: 'Resource item 000000000000000000000000 not found.',
        type: 'rest',
      });
      const denied = await get(bob, '/resource/download', {
        resources: JSON.stringify({ folder: [openFolder, hiddenFolder] }),
      });
      expect(denied.status).toBe(403);
      expect(jsonOf(denied.body)).toEqual({
        message: `Read access denied for folder ${hiddenFolder} (user ${bob._id}).`,
        type: 'access',
      });
      for (const [resources, message] of [
        ['{}', 'No resources specified.'],
        ['{"item": []}', 'No resources specified.'],
        [JSON.stringify({ file: [singleFile] }), 'Invalid resources format.'],
        [JSON.stringify({ item: [1] }), 'Invalid resources format.'],
        ['[1]', 'Parameter resources must be a JSON object.'],
      ]) {
        const res = await get(admin, '/resource/download', { resources });
        expect(res.status).toBe(400);
        expect(jsonOf(res.body)).toEqual({ message, type: 'rest' });
      }
      const absent = await get(admin, '/resource/download');
      expect(absent.status).toBe(400);
      expect(jsonOf(absent.body)).toEqual({ message: "Parameter 'resources' is required.", type: 'rest' });
    });
  });
});
