import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import {
  AuthenticationError,
  GirderClient,
  IncorrectUploadLengthError,
  bufferStream,
  type RecordedRequest,
} from '../support/girderClientReplay';
import type { Viewer } from '../../src/domain/access';

/**
 * girder_client's exact HTTP conversation (reference §7), replayed by a transcription of the Python client against
 * the service on 127.0.0.1: logins, a recursive directory upload, the same upload again with reuseExisting, a
 * recursive download compared byte for byte with the original tree, and the chunked upload protocol.
 */

let api: ApiClient;
let listener: { port: number; close(): Promise<void> };
let apiUrl: string;
let uploader: TestUser;
let target: string;
let work: string;

const ID = /[0-9a-f]{24}/g;
/** Sees every folder (for counting what exists). */
const SITE_ADMIN: Viewer = { id: 'counting', admin: true, groups: [] };

/** `METHOD url` lines, the upload target's id shown as `T` and any other id as `:id`. */
function lines(requests: RecordedRequest[]): string[] {
  return requests.map((r) => `${r.method} ${r.url.split(target).join('T').replace(ID, ':id')}`);
}

/** Every file and directory below `root`: relative path → `dir` or the SHA-256 of the bytes. */
function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir).sort()) {
      const full = path.join(dir, entry);
      const rel = path.relative(root, full);
      if (fs.statSync(full).isDirectory()) {
        out[rel] = 'dir';
        walk(full);
      } else {
        out[rel] = crypto.createHash('sha256').update(fs.readFileSync(full)).digest('hex');
      }
    }
  };
  walk(root);
  return out;
}

/** Folders, items and files below a folder, read straight from the read model. */
async function countTree(folderId: string): Promise<{ folders: number; items: number; files: number }> {
  const rm = api.runtime.services.readModel;
  const all = { limit: 0, offset: 0, sort: '_id', sortdir: 1 as const };
  const counts = { folders: 0, items: 0, files: 0 };
  const walk = async (id: string) => {
    for (const item of (await rm.items.listInFolder({ folderId: id, paging: all })).rows) {
      counts.items += 1;
      counts.files += (await rm.files.listForItem(item._id, all)).total;
    }
    for (const sub of (
      await rm.folders.listChildren({ parentType: 'folder', parentId: id, viewer: SITE_ADMIN, paging: all })
    ).rows) {
      counts.folders += 1;
      await walk(sub._id);
    }
  };
  await walk(folderId);
  return counts;
}

beforeAll(async () => {
  api = await startApi();
  await api.allowSmallChunks(await api.createUser('admin'));
  uploader = await api.createUser('uploader');
  listener = await api.listen();
  apiUrl = `http://127.0.0.1:${listener.port}/api/v1`;
  const res = await api
    .as(uploader)
    .post('/folder')
    .type('form')
    .send({ parentType: 'user', parentId: uploader._id, name: 'Uploads' });
  target = res.body._id;
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'girder-client-replay-'));
});
afterAll(async () => {
  await listener.close();
  await api.close();
  fs.rmSync(work, { recursive: true, force: true });
});

