import crypto from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { binary, startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { startTestS3, type TestS3 } from '../support/s3Server';
import { readZip } from '../support/readZip';
import { purgeExpiredBlobs } from '../../src/commands/blobReclaim';
import { sweepStorage } from '../../src/commands/storageSweep';
import { DEFAULT_ASSETSTORE_ID } from '../../src/domain/assetstoreBlobRef';

/**
 * A chunked upload into an S3 assetstore completes without copying: the completed object stays under its upload key
 * (`<prefix>/uploads/<uuid>`) and the file references it by that key. Everything that handles bytes works on it:
 * downloads (streamed, by range, redirected), zips, hashsum, copies (file and folder), deletes with the restore
 * retention, `PUT /file/:id/move` and the startup sweep.
 */
describe('S3 assetstores: chunked uploads stay where they were uploaded', () => {
  let api: ApiClient;
  let s3: TestS3;
  let admin: TestUser;
  let privateId: string;
  let storeId: string;
  let send: jest.SpyInstance;
  const prefix = `objects-${crypto.randomUUID()}`;
  const PART = 5 * 1024 * 1024;

  beforeAll(async () => {
    s3 = await startTestS3();
    api = await startApi({ BLOB_SWEEP_GRACE_SECONDS: '0' });
    admin = await api.createUser('admin');
    privateId = await api.defaultFolder(admin, 'Private');
    const { bucket, accessKeyId, secret, service } = s3.settings(prefix);
    const created = await api
      .as(admin)
      .post('/assetstore')
      .query({ name: 'S3', type: 2, bucket, prefix, accessKeyId, secret, service });
    expect(created.status).toBe(200);
    storeId = created.body._id;
    const made = await api
      .as(admin)
      .put(`/assetstore/${storeId}`)
      .query({ name: 'S3', bucket, prefix, accessKeyId, service, current: true, redirect: false });
    expect(made.status).toBe(200);
    // Every request the service's S3 clients send (the test's own S3Server helpers use clients of their own too, but
    // none of them runs while a test looks at what was sent).
    send = jest.spyOn(S3Client.prototype, 'send');
  }, 60_000);
  afterAll(async () => {
    send?.mockRestore();
    await api?.close();
    await s3?.close();
  });

  const sha = (algorithm: string, bytes: Buffer) => crypto.createHash(algorithm).update(bytes).digest('hex');
  const commandsSent = () =>
    send.mock.calls.map(([command]) => {
      const { constructor, input } = command as { constructor: { name: string }; input: { Key?: string } };
      return { name: constructor.name, key: input.Key };
    });

  /** A file's bytes as a client gets them: streamed by the service, or from where its redirect points. */
  async function bytesOf(client: ApiClient, fileId: string): Promise<Buffer> {
    const res = await client.download(admin, fileId);
    if (res.status === 303) return Buffer.from(await (await fetch(res.headers.location)).arrayBuffer());
    expect(res.status).toBe(200);
    return res.body as Buffer;
  }

  async function newFolder(name: string, parentId = privateId): Promise<string> {
    const res = await api.as(admin).post('/folder').query({ parentType: 'folder', parentId, name });
    expect(res.status).toBe(200);
    return res.body._id as string;
  }

  /** Uploads `bytes` as girder_client does (chunks of 5 MiB); resolves with the file and its object's key. */
  async function uploadInChunks(folderId: string, name: string, bytes: Buffer) {
    send.mockClear();
    const started = await api
      .as(admin)
      .post('/file')
      .query({ parentType: 'folder', parentId: folderId, name, size: bytes.length });
    expect([started.status, started.body.assetstoreId]).toEqual([200, storeId]);
    let last: { status: number; body: { _id: string; _modelType: string; itemId: string; sha512?: string } };
    let offset = 0;
    do {
      last = await api
        .as(admin)
        .post('/file/chunk')
        .query({ uploadId: started.body._id, offset })
        .set('Content-Type', 'application/octet-stream')
        .send(bytes.subarray(offset, offset + PART));
      expect(last.status).toBe(200);
      offset += PART;
    } while (offset < bytes.length);
    expect(last.body._modelType).toBe('file');
    const sent = commandsSent();
    const key = sent.find((c) => c.name === 'CreateMultipartUploadCommand')?.key ?? '';
    return { file: last.body, key, sent };
  }

  it('completes the upload without a copy: the object stays under its key and downloads byte for byte', async () => {
    const bytes = crypto.randomBytes(2 * PART + 12345);
    const { file, key, sent } = await uploadInChunks(privateId, 'kept.bin', bytes);
    expect(key).toMatch(new RegExp(`^${prefix}/uploads/[0-9a-f-]{36}$`));
    // One multipart upload, completed once, and nothing copied afterwards (nor deleted: the object is the file's).
    expect(sent.map((c) => c.name)).toEqual([
      'CreateMultipartUploadCommand',
      'UploadPartCommand',
      'UploadPartCommand',
      'UploadPartCommand',
      'CompleteMultipartUploadCommand',
    ]);
    expect(await s3.objectExists(key)).toBe(true);
    expect(await s3.objectExists(`${prefix}/blobs/${sha('sha256', bytes).slice(0, 2)}/${sha('sha256', bytes)}`)).toBe(
      false,
    );
    // Hashed as the chunks streamed through this process.
    expect(file.sha512).toBe(sha('sha512', bytes));

    // Streamed through the service, whole and by range (the store's `redirect` is off).
    const whole = await api.download(admin, file._id);
    expect([whole.status, whole.body.equals(bytes)]).toEqual([200, true]);
    const ranged = await api.download(admin, file._id).set('Range', `bytes=${PART - 3}-${PART + 2}`);
    expect([ranged.status, ranged.headers['content-range']]).toEqual([
      206,
      `bytes ${PART - 3}-${PART + 2}/${bytes.length}`,
    ]);
    expect(ranged.body.equals(bytes.subarray(PART - 3, PART + 3))).toBe(true);

    // In a folder's zip, and found by its hash (which it already has: nothing to compute).
    const zip = await api.as(admin).get(`/folder/${privateId}/download`).buffer(true).parse(binary);
    expect(zip.status).toBe(200);
    const entries = await readZip(zip.body as Buffer);
    expect(entries.find((e) => e.name.endsWith('kept.bin'))?.data.equals(bytes)).toBe(true);
    const hashsum = await api.as(admin).post(`/file/${file._id}/hashsum`);
    expect([hashsum.status, hashsum.body]).toEqual([200, null]);
    const byHash = await api
      .as(admin)
      .get(`/file/hashsum/sha512/${sha('sha512', bytes)}/download`)
      .buffer(true)
      .parse(binary);
    expect([byHash.status, (byHash.body as Buffer).equals(bytes)]).toEqual([200, true]);

    // Redirected to a presigned URL of the object once `redirect` is on (a process reads a store's settings again
    // after 2 s: src/infra/blobs/assetstoreBlobs.ts CONFIRMED_FOR_MS).
    const { bucket, accessKeyId, service } = s3.settings(prefix);
    const redirecting = await api
      .as(admin)
      .put(`/assetstore/${storeId}`)
      .query({ name: 'S3', bucket, prefix, accessKeyId, service, current: true, redirect: true });
    expect(redirecting.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const redirected = await api.download(admin, file._id);
    expect([redirected.status, redirected.headers.location]).toEqual([
      303,
      expect.stringContaining(`/${bucket}/${key}?`),
    ]);
    expect((await bytesOf(api, file._id)).equals(bytes)).toBe(true);
  });

  it('shares the object with copies; it goes with the last reference once the retention is over', async () => {
    const folderId = await newFolder('shared');
    const bytes = crypto.randomBytes(PART + 99);
    const { file, key } = await uploadInChunks(folderId, 'shared.bin', bytes);

    // A copy of the file and a copy of its folder reference the same object; no copy of the bytes is made.
    send.mockClear();
    const fileCopy = await api.as(admin).post(`/file/${file._id}/copy`).query({ itemId: file.itemId });
    expect(fileCopy.status).toBe(200);
    const folderCopy = await api.as(admin).post(`/folder/${folderId}/copy`).query({ name: 'shared copy' });
    expect(folderCopy.status).toBe(200);
    expect(commandsSent().filter((c) => /Copy|Put|Multipart/.test(c.name))).toEqual([]);

    // Deleting the original and the file copy keeps the bytes for the folder copy.
    expect((await api.as(admin).delete(`/file/${file._id}`)).status).toBe(200);
    expect((await api.as(admin).delete(`/file/${fileCopy.body._id}`)).status).toBe(200);
    expect(await s3.objectExists(key)).toBe(true);
    const copiedItems = await api.as(admin).get('/item').query({ folderId: folderCopy.body._id });
    const copiedFiles = await api.as(admin).get(`/item/${copiedItems.body[0]._id}/files`);
    expect((await bytesOf(api, copiedFiles.body[0]._id)).equals(bytes)).toBe(true);

    // The last reference goes with a folder delete: the bytes stay for the restore retention (7 days by default),
    // and the purge after it removes the object.
    expect((await api.as(admin).delete(`/folder/${folderCopy.body._id}`)).status).toBe(200);
    expect(await s3.objectExists(key)).toBe(true);
    await purgeExpiredBlobs(api.runtime.services, new Date(0).toISOString(), Date.now() + 8 * 86_400_000);
    expect(await s3.objectExists(key)).toBe(false);
  });

  it('moves the bytes out to another store, removing the object', async () => {
    const bytes = crypto.randomBytes(PART + 5);
    const { file, key } = await uploadInChunks(await newFolder('moving'), 'moving.bin', bytes);
    const moved = await api.as(admin).put(`/file/${file._id}/move`).query({ assetstoreId: DEFAULT_ASSETSTORE_ID });
    expect([moved.status, moved.body.assetstoreId]).toEqual([200, DEFAULT_ASSETSTORE_ID]);
    expect(await s3.objectExists(key)).toBe(false);
    expect((await bytesOf(api, file._id)).equals(bytes)).toBe(true);
  });

  it('keeps referenced upload objects through the startup sweep, and removes unreferenced ones', async () => {
    const bytes = crypto.randomBytes(PART + 1);
    const { file, key } = await uploadInChunks(await newFolder('swept'), 'swept.bin', bytes);
    const stray = `${prefix}/uploads/${crypto.randomUUID()}`;
    await s3.putObject(stray, Buffer.from('nobody references this'));
    // The startup sweep (run by bootstrap before requests are served; here on the running service, no grace period).
    const report = await sweepStorage(api.runtime.services);
    expect(report.removedBlobs).toBe(1);
    expect(await s3.objectExists(stray)).toBe(false);
    expect(await s3.objectExists(key)).toBe(true);
    expect((await bytesOf(api, file._id)).equals(bytes)).toBe(true);
  });
});
