import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { API_PREFIX, ApiClient, binary, startApi, type TestUser } from '../support/apiClient';
import { bootstrap, type Runtime } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { createApp } from '../../src/http/app';

/** Every file under a directory (relative paths), for checking what is on disk. */
function filesUnder(dir: string, prefix = ''): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) =>
      entry.isDirectory()
        ? filesUnder(path.join(dir, entry.name), `${prefix}${entry.name}/`)
        : [`${prefix}${entry.name}`],
    );
}

const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

describe('files and uploads', () => {
  let api: ApiClient;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let privateId: string;
  let publicId: string;

  const blobFiles = () => filesUnder(path.join(api.server.dataDir, 'blobs')).filter((f) => !f.startsWith('tmp/'));
  const partialFiles = () => filesUnder(path.join(api.server.dataDir, 'uploads'));
  const download = (user: TestUser | null, fileId: string, query = '') =>
    api.as(user).get(`/file/${fileId}/download${query}`).buffer(true).parse(binary);

  async function newFolder(user: TestUser, parentId: string, name: string): Promise<string> {
    const res = await api.as(user).post('/folder').query({ parentId, name });
    expect(res.status).toBe(200);
    return res.body._id;
  }
  async function newItem(user: TestUser, folderId: string, name: string): Promise<string> {
    const res = await api.as(user).post('/item').query({ folderId, name });
    expect(res.status).toBe(200);
    return res.body._id;
  }
  async function startUpload(user: TestUser, query: Record<string, string | number>) {
    const res = await api.as(user).post('/file').query(query);
    expect(res.status).toBe(200);
    return res.body as Record<string, any>;
  }
  const chunk = (user: TestUser, uploadId: string, offset: number, bytes: Buffer) =>
    api
      .as(user)
      .post('/file/chunk')
      .query({ uploadId, offset })
      .set('Content-Type', 'application/octet-stream')
      .send(bytes);
  /** girder_client's single-request upload: the whole file as the body of POST /file (no Content-Type). */
  async function uploadToFolder(user: TestUser, folderId: string, name: string, bytes: Buffer) {
    const res = await api
      .as(user)
      .post('/file')
      .query({ parentType: 'folder', parentId: folderId, name, size: bytes.length })
      .send(bytes);
    expect(res.status).toBe(200);
    return res.body as Record<string, any>;
  }

  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin');
    await api.allowSmallChunks(admin);
    alice = await api.createUser('alice');
    bob = await api.createUser('bobby');
    const res = await api.as(alice).get(`/folder?parentType=user&parentId=${alice._id}`);
    const folders = Object.fromEntries(res.body.map((f: { name: string; _id: string }) => [f.name, f._id]));
    privateId = folders.Private;
    publicId = folders.Public;
  });
  afterAll(() => api.close());

  describe('POST /file', () => {
    it('creates an empty file at once, in a new item named after it', async () => {
      const folder = await newFolder(alice, privateId, 'empty');
      const res = await api
        .as(alice)
        .post('/file')
        .query({ parentType: 'folder', parentId: folder, name: 'Empty.TAR.gz', size: 0 });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual([
        '_id',
        '_modelType',
        'created',
        'creatorId',
        'exts',
        'itemId',
        'mimeType',
        'name',
        'sha512',
        'size',
      ]);
      expect(res.body).toMatchObject({
        _modelType: 'file',
        name: 'Empty.TAR.gz',
        mimeType: 'application/octet-stream',
        size: 0,
        creatorId: alice._id,
        exts: ['tar', 'gz'],
        sha512: crypto.createHash('sha512').update(Buffer.alloc(0)).digest('hex'),
      });
      const item = await api.as(alice).get(`/item/${res.body.itemId}`);
      expect(item.body).toMatchObject({ name: 'Empty.TAR.gz', folderId: folder, size: 0 });
      const bytes = await download(alice, res.body._id);
      expect(bytes.status).toBe(200);
      expect(bytes.headers['content-length']).toBe('0');
    });

    it("shows a file's assetstoreId to site administrators only (Girder exposes it at SITE_ADMIN level)", async () => {
      const file = await uploadToFolder(
        alice,
        await newFolder(alice, privateId, 'stores'),
        'where.bin',
        Buffer.from('x'),
      );
      expect(file.assetstoreId).toBeUndefined();
      const stores = await api.as(admin).get('/assetstore');
      const current = stores.body.find((store: { current: boolean }) => store.current)._id;
      for (const path of [`/file/${file._id}`, `/item/${file.itemId}/files`, `/resource/${file._id}?type=file`]) {
        const asAdmin = await api.as(admin).get(path);
        const asOwner = await api.as(alice).get(path);
        const [adminView, ownerView] = [asAdmin.body, asOwner.body].map((body) =>
          Array.isArray(body) ? body[0] : body,
        );
        expect({ path, admin: adminView.assetstoreId, owner: ownerView.assetstoreId }).toEqual({
          path,
          admin: current,
          owner: undefined,
        });
      }
    });

    it('takes a whole file as the request body, storing identical bytes once', async () => {
      const folder = await newFolder(alice, privateId, 'dedup');
      const bytes = crypto.randomBytes(3000);
      const before = blobFiles().length;
      const first = await uploadToFolder(alice, folder, 'same.bin', bytes);
      const second = await uploadToFolder(alice, folder, 'same.bin', bytes);
      expect(first).toMatchObject({ _modelType: 'file', name: 'same.bin', size: 3000 });
      const items = await api.as(alice).get(`/item?folderId=${folder}`);
      expect(items.body.map((i: { name: string; size: number }) => [i.name, i.size])).toEqual([
        ['same.bin', 3000],
        ['same.bin (1)', 3000],
      ]);
      expect(blobFiles().length).toBe(before + 1);
      expect(blobFiles()).toContain(`${sha256(bytes).slice(0, 2)}/${sha256(bytes)}`);
      expect((await download(alice, first._id)).body).toEqual(bytes);
      expect((await download(alice, second._id)).body).toEqual(bytes);
      // The blob stays while one file uses it, and goes with the last.
      await api.as(alice).delete(`/file/${first._id}`).expect(200);
      expect(blobFiles()).toContain(`${sha256(bytes).slice(0, 2)}/${sha256(bytes)}`);
      await api.as(alice).delete(`/item/${second.itemId}`).expect(200);
      expect(blobFiles()).not.toContain(`${sha256(bytes).slice(0, 2)}/${sha256(bytes)}`);
      expect(blobFiles().length).toBe(before);
    });

    it('returns an upload record and takes the bytes in three chunks', async () => {
      const itemId = await newItem(alice, privateId, 'chunked');
      const bytes = crypto.randomBytes(25);
      const upload = await startUpload(alice, {
        parentType: 'item',
        parentId: itemId,
        name: 'three.bin',
        size: 25,
        mimeType: 'application/x-test',
        reference: 'ref-1',
      });
      expect(Object.keys(upload).sort()).toEqual([
        '_id',
        '_modelType',
        'assetstoreId',
        'created',
        'mimeType',
        'name',
        'parentId',
        'parentType',
        'received',
        'reference',
        'size',
        'updated',
        'userId',
      ]);
      expect(upload).toMatchObject({
        _modelType: 'upload',
        name: 'three.bin',
        size: 25,
        mimeType: 'application/x-test',
        received: 0,
        parentType: 'item',
        parentId: itemId,
        userId: alice._id,
      });
      const c1 = await chunk(alice, upload._id, 0, bytes.subarray(0, 10));
      expect(c1.status).toBe(200);
      expect(c1.body).toMatchObject({ _id: upload._id, _modelType: 'upload', received: 10 });
      expect(partialFiles()).toEqual([upload._id]);
      const c2 = await chunk(alice, upload._id, 10, bytes.subarray(10, 20));
      expect(c2.body.received).toBe(20);
      const c3 = await chunk(alice, upload._id, 20, bytes.subarray(20));
      expect(c3.status).toBe(200);
      expect(c3.body).toMatchObject({
        _modelType: 'file',
        name: 'three.bin',
        size: 25,
        itemId,
        mimeType: 'application/x-test',
        exts: ['bin'],
      });
      expect(partialFiles()).toEqual([]);
      expect((await download(alice, c3.body._id)).body).toEqual(bytes);
      expect((await api.as(alice).get(`/item/${itemId}`)).body.size).toBe(25);
      // The upload is finished: it is gone.
      const late = await chunk(alice, upload._id, 25, Buffer.from('x'));
      expect(late.status).toBe(400);
      expect(late.body).toEqual({ message: `Invalid upload id (${upload._id}).`, type: 'rest' });
    });

    it('treats a shorter body as the first chunk', async () => {
      const folder = await newFolder(alice, privateId, 'first chunk');
      const res = await api
        .as(alice)
        .post('/file')
        .query({ parentType: 'folder', parentId: folder, name: 'two parts.txt', size: 8 })
        .set('Content-Type', 'text/plain')
        .send('abcd');
      expect(res.body).toMatchObject({ _modelType: 'upload', received: 4 });
      const done = await chunk(alice, res.body._id, 4, Buffer.from('efgh'));
      expect(done.body).toMatchObject({ _modelType: 'file', name: 'two parts.txt', size: 8 });
      expect((await download(alice, done.body._id)).body.toString()).toBe('abcdefgh');
    });

    it('takes its parameters from a urlencoded form body too', async () => {
      const folder = await newFolder(alice, privateId, 'form');
      const res = await api
        .as(alice)
        .post('/file')
        .type('form')
        .send({ parentType: 'folder', parentId: folder, name: 'formed', size: '3' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ _modelType: 'upload', received: 0, size: 3, name: 'formed' });
    });

    it('checks parameters, parents and access with the reference messages', async () => {
      const missing = await api.as(alice).post('/file').query({ parentType: 'folder', parentId: privateId, name: 'n' });
      expect(missing.body).toEqual({ message: "Parameter 'size' is required.", type: 'rest' });
      const badType = await api
        .as(alice)
        .post('/file')
        .query({ parentType: 'user', parentId: privateId, name: 'n', size: 1 });
      expect(badType.body).toEqual({
        message: 'Invalid value for parentType: "user". Allowed values: folder, item.',
        type: 'rest',
      });
      const noFolder = await api
        .as(alice)
        .post('/file')
        .query({ parentType: 'folder', parentId: '000000000000000000000000', name: 'n', size: 1 });
      expect(noFolder.body).toEqual({
        message: 'No such folder: 000000000000000000000000',
        type: 'validation',
        field: 'id',
      });
      const noItem = await api
        .as(alice)
        .post('/file')
        .query({ parentType: 'item', parentId: 'abc', name: 'n', size: 1 });
      expect(noItem.body).toEqual({ message: 'No such item: abc', type: 'validation', field: 'id' });
      const denied = await api
        .as(bob)
        .post('/file')
        .query({ parentType: 'folder', parentId: privateId, name: 'n', size: 1 });
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({
        message: `Write access denied for folder ${privateId} (user ${bob._id}).`,
        type: 'access',
      });
      const itemId = await newItem(alice, privateId, 'guarded');
      const itemDenied = await api
        .as(bob)
        .post('/file')
        .query({ parentType: 'item', parentId: itemId, name: 'n', size: 1 });
      expect(itemDenied.body).toEqual({
        message: `Write access denied for item ${itemId} (user ${bob._id}).`,
        type: 'access',
      });
      const anon = await api.as(null).post('/file').query({ parentType: 'item', parentId: itemId, name: 'n', size: 1 });
      expect(anon.status).toBe(401);
      const negative = await api
        .as(alice)
        .post('/file')
        .query({ parentType: 'item', parentId: itemId, name: 'n', size: -1 });
      expect(negative.body).toEqual({ message: 'File size must not be negative.', type: 'validation' });
      const tooLong = await api
        .as(alice)
        .post('/file')
        .query({ parentType: 'item', parentId: itemId, name: 'n', size: 2 })
        .send(Buffer.from('abc'));
      expect(tooLong.body).toEqual({ message: 'Received too many bytes.', type: 'validation' });
      expect((await api.as(alice).get(`/item/${itemId}/files`)).body).toEqual([]);
    });
  });

  describe('POST /file/chunk', () => {
    it('checks the initiator, the offset and the size', async () => {
      const itemId = await newItem(alice, privateId, 'checks');
      const upload = await startUpload(alice, { parentType: 'item', parentId: itemId, name: 'c.bin', size: 10 });
      await chunk(alice, upload._id, 0, Buffer.alloc(4)).expect(200);
      const wrongOffset = await chunk(alice, upload._id, 2, Buffer.alloc(2));
      expect(wrongOffset.status).toBe(400);
      expect(wrongOffset.body).toEqual({
        message: 'Server has received 4 bytes, but client sent offset 2.',
        type: 'rest',
      });
      const otherUser = await chunk(bob, upload._id, 4, Buffer.alloc(2));
      expect(otherUser.status).toBe(403);
      expect(otherUser.body).toEqual({ message: 'You did not initiate this upload.', type: 'access' });
      const tooMany = await chunk(alice, upload._id, 4, Buffer.alloc(7));
      expect(tooMany.status).toBe(400);
      expect(tooMany.body).toEqual({ message: 'Received too many bytes.', type: 'validation' });
      const offset = await api.as(alice).get(`/file/offset?uploadId=${upload._id}`);
      expect(offset.body).toEqual({ offset: 4 });
      expect(fs.statSync(path.join(api.server.dataDir, 'uploads', upload._id)).size).toBe(4);
      const unknown = await chunk(alice, '000000000000000000000000', 0, Buffer.alloc(1));
      expect(unknown.body).toEqual({ message: 'Invalid upload id (000000000000000000000000).', type: 'rest' });
      const noOffset = await api.as(alice).post('/file/chunk').query({ uploadId: upload._id }).send(Buffer.alloc(1));
      expect(noOffset.body).toEqual({ message: "Parameter 'offset' is required.", type: 'rest' });
      const done = await chunk(alice, upload._id, 4, Buffer.alloc(6, 1));
      expect(done.body).toMatchObject({ _modelType: 'file', size: 10 });
    });

    it('cancels an upload: its bytes go and it is gone', async () => {
      const itemId = await newItem(alice, privateId, 'cancelled');
      const upload = await startUpload(alice, { parentType: 'item', parentId: itemId, name: 'c.bin', size: 10 });
      await chunk(alice, upload._id, 0, Buffer.alloc(5)).expect(200);
      expect(partialFiles()).toContain(upload._id);
      const denied = await api.as(bob).delete(`/file/upload/${upload._id}`);
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({ message: 'You did not initiate this upload.', type: 'access' });
      const res = await api.as(alice).delete(`/file/upload/${upload._id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: 'Upload canceled.' });
      expect(partialFiles()).not.toContain(upload._id);
      const after = await chunk(alice, upload._id, 5, Buffer.alloc(5));
      expect(after.body).toEqual({ message: `Invalid upload id (${upload._id}).`, type: 'rest' });
      expect((await api.as(alice).get(`/item/${itemId}/files`)).body).toEqual([]);
    });
  });

  describe('downloads', () => {
    let fileId: string;
    const bytes = Buffer.from('0123456789abcdefghij');
    beforeAll(async () => {
      const folder = await newFolder(alice, publicId, 'downloads');
      fileId = (await uploadToFolder(alice, folder, 'digits.txt', bytes))._id;
    });

    it('streams the whole file with its headers', async () => {
      const res = await download(null, fileId);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(bytes);
      expect(res.headers['content-type']).toBe('application/octet-stream');
      expect(res.headers['content-length']).toBe('20');
      expect(res.headers['content-disposition']).toBe('attachment; filename="digits.txt"');
      expect(res.headers['accept-ranges']).toBe('bytes');
      const inline = await download(null, fileId, '?contentDisposition=inline');
      // An octet stream is never shown inline (test/http/userBytes.test.ts has the rule's whole list).
      expect(inline.headers['content-disposition']).toBe('attachment; filename="digits.txt"');
      const named = await api.as(null).get(`/file/${fileId}/download/anything.txt`);
      expect(named.status).toBe(200);
    });

    it('serves Range requests with 206 and Content-Range, and 416 when unsatisfiable', async () => {
      const mid = await download(null, fileId).set('Range', 'bytes=2-5');
      expect(mid.status).toBe(206);
      expect(mid.headers['content-range']).toBe('bytes 2-5/20');
      expect(mid.headers['content-length']).toBe('4');
      expect(mid.body.toString()).toBe('2345');
      const open = await download(null, fileId).set('Range', 'bytes=15-');
      expect(open.body.toString()).toBe('fghij');
      expect(open.headers['content-range']).toBe('bytes 15-19/20');
      const suffix = await download(null, fileId).set('Range', 'bytes=-3');
      expect(suffix.body.toString()).toBe('hij');
      const beyond = await download(null, fileId).set('Range', 'bytes=10-99');
      expect(beyond.headers['content-range']).toBe('bytes 10-19/20');
      const unsatisfiable = await download(null, fileId).set('Range', 'bytes=20-30');
      expect(unsatisfiable.status).toBe(416);
      expect(unsatisfiable.headers['content-range']).toBe('bytes */20');
      const ignored = await download(null, fileId).set('Range', 'items=1-2');
      expect(ignored.status).toBe(200);
      expect(ignored.body).toEqual(bytes);
    });

    it('honours offset and endByte (exclusive) like Girder', async () => {
      const part = await download(null, fileId, '?offset=3&endByte=7');
      expect(part.status).toBe(206);
      expect(part.headers['content-range']).toBe('bytes 3-6/20');
      expect(part.body.toString()).toBe('3456');
      const tail = await download(null, fileId, '?offset=18');
      expect(tail.body.toString()).toBe('ij');
    });

    it('checks READ on the item’s folder, accepting the token cookie', async () => {
      const itemId = await newItem(alice, privateId, 'private download');
      const file = await api
        .as(alice)
        .post('/file')
        .query({ parentType: 'item', parentId: itemId, name: 'p.bin', size: 3 })
        .send(Buffer.from('abc'));
      const anon = await download(null, file.body._id);
      expect(anon.status).toBe(401);
      expect(JSON.parse(anon.body.toString())).toEqual({
        message: `Read access denied for file ${file.body._id} (user None).`,
        type: 'access',
      });
      const denied = await api.as(bob).get(`/file/${file.body._id}`);
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({
        message: `Read access denied for file ${file.body._id} (user ${bob._id}).`,
        type: 'access',
      });
      const cookie = await download(null, file.body._id).set('Cookie', `serviceToken=${alice.token}`);
      expect(cookie.status).toBe(200);
      expect(cookie.body.toString()).toBe('abc');
      const info = await api.as(alice).get(`/file/${file.body._id}`);
      expect(info.body).toEqual(file.body);
      const invalid = await api.as(alice).get('/file/nope');
      expect(invalid.body).toEqual({ message: 'Invalid file id (nope).', type: 'rest' });
    });

    it('adds filename* for names that are not latin-1', async () => {
      const folder = await newFolder(alice, publicId, 'unicode');
      const file = await uploadToFolder(alice, folder, 'résumé – naïve “quote”.txt', Buffer.from('x'));
      const res = await download(null, file._id);
      expect(res.headers['content-disposition']).toBe(
        `attachment; filename="resume  naive quote.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%E2%80%93%20na%C3%AFve%20%E2%80%9Cquote%E2%80%9D.txt`,
      );
    });
  });

  describe('PUT /file/:id/contents and DELETE /file/:id', () => {
    it('replaces the bytes through an upload, adjusting sizes and dropping the old blob', async () => {
      const folder = await newFolder(alice, privateId, 'replace');
      const old = Buffer.from('old contents!');
      const file = await uploadToFolder(alice, folder, 'doc.txt', old);
      const oldBlob = `${sha256(old).slice(0, 2)}/${sha256(old)}`;
      expect(blobFiles()).toContain(oldBlob);
      const upload = await api.as(alice).put(`/file/${file._id}/contents?size=6`);
      expect(upload.status).toBe(200);
      expect(upload.body).toMatchObject({
        _modelType: 'upload',
        fileId: file._id,
        size: 6,
        received: 0,
        name: 'doc.txt',
      });
      const denied = await api.as(bob).put(`/file/${file._id}/contents?size=6`);
      expect(denied.status).toBe(403);
      const done = await chunk(alice, upload.body._id, 0, Buffer.from('brand!'));
      expect(done.body).toMatchObject({
        _id: file._id,
        _modelType: 'file',
        size: 6,
        name: 'doc.txt',
        itemId: file.itemId,
      });
      expect((await download(alice, file._id)).body.toString()).toBe('brand!');
      expect((await api.as(alice).get(`/item/${file.itemId}`)).body.size).toBe(6);
      expect((await api.as(alice).get(`/folder/${folder}`)).body.size).toBe(6);
      expect(blobFiles()).not.toContain(oldBlob);

      const emptied = await api.as(alice).put(`/file/${file._id}/contents?size=0`);
      expect(emptied.body).toMatchObject({ _id: file._id, _modelType: 'file', size: 0 });
      expect((await api.as(alice).get(`/folder/${folder}`)).body.size).toBe(0);
    });

    it('deletes a file: null, sizes shrink, its blob goes', async () => {
      const folder = await newFolder(alice, privateId, 'delete file');
      const bytes = crypto.randomBytes(64);
      const file = await uploadToFolder(alice, folder, 'gone.bin', bytes);
      const denied = await api.as(bob).delete(`/file/${file._id}`);
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({
        message: `Write access denied for file ${file._id} (user ${bob._id}).`,
        type: 'access',
      });
      const res = await api.as(alice).delete(`/file/${file._id}`);
      expect(res.status).toBe(200);
      expect(res.body).toBeNull();
      expect((await api.as(alice).get(`/item/${file.itemId}`)).body.size).toBe(0);
      expect((await api.as(alice).get(`/folder/${folder}`)).body.size).toBe(0);
      expect(blobFiles()).not.toContain(`${sha256(bytes).slice(0, 2)}/${sha256(bytes)}`);
    });
  });

  describe('interruptions and the startup sweep', () => {
    /** Sends the head and part of the body of a request, then drops the connection. */
    async function abandon(port: number, target: string, declared: number, sent: Buffer): Promise<void> {
      await new Promise<void>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.write(
            `POST ${target} HTTP/1.1\r\nHost: localhost\r\nService-Token: ${alice.token}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${declared}\r\n\r\n`,
          );
          socket.write(sent);
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 150);
        });
        socket.on('error', reject);
      });
      await new Promise((resolve) => setTimeout(resolve, 150));
    }

    it('leaves no file and no stray bytes after a client disconnect, a cancel or a restart', async () => {
      const listener = await api.listen();
      try {
        const itemId = await newItem(alice, privateId, 'interrupted');
        // A whole-file body cut short: no file, no temporary file.
        await abandon(
          listener.port,
          `${API_PREFIX}/file?parentType=item&parentId=${itemId}&name=cut.bin&size=100`,
          100,
          Buffer.alloc(40, 1),
        );
        expect((await api.as(alice).get(`/item/${itemId}/files`)).body).toEqual([]);
        expect(filesUnder(path.join(api.server.dataDir, 'blobs', 'tmp'))).toEqual([]);

        // A chunk cut short: the upload still says 3 received, the partial file holds exactly those bytes.
        const upload = await startUpload(alice, {
          parentType: 'item',
          parentId: itemId,
          name: 'resumable.bin',
          size: 50,
        });
        await chunk(alice, upload._id, 0, Buffer.from('abc')).expect(200);
        await abandon(
          listener.port,
          `${API_PREFIX}/file/chunk?uploadId=${upload._id}&offset=3`,
          40,
          Buffer.alloc(20, 2),
        );
        expect((await api.as(alice).get(`/file/offset?uploadId=${upload._id}`)).body).toEqual({ offset: 3 });
        expect(fs.readFileSync(path.join(api.server.dataDir, 'uploads', upload._id)).toString()).toBe('abc');

        // A second upload, cancelled: its bytes go at once.
        const cancelled = await startUpload(alice, { parentType: 'item', parentId: itemId, name: 'x.bin', size: 50 });
        await chunk(alice, cancelled._id, 0, Buffer.from('xyz')).expect(200);
        await api.as(alice).delete(`/file/upload/${cancelled._id}`).expect(200);
        expect(partialFiles()).not.toContain(cancelled._id);
      } finally {
        await listener.close();
      }
    });

    it('sweeps at startup: unreferenced blobs, temporary files and bytes of finished uploads go', async () => {
      // On a server of its own, restarted on the same DATA_DIR.
      const main = { api, alice };
      const other = await startApi();
      let restarted: Runtime | undefined;
      try {
        api = other;
        await other.allowSmallChunks(await other.createUser('admin'));
        alice = await other.createUser('alice');
        const own = await api.as(alice).get(`/folder?parentType=user&parentId=${alice._id}&name=Private`);
        const folder = await newFolder(alice, own.body[0]._id, 'sweep');
        const kept = await uploadToFolder(alice, folder, 'kept.bin', Buffer.from('keep me'));
        const active = await startUpload(alice, {
          parentType: 'folder',
          parentId: folder,
          name: 'later.bin',
          size: 10,
        });
        await chunk(alice, active._id, 0, Buffer.from('12345')).expect(200);
        const finished = await startUpload(alice, {
          parentType: 'folder',
          parentId: folder,
          name: 'done.bin',
          size: 2,
        });
        await chunk(alice, finished._id, 0, Buffer.from('ok')).expect(200);

        const blobs = path.join(other.server.dataDir, 'blobs');
        const uploads = path.join(other.server.dataDir, 'uploads');
        const orphan = Buffer.from('nobody references me');
        const orphanPath = path.join(blobs, sha256(orphan).slice(0, 2), sha256(orphan));
        fs.mkdirSync(path.dirname(orphanPath), { recursive: true });
        fs.writeFileSync(orphanPath, orphan);
        fs.writeFileSync(path.join(blobs, 'tmp', 'interrupted-put'), 'half');
        fs.appendFileSync(path.join(uploads, active._id), 'tail of a cut chunk');
        fs.writeFileSync(path.join(uploads, finished._id), 'left behind by a crash after completion');
        fs.writeFileSync(path.join(uploads, '0123456789abcdef01234567'), 'bytes of an upload that never was');

        await other.runtime.close();
        // No grace period: everything the test left lying around is old enough to go.
        restarted = await bootstrap(
          loadConfig({ NODE_ENV: 'test', DATA_DIR: other.server.dataDir, BLOB_SWEEP_GRACE_SECONDS: '0' }),
        );
        api = new ApiClient({ ...other.server, runtime: restarted, app: createApp(restarted.services) });

        expect(fs.existsSync(orphanPath)).toBe(false);
        expect(filesUnder(path.join(blobs, 'tmp'))).toEqual([]);
        expect(filesUnder(uploads)).toEqual([active._id]);
        expect(fs.readFileSync(path.join(uploads, active._id)).toString()).toBe('12345');
        expect((await download(alice, kept._id)).body.toString()).toBe('keep me');
        // The active upload resumes where its record says.
        const done = await chunk(alice, active._id, 5, Buffer.from('67890'));
        expect(done.body).toMatchObject({ _modelType: 'file', size: 10 });
        expect((await download(alice, done.body._id)).body.toString()).toBe('1234567890');
      } finally {
        ({ api, alice } = main);
        await restarted?.close();
        fs.rmSync(other.server.dataDir, { recursive: true, force: true });
      }
    });
  });
});
