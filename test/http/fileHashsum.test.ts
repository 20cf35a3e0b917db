import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { binary, startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { itemDecider, itemStream, extensionsOf } from '../../src/domain/item';
import { newId } from '../../src/domain/ids';
import { girderTime } from '../../src/domain/time';
import { systemMeta } from '../../src/commands/requestMeta';
import { compareMongoWithReplay, verifyReadModels } from '../../src/cli/verify';
import { MongoReadModel } from '../../src/infra/readmodel/mongodb/mongoReadModel';
import { loadConfig } from '../../src/config';

/**
 * Girder's hashsum_download plugin (plugins/hashsum_download at v3.2.15, and its hashsum_download_test.py, whose
 * fixture this mirrors): `sha512` on file documents and the plugin's four routes. Every hash is computed here with
 * node:crypto, independently of the service.
 */
const sha512 = (bytes: Buffer) => crypto.createHash('sha512').update(bytes).digest('hex');

describe('content hashes (hashsum_download)', () => {
  let api: ApiClient;
  let user: TestUser;
  let otherUser: TestUser;
  let publicFolder: string;
  let privateFolder: string;
  const userData = Buffer.from('\u266a Il dolce suono mi colp\u00ec di sua voce! \u266a');
  const privateOnlyData = Buffer.from('\u2641 \u2600 \u2601 \u2614 \u2665');
  interface FileBody {
    _id: string;
    name: string;
    mimeType: string;
    size: number;
    itemId: string;
    sha512?: string;
  }
  let privateFile: FileBody;
  let publicFile: FileBody;
  let duplicatePublicFile: FileBody;
  let privateOnlyFile: FileBody;

  async function upload(folderId: string, name: string, bytes: Buffer, mimeType: string): Promise<FileBody> {
    const res = await api
      .as(user)
      .post('/file')
      .query({ parentType: 'folder', parentId: folderId, name, size: bytes.length, mimeType })
      .set('Content-Type', 'application/octet-stream')
      .send(bytes);
    expect(res.status).toBe(200);
    return res.body as FileBody;
  }
  const byHash = (caller: TestUser | null, algo: string, hash: string) =>
    api.as(caller).get(`/file/hashsum/${algo}/${hash}`);
  const downloadByHash = (caller: TestUser | null, algo: string, hash: string) =>
    api.as(caller).get(`/file/hashsum/${algo}/${hash}/download`).buffer(true).parse(binary);
  const keyFile = (caller: TestUser | null, fileId: string, algo: string) =>
    api.as(caller).get(`/file/${fileId}/hashsum_file/${algo}`);
  const ids = (files: FileBody[]) => files.map((f) => f._id);

  /**
   * A file as the service recorded it before it kept hashes: its bytes stored, its FileCreated without `sha512` (the
   * log of an older version; no route makes one any more).
   */
  async function legacyFile(folderId: string, name: string, bytes: Buffer): Promise<FileBody> {
    const item = await api.as(user).post('/item').query({ folderId, name });
    expect(item.status).toBe(200);
    const { services } = api.runtime;
    const blob = await services.blobs.put(Readable.from([bytes]));
    const fileId = newId();
    try {
      await services.commands.handle(itemStream(item.body._id), itemDecider, systemMeta('legacy-fixture'), (stream) =>
        stream.decide({
          type: 'AddFile',
          data: {
            file: {
              fileId,
              name,
              mimeType: 'application/x-legacy',
              size: blob.size,
              blobId: blob.blobId,
              creatorId: user._id,
              created: girderTime(),
              exts: extensionsOf(name),
            },
          },
        }),
      );
    } finally {
      services.blobs.release(blob.blobId);
    }
    const file = await api.as(user).get(`/file/${fileId}`);
    expect(file.status).toBe(200);
    return file.body as FileBody;
  }

  beforeAll(async () => {
    api = await startApi();
    await api.allowSmallChunks(await api.createUser('admin'));
    user = await api.createUser('leeloo');
    otherUser = await api.createUser('zorg');
    publicFolder = await api.defaultFolder(user, 'Public');
    privateFolder = await api.defaultFolder(user, 'Private');
    // In upload order, so in id order: the plugin's "first file" by hash is the oldest.
    privateFile = await upload(privateFolder, 'Il dolce suono - PRIVATE', userData, 'audio/mp4');
    publicFile = await upload(publicFolder, 'Il dolce suono - PUBLIC', userData, 'audio/flac');
    duplicatePublicFile = await upload(publicFolder, 'Il dolce suono - PUBLIC DUPLICATE', userData, 'audio/mp3');
    privateOnlyFile = await upload(privateFolder, 'Powers combined', privateOnlyData, 'image/png');
  });
  afterAll(() => api.close());

  describe('sha512 on file documents', () => {
    it('is recorded by every upload and shown wherever a file document is', async () => {
      expect(publicFile.sha512).toBe(sha512(userData));
      expect(privateOnlyFile.sha512).toBe(sha512(privateOnlyData));
      const got = await api.anonymous().get(`/file/${publicFile._id}`);
      expect(got.status).toBe(200);
      expect(got.body.sha512).toBe(sha512(userData));
      const listed = await api.as(user).get(`/item/${privateOnlyFile.itemId}/files`);
      expect(listed.body.map((f: FileBody) => f.sha512)).toEqual([sha512(privateOnlyData)]);
    });

    it('is taken from the bytes of a chunked upload', async () => {
      const bytes = crypto.randomBytes(25_000);
      const started = await api
        .as(user)
        .post('/file')
        .query({ parentType: 'folder', parentId: privateFolder, name: 'chunked.bin', size: bytes.length });
      expect(started.status).toBe(200);
      const chunk = (offset: number) =>
        api
          .as(user)
          .post('/file/chunk')
          .query({ uploadId: started.body._id, offset })
          .set('Content-Type', 'application/octet-stream')
          .send(bytes.subarray(offset, offset + 10_000));
      expect((await chunk(0)).status).toBe(200);
      expect((await chunk(10_000)).status).toBe(200);
      const last = await chunk(20_000);
      expect(last.status).toBe(200);
      expect(last.body).toMatchObject({ _modelType: 'file', name: 'chunked.bin', sha512: sha512(bytes) });
    });

    it('follows new contents, and the old hash no longer finds the file', async () => {
      const before = Buffer.from('before');
      const after = Buffer.from('after!');
      const file = await upload(privateFolder, 'changing.txt', before, 'text/plain');
      expect(file.sha512).toBe(sha512(before));
      const started = await api.as(user).put(`/file/${file._id}/contents`).query({ size: after.length });
      expect(started.status).toBe(200);
      const done = await api
        .as(user)
        .post('/file/chunk')
        .query({ uploadId: started.body._id, offset: 0 })
        .set('Content-Type', 'application/octet-stream')
        .send(after);
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({ _id: file._id, sha512: sha512(after) });
      expect((await byHash(user, 'sha512', sha512(before))).body).toEqual([]);
      expect(ids((await byHash(user, 'sha512', sha512(after))).body)).toEqual([file._id]);
    });
  });

  describe('GET /file/hashsum/:algo/:hash', () => {
    it('lists the files with the hash that the caller may read, oldest first', async () => {
      const hash = sha512(userData);
      const mine = await byHash(user, 'sha512', hash);
      expect(mine.status).toBe(200);
      expect(ids(mine.body)).toEqual([privateFile._id, publicFile._id, duplicatePublicFile._id]);
      for (const file of mine.body as FileBody[]) expect(file.sha512).toBe(hash);
      expect(mine.body[1]).toEqual((await api.as(user).get(`/file/${publicFile._id}`)).body);
      expect(ids((await byHash(otherUser, 'sha512', hash)).body)).toEqual([publicFile._id, duplicatePublicFile._id]);
      expect(ids((await byHash(null, 'sha512', hash)).body)).toEqual([publicFile._id, duplicatePublicFile._id]);
      expect(ids((await byHash(user, 'sha512', sha512(privateOnlyData))).body)).toEqual([privateOnlyFile._id]);
      const none = await byHash(otherUser, 'sha512', sha512(privateOnlyData));
      expect(none.status).toBe(200);
      expect(none.body).toEqual([]);
    });

    it('takes the algorithm and the hash in any case', async () => {
      const res = await byHash(otherUser, 'SHA512', sha512(userData).toUpperCase());
      expect(res.status).toBe(200);
      expect(ids(res.body)).toEqual([publicFile._id, duplicatePublicFile._id]);
    });

    it('refuses an algorithm the plugin does not support, and finds nothing for what cannot be a SHA-512', async () => {
      const res = await byHash(user, 'md5', sha512(userData));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: 'Invalid value for algo: "md5". Allowed values: sha512.', type: 'rest' });
      for (const hash of ['1a2b3c4d', sha512(userData).slice(1), `${sha512(userData)}0`, 'z'.repeat(128)]) {
        const found = await byHash(user, 'sha512', hash);
        expect(found.status).toBe(200);
        expect(found.body).toEqual([]);
      }
    });

    it('finds copies, and no longer finds deleted files', async () => {
      const copy = await api.as(user).post(`/item/${duplicatePublicFile.itemId}/copy`);
      expect(copy.status).toBe(200);
      const copied = (await api.as(user).get(`/item/${copy.body._id}/files`)).body as FileBody[];
      expect(copied.map((f) => f.sha512)).toEqual([sha512(userData)]);
      const folderCopy = await api.as(user).post(`/folder/${privateFolder}/copy`).query({ name: 'Private copy' });
      expect(folderCopy.status).toBe(200);
      const copiedItems = await api
        .as(user)
        .get('/item')
        .query({ folderId: folderCopy.body._id, name: 'Powers combined' });
      const copiedFile = (await api.as(user).get(`/item/${copiedItems.body[0]._id}/files`)).body[0] as FileBody;
      expect(copiedFile.sha512).toBe(sha512(privateOnlyData));
      // A copy's id starts with the copy's second: within that second, by id is no particular order.
      const found = ids((await byHash(user, 'sha512', sha512(privateOnlyData))).body);
      expect(found.sort()).toEqual([privateOnlyFile._id, copiedFile._id].sort());

      await api.as(user).delete(`/item/${copy.body._id}`).expect(200);
      await api.as(user).delete(`/folder/${folderCopy.body._id}`).expect(200);
      expect(ids((await byHash(user, 'sha512', sha512(privateOnlyData))).body)).toEqual([privateOnlyFile._id]);
      expect(ids((await byHash(user, 'sha512', sha512(userData))).body)).toEqual([
        privateFile._id,
        publicFile._id,
        duplicatePublicFile._id,
      ]);
    });
  });

  describe('GET /file/hashsum/:algo/:hash/download', () => {
    it('downloads the first readable file with the hash, with the file download headers', async () => {
      const hash = sha512(userData);
      for (const hashValue of [hash, hash.toUpperCase()]) {
        for (const algo of ['sha512', 'SHA512']) {
          const res = await downloadByHash(null, algo, hashValue);
          expect(res.status).toBe(200);
          expect(res.headers['accept-ranges']).toBe('bytes');
          expect(res.headers['content-length']).toBe(String(userData.length));
          expect(res.headers['content-type']).toBe('audio/flac');
          expect(res.headers['content-disposition']).toBe('attachment; filename="Il dolce suono - PUBLIC"');
          expect(res.body).toEqual(userData);
        }
      }
      // The owner reads the private copy too, and it is the oldest.
      const owner = await downloadByHash(user, 'sha512', hash);
      expect(owner.status).toBe(200);
      expect(owner.headers['content-type']).toBe('audio/mp4');
      expect(owner.headers['content-disposition']).toBe('attachment; filename="Il dolce suono - PRIVATE"');
      expect(owner.body).toEqual(userData);
    });

    it('answers 404 when no file the caller may read has the hash', async () => {
      const notFound = { message: 'File not found.', type: 'rest' };
      const empty = await downloadByHash(user, 'sha512', sha512(Buffer.alloc(0)));
      expect(empty.status).toBe(404);
      expect(JSON.parse(empty.body.toString())).toEqual(notFound);
      for (const caller of [null, otherUser]) {
        const res = await downloadByHash(caller, 'sha512', sha512(privateOnlyData));
        expect(res.status).toBe(404);
        expect(JSON.parse(res.body.toString())).toEqual(notFound);
      }
      const owner = await downloadByHash(user, 'sha512', sha512(privateOnlyData));
      expect(owner.status).toBe(200);
      expect(owner.body).toEqual(privateOnlyData);
    });

    it('refuses an unsupported algorithm before looking', async () => {
      const res = await downloadByHash(user, '1a2b3c4d', 'crc32');
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body.toString())).toEqual({
        message: 'Invalid value for algo: "1a2b3c4d". Allowed values: sha512.',
        type: 'rest',
      });
    });

    it("takes the file download's parameters: disposition, offset, endByte, Range", async () => {
      const hash = sha512(userData);
      const inline = await downloadByHash(null, 'sha512', hash).query({ contentDisposition: 'inline' });
      expect(inline.status).toBe(200);
      expect(inline.headers['content-disposition']).toBe('inline; filename="Il dolce suono - PUBLIC"');
      const offset = await downloadByHash(null, 'sha512', hash).query({ offset: 15 });
      expect(offset.status).toBe(206);
      expect(offset.body).toEqual(userData.subarray(15));
      const header = await downloadByHash(null, 'sha512', hash).set('Range', 'bytes=10-29');
      const query = await downloadByHash(null, 'sha512', hash).query({ offset: 10, endByte: 30 });
      for (const res of [header, query]) {
        expect(res.status).toBe(206);
        expect(res.headers['accept-ranges']).toBe('bytes');
        expect(res.headers['content-length']).toBe('20');
        expect(res.headers['content-range']).toBe(`bytes 10-29/${userData.length}`);
        expect(res.headers['content-type']).toBe('audio/flac');
        expect(res.body).toEqual(userData.subarray(10, 30));
      }
    });
  });

  describe('GET /file/:id/hashsum_file/:algo', () => {
    it("answers the key file CMake's ExternalData reads: the hash and a newline", async () => {
      for (const algo of ['sha512', 'Sha512']) {
        const res = await keyFile(null, publicFile._id, algo);
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toBe('text/plain');
        expect(res.headers['content-length']).toBe('129');
        expect(res.headers['content-disposition']).toBe('attachment; filename="Il dolce suono - PUBLIC.sha512"');
        expect(res.text).toBe(`${sha512(userData)}\n`);
      }
    });

    it('refuses an unsupported algorithm, and a caller who may not read the file', async () => {
      const bad = await keyFile(null, publicFile._id, 'foo');
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ message: 'Invalid value for algo: "foo". Allowed values: sha512.', type: 'rest' });
      const anonymous = await keyFile(null, privateFile._id, 'sha512');
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({
        message: `Read access denied for file ${privateFile._id} (user None).`,
        type: 'access',
      });
      const other = await keyFile(otherUser, privateFile._id, 'sha512');
      expect(other.status).toBe(403);
      expect(other.body).toEqual({
        message: `Read access denied for file ${privateFile._id} (user ${otherUser._id}).`,
        type: 'access',
      });
      const missing = await keyFile(user, '64b000000000000000000bad', 'sha512');
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ message: 'Invalid file id (64b000000000000000000bad).', type: 'rest' });
    });
  });

  describe('POST /file/:id/hashsum (files recorded before hashes were kept)', () => {
    it('computes the missing hash as an event; afterwards the file is found, downloaded and keyed by it', async () => {
      const bytes = crypto.randomBytes(5000);
      const legacy = await legacyFile(privateFolder, 'legacy.bin', bytes);
      expect(legacy).not.toHaveProperty('sha512');
      const noKey = await keyFile(user, legacy._id, 'sha512');
      expect(noKey.status).toBe(400);
      expect(noKey.body).toEqual({ message: 'This file does not have the sha512 hash computed.', type: 'rest' });
      expect((await byHash(user, 'sha512', sha512(bytes))).body).toEqual([]);

      const anonymous = await api.anonymous().post(`/file/${legacy._id}/hashsum`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({ message: 'You must be logged in.', type: 'access' });
      const other = await api.as(otherUser).post(`/file/${legacy._id}/hashsum`);
      expect(other.status).toBe(403);
      expect(other.body).toEqual({
        message: `Write access denied for file ${legacy._id} (user ${otherUser._id}).`,
        type: 'access',
      });

      const computed = await api.as(user).post(`/file/${legacy._id}/hashsum`).query({ progress: true });
      expect(computed.status).toBe(200);
      expect(computed.body).toEqual({ sha512: sha512(bytes) });
      const again = await api.as(user).post(`/file/${legacy._id}/hashsum`);
      expect(again.status).toBe(200);
      expect(again.body).toBeNull();

      expect((await api.as(user).get(`/file/${legacy._id}`)).body.sha512).toBe(sha512(bytes));
      expect(ids((await byHash(user, 'sha512', sha512(bytes))).body)).toEqual([legacy._id]);
      const downloaded = await downloadByHash(user, 'sha512', sha512(bytes));
      expect(downloaded.status).toBe(200);
      expect(downloaded.body).toEqual(bytes);
      expect((await keyFile(user, legacy._id, 'sha512')).text).toBe(`${sha512(bytes)}\n`);

      const history = await api.as(user).get(`/item/${legacy.itemId}/history`);
      expect(history.status).toBe(200);
      const recorded = (history.body as { type: string; data: unknown }[]).filter((e) => e.type === 'FileHashComputed');
      expect(recorded.map((e) => e.data)).toEqual([
        { itemId: legacy.itemId, fileId: legacy._id, blobId: expect.any(String), sha512: sha512(bytes) },
      ]);

      const notifications = await api.as(user).get('/notification');
      const progress = (notifications.body as { type: string; data: Record<string, unknown> }[]).filter(
        (n) => n.type === 'progress' && n.data.title === 'Computing hash: legacy.bin',
      );
      expect(progress.map((n) => [n.data.state, n.data.current, n.data.total])).toEqual([['success', 5000, 5000]]);
    });

    it('answers null at once for a file that has its hash', async () => {
      const res = await api.as(user).post(`/file/${publicFile._id}/hashsum`);
      expect(res.status).toBe(200);
      expect(res.body).toBeNull();
    });
  });

  it('leaves read models that a replay of the log reproduces (hashes, their index and FileHashComputed)', async () => {
    const { readModel, eventStore } = api.runtime.services;
    if (readModel instanceof MongoReadModel) {
      expect((await compareMongoWithReplay(eventStore, readModel)).differences).toEqual([]);
    } else {
      const chunks: string[] = [];
      const out = { write: (chunk: string) => chunks.push(chunk) > 0 } as unknown as NodeJS.WritableStream;
      const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: api.server.dataDir });
      expect(await verifyReadModels(config, [], out)).toBe(0);
      expect(chunks.join('')).toContain('The read models match the event log.');
    }
  });
});
