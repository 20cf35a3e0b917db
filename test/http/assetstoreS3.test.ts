import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ApiClient, startApi, type TestUser } from '../support/apiClient';
import { startTestS3, type TestS3 } from '../support/s3Server';

/**
 * An S3 assetstore made through the API (s3rver started here, or the S3/MinIO of S3_TEST_URL): made current, it
 * receives uploads sent whole and in chunks, and its files download whole and by range, are copied by reference and
 * deleted with their bytes.
 */
describe('S3 assetstores', () => {
  let api: ApiClient;
  let s3: TestS3;
  let admin: TestUser;
  let folderId: string;
  let storeId: string;
  const prefix = `http-${crypto.randomUUID()}`;

  beforeAll(async () => {
    s3 = await startTestS3();
    api = await startApi({ BLOB_SWEEP_GRACE_SECONDS: '0' });
    admin = await api.createUser('admin');
    folderId = await api.defaultFolder(admin, 'Private');
  });
  afterAll(async () => {
    await api?.close();
    await s3?.close();
  });

  const query = (overrides: Record<string, string | number | boolean> = {}) => {
    const { bucket, accessKeyId, secret, service } = s3.settings(prefix);
    return { name: 'S3', type: 2, bucket, prefix: `/${prefix}/`, accessKeyId, secret, service, ...overrides };
  };

  it("refuses a bucket it cannot write into and a malformed service, with Girder's messages", async () => {
    const missing = await api
      .as(admin)
      .post('/assetstore')
      .query(query({ bucket: 'no-such-bucket' }));
    expect([missing.status, missing.body]).toEqual([
      400,
      { message: 'Unable to write into bucket "no-such-bucket".', type: 'validation', field: 'bucket' },
    ]);
    const badService = await api
      .as(admin)
      .post('/assetstore')
      .query(query({ service: 'http://host/path' }));
    expect([badService.status, badService.body]).toEqual([
      400,
      {
        message: 'The service must of the form [http[s]://](host domain)[:(port)].',
        type: 'validation',
        field: 'service',
      },
    ]);
    const noBucket = await api
      .as(admin)
      .post('/assetstore')
      .query(query({ bucket: '' }));
    expect([noBucket.status, noBucket.body]).toEqual([
      400,
      { message: 'Bucket must not be empty.', type: 'validation', field: 'bucket' },
    ]);
  });

  it('is made with Girder’s fields (the prefix without its slashes) and made current', async () => {
    const created = await api.as(admin).post('/assetstore').query(query());
    expect([created.status, created.body.message]).toEqual([200, undefined]);
    const { service, accessKeyId, secret, bucket } = s3.settings(prefix);
    expect(created.body).toEqual({
      _id: expect.stringMatching(/^[0-9a-f]{24}$/),
      name: 'S3',
      created: expect.any(String),
      current: false,
      type: 2,
      bucket,
      prefix,
      accessKeyId,
      secret,
      service,
      readOnly: false,
      region: 'us-east-1',
      inferCredentials: false,
      serverSideEncryption: false,
      allowS3AcceleratedTransfer: false,
      redirect: true,
    });
    storeId = created.body._id;
    // An update that does not send the secret keeps it. Without `redirect`, every byte passes through the service
    // (the redirects and direct uploads of a store with it are in assetstoreS3Direct.test.ts).
    const made = await api
      .as(admin)
      .put(`/assetstore/${storeId}`)
      .query({ name: 'S3', bucket, prefix, accessKeyId, service, current: true, redirect: false });
    expect([made.status, made.body.current, made.body.secret, made.body.redirect]).toEqual([200, true, secret, false]);
  });

  it("takes a blank region as the web client's form sends it: stored as given, connecting in us-east-1 (Girder)", async () => {
    const created = await api
      .as(admin)
      .post('/assetstore')
      .query(query({ name: 'S3 blank region', prefix: `/${prefix}-blank/`, region: '' }));
    expect([created.status, created.body.region, created.body.prefix]).toEqual([200, '', `${prefix}-blank`]);
    const removed = await api.as(admin).delete(`/assetstore/${created.body._id}`);
    expect(removed.status).toBe(200);
  });

  it('refuses a chunk but the last smaller than the minimum size, and cancels into nothing', async () => {
    const started = await api
      .as(admin)
      .post('/file')
      .query({ parentType: 'folder', parentId: folderId, name: 'small.bin', size: 100 });
    const small = await api
      .as(admin)
      .post('/file/chunk')
      .query({ uploadId: started.body._id, offset: 0 })
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.alloc(10));
    expect([small.status, small.body]).toEqual([
      400,
      { message: 'Chunk is smaller than the minimum size.', type: 'validation' },
    ]);
    expect((await api.as(admin).get('/file/offset').query({ uploadId: started.body._id })).body).toEqual({ offset: 0 });
    expect((await api.as(admin).delete(`/file/upload/${started.body._id}`)).status).toBe(200);
  });

  it('takes the chunks of one upload alternately through two service processes sharing the stores', async () => {
    const other = await startApi({ BLOB_SWEEP_GRACE_SECONDS: '0' }, { dataDir: api.server.dataDir });
    try {
      const bytes = crypto.randomBytes(10 * 1024 * 1024 + 99);
      const started = await api
        .as(admin)
        .post('/file')
        .query({ parentType: 'folder', parentId: folderId, name: 'alternating.bin', size: bytes.length });
      const part = 5 * 1024 * 1024;
      let last: { status: number; body: { _id: string; _modelType: string; sha512?: string } } | undefined;
      for (const [i, offset] of [0, part, 2 * part].entries()) {
        last = await (i % 2 === 0 ? api : other)
          .as(admin)
          .post('/file/chunk')
          .query({ uploadId: started.body._id, offset })
          .set('Content-Type', 'application/octet-stream')
          .send(bytes.subarray(offset, Math.min(offset + part, bytes.length)));
        expect(last.status).toBe(200);
      }
      expect(last!.body._modelType).toBe('file');
      // The hashes are right although no process saw every chunk (the completed bytes were read back once).
      expect(last!.body.sha512).toBe(crypto.createHash('sha512').update(bytes).digest('hex'));
      expect((await other.download(admin, last!.body._id)).body.equals(bytes)).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('keeps uploads, sent whole or in chunks, in the bucket; downloads, copies and deletes them', async () => {
    const whole = crypto.randomBytes(3000);
    const sent = await api
      .as(admin)
      .post('/file')
      .query({ parentType: 'folder', parentId: folderId, name: 'whole.bin', size: whole.length })
      .send(whole);
    expect(sent.status).toBe(200);

    const chunked = crypto.randomBytes(6 * 1024 * 1024 + 7);
    const started = await api
      .as(admin)
      .post('/file')
      .query({ parentType: 'folder', parentId: folderId, name: 'chunked.bin', size: chunked.length });
    expect(started.body.assetstoreId).toBe(storeId);
    const split = 5 * 1024 * 1024;
    for (const [offset, bytes] of [
      [0, chunked.subarray(0, split)],
      [split, chunked.subarray(split)],
    ] as const) {
      const res = await api
        .as(admin)
        .post('/file/chunk')
        .query({ uploadId: started.body._id, offset })
        .set('Content-Type', 'application/octet-stream')
        .send(bytes);
      expect(res.status).toBe(200);
    }

    const files = await api.as(admin).get(`/assetstore/${storeId}/files`).query({ sort: 'name' });
    expect(files.body.map((f: { name: string; size: number }) => [f.name, f.size])).toEqual([
      ['alternating.bin', 10 * 1024 * 1024 + 99],
      ['chunked.bin', chunked.length],
      ['whole.bin', whole.length],
    ]);
    const chunkedId = (files.body as { _id: string; name: string }[]).find((f) => f.name === 'chunked.bin')!._id;
    expect((await api.download(admin, sent.body._id)).body).toEqual(whole);
    expect((await api.download(admin, chunkedId)).body.equals(chunked)).toBe(true);
    // Hashed as the chunks streamed through this process.
    expect((await api.as(admin).get(`/file/${chunkedId}`)).body.sha512).toBe(
      crypto.createHash('sha512').update(chunked).digest('hex'),
    );
    const ranged = await api.download(admin, chunkedId).set('Range', `bytes=${split - 2}-${split + 1}`);
    expect([ranged.status, ranged.headers['content-range']]).toEqual([
      206,
      `bytes ${split - 2}-${split + 1}/${chunked.length}`,
    ]);
    expect(ranged.body.equals(chunked.subarray(split - 2, split + 2))).toBe(true);

    // A copy references the same object; deleting the original keeps the bytes for the copy.
    const itemId = (await api.as(admin).get(`/file/${sent.body._id}`)).body.itemId as string;
    const copy = await api.as(admin).post(`/item/${itemId}/copy`).query({ name: 'copy' });
    expect(copy.status).toBe(200);
    const copyFiles = await api.as(admin).get(`/item/${copy.body._id}/files`);
    expect((await api.as(admin).delete(`/item/${itemId}`)).status).toBe(200);
    expect((await api.download(admin, copyFiles.body[0]._id)).body).toEqual(whole);

    // Nothing of the chunked upload was kept on this host's disk.
    expect(fs.readdirSync(path.join(api.server.dataDir, 'uploads'))).toEqual([]);

    // The store holds files: it may not be deleted.
    const refused = await api.as(admin).delete(`/assetstore/${storeId}`);
    expect([refused.status, refused.body]).toEqual([
      400,
      { message: 'You may not delete an assetstore that contains files.', type: 'validation' },
    ]);
  });
});
