import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiClient, startApi, type TestUser } from '../support/apiClient';
import { DEFAULT_ASSETSTORE_ID } from '../../src/domain/assetstoreBlobRef';

/**
 * `POST /assetstore/:id/import` (Girder's filesystem import): a tree becomes folders, items and files that reference
 * the files where they are; a second import adds nothing; deleting the imported files leaves the bytes on disk.
 */
describe('import in place', () => {
  let api: ApiClient;
  let admin: TestUser;
  let tree: string;
  let destination: string;

  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin');
    destination = await api.defaultFolder(admin, 'Private');
    tree = fs.mkdtempSync(path.join(os.tmpdir(), 'import-tree-'));
    fs.mkdirSync(path.join(tree, 'photos', 'raw'), { recursive: true });
    fs.mkdirSync(path.join(tree, 'leaf'));
    fs.writeFileSync(path.join(tree, 'top.txt'), 'top level');
    fs.writeFileSync(path.join(tree, 'skip.tmp'), 'excluded');
    fs.writeFileSync(path.join(tree, 'photos', 'a.jpg'), 'jpeg bytes');
    fs.writeFileSync(path.join(tree, 'photos', 'raw', 'a.raw'), 'raw bytes');
    fs.writeFileSync(path.join(tree, 'leaf', 'one.txt'), 'one');
    fs.writeFileSync(path.join(tree, 'leaf', 'two.txt'), 'two');
  });
  afterAll(async () => {
    await api?.close();
    fs.rmSync(tree, { recursive: true, force: true });
  });

  const importTree = (query: Record<string, string | boolean>) =>
    api
      .as(admin)
      .post(`/assetstore/${DEFAULT_ASSETSTORE_ID}/import`)
      .query({ destinationType: 'folder', destinationId: destination, ...query });
  /** The imported hierarchy as paths of folders, items and files (file sizes), sorted. */
  async function listing(folderId: string, prefix = ''): Promise<string[]> {
    const out: string[] = [];
    const folders = (await api.as(admin).get('/folder').query({ parentType: 'folder', parentId: folderId })).body;
    for (const f of folders as { _id: string; name: string }[]) {
      out.push(`${prefix}${f.name}/`);
      out.push(...(await listing(f._id, `${prefix}${f.name}/`)));
    }
    const items = (await api.as(admin).get('/item').query({ folderId })).body;
    for (const item of items as { _id: string; name: string }[]) {
      const files = (await api.as(admin).get(`/item/${item._id}/files`)).body as { name: string; size: number }[];
      for (const file of files) out.push(`${prefix}${item.name}:${file.name}(${file.size})`);
    }
    return out.sort();
  }

  it('imports a tree in place, with the include/exclude filters and leaf folders as items', async () => {
    const res = await importTree({ importPath: tree, leafFoldersAsItems: true, fileExcludeRegex: '.*\\.tmp$' });
    expect([res.status, res.body]).toEqual([200, null]);
    const expected = [
      'leaf:one.txt(3)',
      'leaf:two.txt(3)',
      'photos/',
      'photos/a.jpg:a.jpg(10)',
      'photos/raw:a.raw(9)',
      'top.txt:top.txt(9)',
    ];
    expect(await listing(destination)).toEqual(expected);

    // Nothing was copied into the store: the files are read where they are.
    const blobs = path.join(api.server.dataDir, 'blobs');
    const stored = fs.readdirSync(blobs).filter((d) => /^[0-9a-f]{2}$/.test(d));
    expect(stored).toEqual([]);
    const items = (await api.as(admin).get('/item').query({ folderId: destination, name: 'top.txt' })).body;
    const [file] = (await api.as(admin).get(`/item/${items[0]._id}/files`)).body;
    expect((await api.download(admin, file._id)).body.toString()).toBe('top level');
    const ranged = await api.download(admin, file._id).set('Range', 'bytes=4-8');
    expect([ranged.status, ranged.body.toString()]).toEqual([206, 'level']);

    // A second import of the same path adds nothing twice.
    const again = await importTree({ importPath: tree, leafFoldersAsItems: true, fileExcludeRegex: '.*\\.tmp$' });
    expect(again.status).toBe(200);
    expect(await listing(destination)).toEqual(expected);

    // The imported files are in the store's file list; deleting them never deletes the bytes on disk.
    const inStore = (await api.as(admin).get(`/assetstore/${DEFAULT_ASSETSTORE_ID}/files`)).body as unknown[];
    expect(inStore).toHaveLength(5);
    expect((await api.as(admin).delete(`/item/${items[0]._id}`)).status).toBe(200);
    expect(fs.readFileSync(path.join(tree, 'top.txt'), 'utf8')).toBe('top level');
  });

  it('imports only what the include filter matches, at the start of the name', async () => {
    const folder = (await api.as(admin).post('/folder').query({ parentId: destination, name: 'filtered' })).body._id;
    const res = await api
      .as(admin)
      .post(`/assetstore/${DEFAULT_ASSETSTORE_ID}/import`)
      .query({ destinationType: 'folder', destinationId: folder, importPath: tree, fileIncludeRegex: 'a\\.' });
    expect(res.status).toBe(200);
    expect(await listing(folder)).toEqual([
      'leaf/',
      'photos/',
      'photos/a.jpg:a.jpg(10)',
      'photos/raw/',
      'photos/raw/a.raw:a.raw(9)',
    ]);
  });

  it('refuses what Girder refuses, with its messages', async () => {
    const missing = await importTree({ importPath: path.join(tree, 'nope') });
    expect([missing.status, missing.body]).toEqual([
      400,
      { message: `Not found: ${path.join(tree, 'nope')}.`, type: 'validation' },
    ]);
    const underUser = await api
      .as(admin)
      .post(`/assetstore/${DEFAULT_ASSETSTORE_ID}/import`)
      .query({ destinationType: 'user', destinationId: admin._id, importPath: tree });
    expect([underUser.status, underUser.body]).toEqual([
      400,
      { message: 'Files cannot be imported directly underneath a user.', type: 'validation' },
    ]);
    const badRegex = await importTree({ importPath: tree, fileIncludeRegex: '(' });
    expect([badRegex.status, badRegex.body]).toEqual([
      400,
      { message: 'Invalid regular expression for fileIncludeRegex.', type: 'rest' },
    ]);
  });
});
