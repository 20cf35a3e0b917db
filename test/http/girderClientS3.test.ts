import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApi, type ApiClient } from '../support/apiClient';
import { GirderClient } from '../support/girderClientReplay';
import { startTestS3, type TestS3 } from '../support/s3Server';

/**
 * girder_client (its HTTP conversation, replayed by test/support/girderClientReplay.ts) on a service whose current
 * store is S3 (s3rver started here, or S3_TEST_URL) with `redirect` on, as Girder makes S3 stores: it uploads a
 * directory tree, one file in chunks of S3's minimum part size (a multipart upload made by the service), the others
 * whole; the objects in the bucket hold exactly those bytes, and the recursive download, redirected to presigned URLs
 * of the bucket, writes the same tree byte for byte.
 */
describe('girder_client on an S3 assetstore', () => {
  let api: ApiClient;
  let s3: TestS3;
  let listener: { port: number; close(): Promise<void> };
  let gc: GirderClient;
  let target: string;
  let work: string;
  const prefix = `girder-client-${crypto.randomUUID()}`;
  const PART = 5 * 1024 * 1024;
  const files: Record<string, Buffer> = {
    'big.bin': crypto.randomBytes(2 * PART + 4321),
    'notes.txt': crypto.randomBytes(1000),
    'nested/data.json': crypto.randomBytes(300 * 1024),
    'nested/empty.dat': Buffer.alloc(0),
  };
  const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');
  const ID = /[0-9a-f]{24}/g;

  beforeAll(async () => {
    s3 = await startTestS3();
    api = await startApi({ BLOB_SWEEP_GRACE_SECONDS: '0' });
    const admin = await api.createUser('admin');
    const { bucket, accessKeyId, secret, service } = s3.settings(prefix);
    const created = await api
      .as(admin)
      .post('/assetstore')
      .query({ name: 'S3', type: 2, bucket, prefix, accessKeyId, secret, service });
    expect([created.status, created.body.redirect]).toEqual([200, true]);
    const made = await api
      .as(admin)
      .put(`/assetstore/${created.body._id as string}`)
      .query({ name: 'S3', bucket, prefix, accessKeyId, service, current: true });
    expect(made.status).toBe(200);
    const uploader = await api.createUser('uploader');
    target = await api.defaultFolder(uploader, 'Private');
    listener = await api.listen();
    gc = new GirderClient(`http://127.0.0.1:${listener.port}/api/v1`);
    await gc.authenticate({ username: 'uploader', password: 'password1' });
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'girder-client-s3-'));
    for (const [rel, bytes] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(work, 'src', rel)), { recursive: true });
      fs.writeFileSync(path.join(work, 'src', rel), bytes);
    }
  }, 60_000);
  afterAll(async () => {
    await listener?.close();
    await api?.close();
    await s3?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('uploads a tree into the bucket, a large file in chunks, and downloads it back byte for byte', async () => {
    // girder_client's own setting: files above it go in chunks of this size (S3's minimum part size here).
    gc.MAX_CHUNK_SIZE = PART;
    await gc.upload(path.join(work, 'src'), target);
    const writes = gc.requests
      .filter((r) => r.method !== 'GET')
      .map((r) => `${r.method} ${r.url.replace(ID, ':id').replace(/&mimeType=.*$/, '')} ${r.status}`);
    expect(writes).toEqual([
      'POST folder?parentId=:id&parentType=folder&name=src&description=&reuseExisting=False 200',
      `POST file?parentType=folder&parentId=:id&name=big.bin&size=${files['big.bin'].length} 200`,
      'POST file/chunk?offset=0&uploadId=:id 200',
      `POST file/chunk?offset=${PART}&uploadId=:id 200`,
      `POST file/chunk?offset=${2 * PART}&uploadId=:id 200`,
      'POST folder?parentId=:id&parentType=folder&name=nested&description=&reuseExisting=False 200',
      `POST file?parentType=folder&parentId=:id&name=data.json&size=${300 * 1024} 200`,
      'POST item?folderId=:id&name=empty.dat&description=&reuseExisting=False 200',
      'POST file?parentType=item&parentId=:id&name=empty.dat&size=0 200',
      'POST file?parentType=folder&parentId=:id&name=notes.txt&size=1000 200',
    ]);

    // Each whole file's bytes are one object of the bucket, under its content address (the empty file has none); the
    // chunked one stays where its multipart upload put it (`uploads/`, checked by its download below).
    for (const [rel, bytes] of Object.entries(files)) {
      if (bytes.length === 0 || rel === 'big.bin') continue;
      const key = `${prefix}/blobs/${sha256(bytes).slice(0, 2)}/${sha256(bytes)}`;
      expect([rel, (await s3.getObject(key)).equals(bytes)]).toEqual([rel, true]);
    }
    // Nothing of the chunked upload stayed in the bucket beside the objects, nor on the service's disk.
    expect(await s3.openMultipartUploads(prefix)).toEqual([]);
    expect(fs.readdirSync(path.join(api.server.dataDir, 'uploads'))).toEqual([]);

    const src = (await gc.get('folder', { parentId: target, parentType: 'folder', name: 'src' }))[0]._id as string;
    const dest = path.join(work, 'downloaded');
    fs.mkdirSync(dest);
    gc.requests.length = 0;
    await gc.downloadFolderRecursive(src, dest);
    for (const [rel, bytes] of Object.entries(files))
      expect([rel, fs.readFileSync(path.join(dest, rel)).equals(bytes)]).toEqual([rel, true]);
    // Every non-empty file came from the bucket: the service answered 303 and the client followed it.
    const { service, bucket } = s3.settings(prefix);
    const downloads = gc.requests
      .filter((r) => r.url.includes('/download') || r.url.startsWith(service))
      .map(
        (r) => `${r.method} ${r.url.startsWith(service) ? r.url.split('?')[0] : r.url.replace(ID, ':id')} ${r.status}`,
      );
    const object = (bytes: Buffer) =>
      `GET ${service}/${bucket}/${prefix}/blobs/${sha256(bytes).slice(0, 2)}/${sha256(bytes)}`;
    expect(downloads).toEqual([
      'GET file/:id/download 303',
      `${object(files['nested/data.json'])} 200`,
      'GET file/:id/download 200',
      'GET file/:id/download 303',
      expect.stringMatching(new RegExp(`^GET ${service}/${bucket}/${prefix}/uploads/[0-9a-f-]+ 200$`)),
      'GET file/:id/download 303',
      `${object(files['notes.txt'])} 200`,
    ]);
  }, 60_000);
});
