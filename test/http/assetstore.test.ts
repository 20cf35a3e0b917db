import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiClient, startApi, type TestUser } from '../support/apiClient';

/**
 * Girder's seven `/assetstore` routes (six here; import in place has its own file): site administrators make
 * filesystem and GridFS stores, one of them current; new uploads go to the current store, existing files stay where
 * they are and are read, copied, zipped and deleted across stores; a store is not deleted while files use it.
 */
describe('assetstores', () => {
  let api: ApiClient;
  let admin: TestUser;
  let alice: TestUser;
  let scratch: string;
  let folderId: string;

  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin');
    alice = await api.createUser('alice');
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'assetstores-'));
    folderId = await api.defaultFolder(alice, 'Private');
  });
  afterAll(async () => {
    await api?.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  const createFs = (name: string, root: string, extra: Record<string, string> = {}) =>
    api
      .as(admin)
      .post('/assetstore')
      .query({ name, type: 0, root, ...extra });
  /** girder_client's single-request upload into alice's folder; resolves with the file id. */
  const uploadWhole = async (name: string, bytes: Buffer) => {
    const res = await api
      .as(alice)
      .post('/file')
      .query({ parentType: 'folder', parentId: folderId, name, size: bytes.length })
      .send(bytes);
    expect(res.status).toBe(200);
    return res.body._id as string;
  };
  /** A chunked upload started (no bytes yet); resolves with the upload record. */
  const startChunked = async (name: string, size: number) => {
    const started = await api.as(alice).post('/file').query({ parentType: 'folder', parentId: folderId, name, size });
    expect(started.status).toBe(200);
    return started.body as { _id: string; assetstoreId: string };
  };
  const filesOf = async (assetstoreId: string) => {
    const res = await api.as(admin).get(`/assetstore/${assetstoreId}/files`);
    expect(res.status).toBe(200);
    return res.body as { _id: string; name: string; assetstoreId: string }[];
  };

  it('starts with the default filesystem store under DATA_DIR, current', async () => {
    const res = await api.as(admin).get('/assetstore');
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(1);
    const [store] = res.body;
    expect(store).toMatchObject({
      _id: '000000000000000000000001',
      name: 'Default',
      type: 0,
      current: true,
      root: path.join(api.server.dataDir, 'blobs'),
      perms: 0o600,
      hasFiles: false,
    });
    expect(typeof store.capacity.free).toBe('number');
    expect(typeof store.capacity.total).toBe('number');
  });

  it('is for site administrators only', async () => {
    for (const [method, url] of [
      ['get', '/assetstore'],
      ['get', '/assetstore/000000000000000000000001'],
      ['post', '/assetstore?name=x&type=0&root=/tmp/x'],
      ['put', '/assetstore/000000000000000000000001?name=x&current=true&root=/tmp/x'],
      ['delete', '/assetstore/000000000000000000000001'],
      ['get', '/assetstore/000000000000000000000001/files'],
    ] as const) {
      const res = await api.as(alice)[method](url);
      expect([method, url, res.status, res.body]).toEqual([
        method,
        url,
        403,
        { message: 'Administrator access required.', type: 'access' },
      ]);
      const anonymous = await api.anonymous()[method](url);
      expect(anonymous.status).toBe(401);
    }
  });

  it("refuses what Girder refuses, with Girder's messages", async () => {
    const cases: [Record<string, string | number>, number, Record<string, string>][] = [
      [{ name: 'a', type: 0 }, 400, { message: "Parameter 'root' is required.", type: 'rest' }],
      [{ name: 'a', type: 1 }, 400, { message: "Parameter 'db' is required.", type: 'rest' }],
      [{ name: 'a', type: 7, root: '/x' }, 400, { message: 'Invalid type parameter', type: 'rest' }],
      [
        { name: 'a', type: 0, root: 'relative/dir' },
        400,
        { message: 'You must provide an absolute path for the root directory.', type: 'validation', field: 'root' },
      ],
      [
        { name: 'a', type: 0, root: path.join(scratch, 'p'), perms: '9x' },
        400,
        { message: 'File permissions must be an octal integer.', type: 'validation' },
      ],
      [
        { name: 'a', type: 0, root: path.join(scratch, 'p'), perms: '0444' },
        400,
        { message: 'File permissions must allow "rw" for user.', type: 'validation' },
      ],
      [
        { name: '', type: 0, root: path.join(scratch, 'p') },
        400,
        { message: 'Name must not be empty.', type: 'validation', field: 'name' },
      ],
      [
        { name: 'Default', type: 0, root: path.join(scratch, 'p') },
        400,
        { message: 'An assetstore with that name already exists.', type: 'validation', field: 'name' },
      ],
      [
        { name: 'a', type: 0, root: path.join(api.server.dataDir, 'blobs') },
        400,
        { message: 'The assetstore "Default" already keeps its files there.', type: 'validation' },
      ],
      [
        { name: 'a', type: 1, db: 'has.dot' },
        400,
        { message: 'Database name cannot contain spaces or periods.', type: 'validation', field: 'db' },
      ],
    ];
    for (const [query, status, body] of cases) {
      const res = await api.as(admin).post('/assetstore').query(query);
      expect([query, res.status, res.body]).toEqual([query, status, body]);
    }
    const file = path.join(scratch, 'a-file');
    fs.writeFileSync(file, '');
    const notDir = await createFs('a', path.join(file, 'below'));
    expect(notDir.body).toEqual({
      message: `Could not make directory "${path.join(file, 'below')}".`,
      type: 'validation',
    });
    // Nothing of the refused requests was recorded.
    expect((await api.as(admin).get('/assetstore')).body).toHaveLength(1);
    const unknown = await api.as(admin).get('/assetstore/0123456789abcdef01234567');
    expect([unknown.status, unknown.body]).toEqual([
      400,
      { message: 'Invalid assetstore id (0123456789abcdef01234567).', type: 'rest' },
    ]);
  });

  it('uploads go to the current store; files stay in theirs and work across stores', async () => {
    const before = await uploadWhole('in-default.txt', Buffer.from('bytes in the default store'));
    const root = path.join(scratch, 'second');
    const created = await createFs('Second', root, { perms: '640' });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      _id: expect.stringMatching(/^[0-9a-f]{24}$/),
      name: 'Second',
      created: expect.any(String),
      current: false,
      type: 0,
      root,
      perms: 0o640,
    });
    const secondId = created.body._id as string;
    // Making it current moves the flag from the default store.
    const made = await api.as(admin).put(`/assetstore/${secondId}`).query({ name: 'Second', root, current: true });
    expect([made.status, made.body.current]).toEqual([200, true]);
    const listed = await api.as(admin).get('/assetstore').query({ sort: 'name' });
    expect(listed.body.map((s: { name: string; current: boolean }) => [s.name, s.current])).toEqual([
      ['Default', false],
      ['Second', true],
    ]);

    const content = Buffer.from('bytes in the second store');
    const after = await uploadWhole('in-second.txt', content);
    const chunked = await startChunked('chunked.txt', 13);
    expect(chunked.assetstoreId).toBe(secondId);
    const finished = await api
      .as(alice)
      .post('/file/chunk')
      .query({ uploadId: chunked._id, offset: 0 })
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('chunked bytes'));
    expect(finished.status).toBe(200);

    expect((await filesOf(secondId)).map((f) => [f.name, f.assetstoreId])).toEqual([
      ['in-second.txt', secondId],
      ['chunked.txt', secondId],
    ]);
    expect((await filesOf('000000000000000000000001')).map((f) => f._id)).toEqual([before]);
    // The bytes are under the second store's root, and both stores' files download.
    expect(fs.readdirSync(root).some((entry) => /^[0-9a-f]{2}$/.test(entry))).toBe(true);
    expect((await api.download(alice, after)).body).toEqual(content);
    expect((await api.download(alice, before)).body).toEqual(Buffer.from('bytes in the default store'));
    const ranged = await api.download(alice, after).set('Range', 'bytes=6-7');
    expect([ranged.status, ranged.body.toString()]).toEqual([206, 'in']);

    // A copy of an item references the same bytes in the same store.
    const itemId = (await api.as(alice).get(`/file/${after}`)).body.itemId as string;
    const copy = await api.as(alice).post(`/item/${itemId}/copy`).query({ name: 'copied' });
    expect(copy.status).toBe(200);
    expect(await filesOf(secondId)).toHaveLength(3);

    // A zip of the folder reads from both stores.
    const zip = await api.as(alice).get(`/folder/${folderId}/download`).buffer(true);
    expect(zip.status).toBe(200);

    // The default store is no longer current, and may not be deleted while a file uses it.
    const refused = await api.as(admin).delete('/assetstore/000000000000000000000001');
    expect([refused.status, refused.body]).toEqual([
      400,
      { message: 'You may not delete an assetstore that contains files.', type: 'validation' },
    ]);
    expect((await api.as(admin).delete(`/file/${before}`)).status).toBe(200);
    const deleted = await api.as(admin).delete('/assetstore/000000000000000000000001');
    expect([deleted.status, deleted.body]).toEqual([200, { message: 'Deleted assetstore Default.' }]);
    const last = await api.as(admin).delete(`/assetstore/${secondId}`);
    expect([last.status, last.body]).toEqual([
      400,
      { message: 'You may not delete the last assetstore.', type: 'validation' },
    ]);
  });

  it('keeps one store current: unsetting the current flag is refused', async () => {
    const stores = (await api.as(admin).get('/assetstore')).body as {
      _id: string;
      name: string;
      root: string;
      current: boolean;
    }[];
    const current = stores.find((s) => s.current)!;
    const res = await api
      .as(admin)
      .put(`/assetstore/${current._id}`)
      .query({ name: current.name, root: current.root, current: false });
    expect([res.status, res.body]).toEqual([
      400,
      {
        message: 'One assetstore must be current: make another one current instead.',
        type: 'validation',
        field: 'current',
      },
    ]);
  });

  it('an upload finishes in the store it started in, and fails cleanly when that store is gone', async () => {
    const thirdRoot = path.join(scratch, 'third');
    const third = (await createFs('Third', thirdRoot)).body._id as string;
    const started = await startChunked('started.txt', 3);
    expect(started.assetstoreId).not.toBe(third);
    // Another store becomes current meanwhile: the upload still finishes where it started.
    await api.as(admin).put(`/assetstore/${third}`).query({ name: 'Third', root: thirdRoot, current: true });
    const done = await api
      .as(alice)
      .post('/file/chunk')
      .query({ uploadId: started._id, offset: 0 })
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('abc'));
    expect(done.status).toBe(200);
    expect((await filesOf(started.assetstoreId)).map((f) => f.name)).toContain('started.txt');
    expect(await filesOf(third)).toEqual([]);

    // An upload whose store is deleted before its last chunk is refused and cancelled.
    const orphan = await startChunked('orphan.txt', 3);
    const fourthRoot = path.join(scratch, 'fourth');
    const fourth = (await createFs('Fourth', fourthRoot)).body._id as string;
    await api.as(admin).put(`/assetstore/${fourth}`).query({ name: 'Fourth', root: fourthRoot, current: true });
    expect((await api.as(admin).delete(`/assetstore/${third}`)).status).toBe(200);
    const refused = await api
      .as(alice)
      .post('/file/chunk')
      .query({ uploadId: orphan._id, offset: 0 })
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('xyz'));
    expect([refused.status, refused.body]).toEqual([
      400,
      { message: `Invalid assetstore id (${third}).`, type: 'rest' },
    ]);
  });
});
