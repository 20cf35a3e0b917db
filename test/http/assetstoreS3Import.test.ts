import crypto from 'node:crypto';
import { ApiClient, startApi, type TestUser } from '../support/apiClient';
import { startTestS3, type TestS3 } from '../support/s3Server';

/**
 * `POST /assetstore/:id/import` on an S3 store (Girder's S3 importData): the objects under a key prefix become items
 * and the prefixes below it folders, the files reference the objects (not copied, never deleted), and a second import
 * adds nothing twice.
 */
describe('S3 assetstores: import in place', () => {
  let api: ApiClient;
  let s3: TestS3;
  let admin: TestUser;
  let storeId: string;
  const prefix = `store-${crypto.randomUUID()}`;
  const source = `incoming-${crypto.randomUUID()}`;
  const objects: Record<string, Buffer> = {
    [`${source}/data/a.txt`]: Buffer.from('alpha'),
    [`${source}/data/sub/b.txt`]: Buffer.from('bravo bravo'),
    [`${source}/data/sub/c.log`]: Buffer.from('charlie'),
    [`${source}/data.txt`]: Buffer.from('a neighbour of data/'),
  };

  beforeAll(async () => {
    s3 = await startTestS3();
    api = await startApi({ BLOB_SWEEP_GRACE_SECONDS: '0' });
    admin = await api.createUser('admin');
    const { bucket, accessKeyId, secret, service } = s3.settings(prefix);
    // Streamed through the service, so the downloads below read the objects here.
    const created = await api
      .as(admin)
      .post('/assetstore')
      .query({ name: 'S3', type: 2, bucket, prefix, accessKeyId, secret, service, redirect: false });
    expect(created.status).toBe(200);
    storeId = created.body._id;
    for (const [key, body] of Object.entries(objects)) await s3.putObject(key, body);
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await s3?.close();
  });

  const newFolder = async (name: string) => {
    const parentId = await api.defaultFolder(admin, 'Private');
    const res = await api.as(admin).post('/folder').query({ parentType: 'folder', parentId, name });
    expect(res.status).toBe(200);
    return res.body._id as string;
  };
  const importInto = (folderId: string, importPath: string, extra: Record<string, string> = {}) =>
    api
      .as(admin)
      .post(`/assetstore/${storeId}/import`)
      .query({ importPath, destinationType: 'folder', destinationId: folderId, ...extra });
  /** The tree under a folder: `folder/` entries and `item: file (size)` entries, sorted. */
  const tree = async (folderId: string, at = ''): Promise<string[]> => {
    const folders = (await api.as(admin).get('/folder').query({ parentType: 'folder', parentId: folderId })).body as {
      _id: string;
      name: string;
    }[];
    const items = (await api.as(admin).get('/item').query({ folderId })).body as { _id: string; name: string }[];
    const lines: string[] = [];
    for (const item of items) {
      const files = (await api.as(admin).get(`/item/${item._id}/files`)).body as { name: string; size: number }[];
      lines.push(...files.map((f) => `${at}${item.name}: ${f.name} (${f.size})`));
    }
    for (const folder of folders)
      lines.push(`${at}${folder.name}/`, ...(await tree(folder._id, `${at}${folder.name}/`)));
    return lines.sort();
  };

  it('imports a prefix as folders and items whose files read the objects, and adds nothing the second time', async () => {
    const folderId = await newFolder('imported');
    const res = await importInto(folderId, `/${source}/data/`, { progress: 'true' });
    expect([res.status, res.body]).toEqual([200, null]);
    const expected = ['a.txt: a.txt (5)', 'sub/', 'sub/b.txt: b.txt (11)', 'sub/c.log: c.log (7)'];
    expect(await tree(folderId)).toEqual(expected);
    expect((await importInto(folderId, `${source}/data/`)).status).toBe(200);
    expect(await tree(folderId)).toEqual(expected);

    const item = ((await api.as(admin).get('/item').query({ folderId, name: 'a.txt' })).body as { _id: string }[])[0];
    const file = (await api.as(admin).get(`/item/${item._id}/files`)).body[0] as { _id: string };
    expect((await api.download(admin, file._id)).body).toEqual(objects[`${source}/data/a.txt`]);
    const listed = (await api.as(admin).get(`/assetstore/${storeId}/files`)).body as { name: string }[];
    expect(listed.map((f) => f.name).sort()).toEqual(['a.txt', 'b.txt', 'c.log']);
    // Deleting the file leaves the object: it belongs to whoever put it there.
    expect((await api.as(admin).delete(`/file/${file._id}`)).status).toBe(200);
    expect(await s3.objectExists(`${source}/data/a.txt`)).toBe(true);
  });

  it('matches the prefix as given, with the regular expressions on file names', async () => {
    const folderId = await newFolder('as given');
    const res = await importInto(folderId, `${source}/data`, { fileExcludeRegex: '.*\\.log' });
    expect(res.status).toBe(200);
    expect(await tree(folderId)).toEqual([
      'data.txt: data.txt (20)',
      'data/',
      'data/a.txt: a.txt (5)',
      'data/sub/',
      'data/sub/b.txt: b.txt (11)',
    ]);
  });

  it("refuses keys right under a user, with Girder's message, and never imports the store's own objects", async () => {
    const refused = await api
      .as(admin)
      .post(`/assetstore/${storeId}/import`)
      .query({ importPath: `${source}/data/`, destinationType: 'user', destinationId: admin._id });
    expect([refused.status, refused.body]).toEqual([
      400,
      { message: 'Keys cannot be imported directly underneath a user.', type: 'validation' },
    ]);
    // A file uploaded into the store puts its blob under the store's prefix; importing that prefix skips it.
    const made = await api
      .as(admin)
      .put(`/assetstore/${storeId}`)
      .query({ name: 'S3', ...s3.settings(prefix), current: true, redirect: false });
    expect(made.status).toBe(200);
    const uploads = await newFolder('uploads');
    const sent = await api
      .as(admin)
      .post('/file')
      .query({ parentType: 'folder', parentId: uploads, name: 'own.bin', size: 4 })
      .send(Buffer.from('own!'));
    expect(sent.status).toBe(200);
    const folderId = await newFolder('own prefix');
    expect((await importInto(folderId, `${prefix}/`)).status).toBe(200);
    expect(await tree(folderId)).toEqual([]);
  });
});