describe('login', () => {
  it('authenticate(username, password): GET user/authentication with Basic and no Girder-Token header', async () => {
    const gc = new GirderClient(apiUrl);
    const user = await gc.authenticate({ username: 'uploader', password: 'password1' });
    expect(user).toMatchObject({ _id: uploader._id, login: 'uploader' });
    const [login] = gc.requests;
    expect(lines(gc.requests)).toEqual(['GET user/authentication']);
    expect(login.headers.Authorization).toBe(`Basic ${Buffer.from('uploader:password1').toString('base64')}`);
    expect(login.headers['Girder-Token']).toBeUndefined();
    expect(gc.token).toMatch(/\S+/);
    const me = await gc.get('user/me');
    expect(me._id).toBe(uploader._id);
    expect(gc.requests[1].headers['Girder-Token']).toBe(gc.token);

    await expect(
      new GirderClient(apiUrl).authenticate({ username: 'uploader', password: 'wrong' }),
    ).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('authenticate(apiKey=): POST api_key/token?key= with an empty Girder-Token header', async () => {
    const created = await api.as(uploader).post('/api_key').type('form').send({ name: 'cli' });
    expect(created.status).toBe(200);
    const gc = new GirderClient(apiUrl);
    const user = await gc.authenticate({ apiKey: created.body.key });
    expect(user._id).toBe(uploader._id);
    expect(lines(gc.requests)).toEqual([`POST api_key/token?key=${created.body.key}`]);
    expect(gc.requests[0].headers).toMatchObject({ 'Girder-Token': '', 'Content-Length': '0' });
    expect((await gc.get('user/me')).login).toBe('uploader');
  });
});

describe('upload and download of a directory tree', () => {
  let source: string;
  let gc: GirderClient;
  let uploaded: string;

  beforeAll(async () => {
    source = path.join(work, 'src');
    const write = (rel: string, bytes: Buffer) => {
      fs.mkdirSync(path.dirname(path.join(source, rel)), { recursive: true });
      fs.writeFileSync(path.join(source, rel), bytes);
    };
    write('big.bin', crypto.randomBytes(1024 * 1024 + 12_345));
    write('empty.dat', Buffer.alloc(0));
    write('top.txt', crypto.randomBytes(1000));
    write('nested/a.json', crypto.randomBytes(300));
    write('nested/deeper/b.txt', crypto.randomBytes(5000));
    write('nested/deeper/c', crypto.randomBytes(17));
    fs.mkdirSync(path.join(source, 'nested/emptydir'), { recursive: true });
    write('other/d.txt', crypto.randomBytes(64 * 1024));
    gc = new GirderClient(apiUrl);
    await gc.authenticate({ username: 'uploader', password: 'password1' });
  });

  it('upload(dir, folderId) sends _uploadFolderRecursive’s requests and creates the tree', async () => {
    gc.requests.length = 0;
    await gc.upload(source, target);
    const size = (rel: string) => fs.statSync(path.join(source, rel)).size;
    expect(lines(gc.requests)).toEqual([
      'GET folder?parentId=T&parentType=folder&name=src&offset=0&limit=50',
      'POST folder?parentId=T&parentType=folder&name=src&description=&reuseExisting=False',
      'GET system/version',
      `POST file?parentType=folder&parentId=:id&name=big.bin&size=${size('big.bin')}&mimeType=application%2Foctet-stream`,
      'POST item?folderId=:id&name=empty.dat&description=&reuseExisting=False',
      'GET item/:id/files?id=:id&offset=0&limit=50',
      'POST file?parentType=item&parentId=:id&name=empty.dat&size=0',
      'GET folder?parentId=:id&parentType=folder&name=nested&offset=0&limit=50',
      'POST folder?parentId=:id&parentType=folder&name=nested&description=&reuseExisting=False',
      `POST file?parentType=folder&parentId=:id&name=a.json&size=${size('nested/a.json')}&mimeType=application%2Fjson`,
      'GET folder?parentId=:id&parentType=folder&name=deeper&offset=0&limit=50',
      'POST folder?parentId=:id&parentType=folder&name=deeper&description=&reuseExisting=False',
      `POST file?parentType=folder&parentId=:id&name=b.txt&size=${size('nested/deeper/b.txt')}&mimeType=text%2Fplain`,
      `POST file?parentType=folder&parentId=:id&name=c&size=${size('nested/deeper/c')}`,
      'GET folder?parentId=:id&parentType=folder&name=emptydir&offset=0&limit=50',
      'POST folder?parentId=:id&parentType=folder&name=emptydir&description=&reuseExisting=False',
      'GET folder?parentId=:id&parentType=folder&name=other&offset=0&limit=50',
      'POST folder?parentId=:id&parentType=folder&name=other&description=&reuseExisting=False',
      `POST file?parentType=folder&parentId=:id&name=d.txt&size=${size('other/d.txt')}&mimeType=text%2Fplain`,
      `POST file?parentType=folder&parentId=:id&name=top.txt&size=${size('top.txt')}&mimeType=text%2Fplain`,
    ]);
    for (const r of gc.requests) {
      expect(r.status).toBe(200);
      expect(r.headers['Girder-Token']).toBe(gc.token);
      expect(r.headers['Content-Type']).toBeUndefined();
    }
    // The single-request uploads carry the whole file as the body.
    const big = gc.requests.find((r) => r.url.includes('name=big.bin'))!;
    expect(big.bodyLength).toBe(size('big.bin'));
    expect(big.headers['Content-Length']).toBe(String(size('big.bin')));

    const found = await gc.get('folder', { parentId: target, parentType: 'folder', name: 'src' });
    uploaded = found[0]._id;
    expect(await countTree(uploaded)).toEqual({ folders: 4, items: 7, files: 7 });
  });

  it('upload again with reuseExisting=True finds everything and creates nothing', async () => {
    const before = await countTree(uploaded);
    gc.requests.length = 0;
    await gc.upload(source, target, 'folder', true);
    expect(gc.requests.every((r) => r.method === 'GET' && r.status === 200)).toBe(true);
    expect(lines(gc.requests).slice(0, 4)).toEqual([
      'GET folder?parentId=T&parentType=folder&name=src&offset=0&limit=50',
      'GET item?folderId=:id&name=big.bin&offset=0&limit=50',
      'GET item/:id/files?id=:id&offset=0&limit=50',
      'GET item?folderId=:id&name=empty.dat&offset=0&limit=50',
    ]);
    expect(await countTree(uploaded)).toEqual(before);
  });

  it('downloadFolderRecursive writes the same tree, byte for byte', async () => {
    const dest = path.join(work, 'downloaded');
    fs.mkdirSync(dest);
    gc.requests.length = 0;
    await gc.downloadFolderRecursive(uploaded, dest);
    expect(tree(dest)).toEqual(tree(source));
    const requested = lines(gc.requests);
    expect(requested[0]).toBe('GET folder?limit=50&offset=0&parentType=folder&parentId=:id');
    expect(requested).toContain('GET item?folderId=:id&limit=50&offset=0');
    expect(requested).toContain('GET item/:id/files?limit=50&offset=0');
    expect(requested.filter((l) => /^GET file\/:id$/.test(l))).toHaveLength(7);
    expect(requested.filter((l) => /^GET file\/:id\/download$/.test(l))).toHaveLength(7);
    expect(gc.requests.every((r) => r.method === 'GET' && r.status === 200)).toBe(true);
  });

  it('a local file whose size changed is replaced through PUT file/:id/contents and chunks', async () => {
    fs.writeFileSync(path.join(source, 'top.txt'), crypto.randomBytes(2500));
    gc.requests.length = 0;
    await gc.upload(source, target, 'folder', true);
    const writes = lines(gc.requests.filter((r) => r.method !== 'GET'));
    expect(writes).toEqual(['PUT file/:id/contents?size=2500', 'POST file/chunk?offset=0&uploadId=:id']);
    const dest = path.join(work, 'downloaded-again');
    fs.mkdirSync(dest);
    await gc.downloadFolderRecursive(uploaded, dest);
    expect(tree(dest)).toEqual(tree(source));
  });

  it('upload to a parent given by its path resolves it with GET resource/lookup', async () => {
    const single = path.join(work, 'single.txt');
    fs.writeFileSync(single, 'hello');
    gc.requests.length = 0;
    await gc.upload(single, '/user/uploader/Uploads');
    expect(lines(gc.requests)).toEqual([
      'GET resource/lookup?path=%2Fuser%2Fuploader%2FUploads',
      'POST file?parentType=folder&parentId=T&name=single.txt&size=5&mimeType=text%2Fplain',
    ]);
  });
});

describe('chunked uploads', () => {
  let gc: GirderClient;
  let item: string;

  beforeAll(async () => {
    gc = new GirderClient(apiUrl);
    await gc.authenticate({ username: 'uploader', password: 'password1' });
    gc.MAX_CHUNK_SIZE = 256 * 1024;
    item = (await gc.createItem(target, 'chunked'))._id;
  });

  async function downloaded(fileId: string): Promise<Buffer> {
    const file = path.join(work, `dl-${fileId}`);
    await gc.downloadFile(fileId, file);
    return fs.readFileSync(file);
  }

  it('POST file (upload record), then POST file/chunk?offset=&uploadId= until the file is complete', async () => {
    const bytes = crypto.randomBytes(2 * 256 * 1024 + 999);
    gc.requests.length = 0;
    const file = await gc.uploadFile(item, bufferStream(bytes), 'chunked.bin', bytes.length);
    expect(file).toMatchObject({ _modelType: 'file', name: 'chunked.bin', size: bytes.length, itemId: item });
    expect(lines(gc.requests)).toEqual([
      `POST file?parentType=item&parentId=:id&name=chunked.bin&size=${bytes.length}&mimeType=application%2Foctet-stream`,
      'POST file/chunk?offset=0&uploadId=:id',
      `POST file/chunk?offset=${256 * 1024}&uploadId=:id`,
      `POST file/chunk?offset=${2 * 256 * 1024}&uploadId=:id`,
    ]);
    expect(gc.requests.map((r) => r.bodyLength)).toEqual([0, 256 * 1024, 256 * 1024, 999]);
    expect((await downloaded(file._id)).equals(bytes)).toBe(true);
  });

  it('uploadStreamToFolder above MAX_CHUNK_SIZE uses the upload record and chunks too', async () => {
    const bytes = crypto.randomBytes(300 * 1024);
    gc.requests.length = 0;
    const file = await gc.uploadStreamToFolder(target, bufferStream(bytes), 'streamed.bin', bytes.length);
    // `size <= MAX_CHUNK_SIZE and getServerVersion() >= …` short-circuits: no GET system/version.
    expect(lines(gc.requests)).toEqual([
      `POST file?parentType=folder&parentId=T&name=streamed.bin&size=${bytes.length}`,
      'POST file/chunk?offset=0&uploadId=:id',
      `POST file/chunk?offset=${256 * 1024}&uploadId=:id`,
    ]);
    expect(file._modelType).toBe('file');
    expect((await downloaded(file._id)).equals(bytes)).toBe(true);
  });

  it('uploadFileContents: PUT file/:id/contents?size= then chunks replace the bytes', async () => {
    const original = await gc.uploadFile(item, bufferStream(Buffer.from('old')), 'replaced.txt', 3);
    const bytes = crypto.randomBytes(256 * 1024 + 1);
    gc.requests.length = 0;
    const file = await gc.uploadFileContents(original._id, bufferStream(bytes), bytes.length);
    expect(lines(gc.requests)).toEqual([
      `PUT file/:id/contents?size=${bytes.length}`,
      'POST file/chunk?offset=0&uploadId=:id',
      `POST file/chunk?offset=${256 * 1024}&uploadId=:id`,
    ]);
    expect(file).toMatchObject({ _id: original._id, size: bytes.length });
    expect((await downloaded(original._id)).equals(bytes)).toBe(true);
  });

  it('a stream shorter than announced ends with DELETE file/upload/:id and no file', async () => {
    const before = (await gc.get(`item/${item}/files`, { limit: 0 })).length;
    gc.requests.length = 0;
    await expect(gc.uploadFile(item, bufferStream(Buffer.alloc(100)), 'short.bin', 500)).rejects.toBeInstanceOf(
      IncorrectUploadLengthError,
    );
    expect(lines(gc.requests)).toEqual([
      'POST file?parentType=item&parentId=:id&name=short.bin&size=500&mimeType=application%2Foctet-stream',
      'POST file/chunk?offset=0&uploadId=:id',
      'DELETE file/upload/:id',
    ]);
    expect(gc.requests.map((r) => r.status)).toEqual([200, 200, 200]);
    expect((await gc.get(`item/${item}/files`, { limit: 0 })).length).toBe(before);
  });
});
