import crypto from 'node:crypto';
import { ApiClient, startApi, type TestUser } from '../support/apiClient';
import { startTestS3, type TestS3 } from '../support/s3Server';

/**
 * An S3 store with `redirect` on (the default, as Girder's S3 stores): the web client's direct path (`s3` in the
 * upload answer, presigned requests sent by a plain HTTP client as the browser sends them, `POST /file/completion`),
 * downloads redirected to a presigned URL, and cancelled uploads leaving nothing in the bucket.
 */
describe('S3 assetstores: direct uploads and redirects', () => {
  let api: ApiClient;
  let s3: TestS3;
  let admin: TestUser;
  let bob: TestUser;
  let folderId: string;
  let storeId: string;
  const prefix = `direct-${crypto.randomUUID()}`;
  const CHUNK = 32 * 1024 * 1024;

  beforeAll(async () => {
    s3 = await startTestS3();
    api = await startApi({ BLOB_SWEEP_GRACE_SECONDS: '0' });
    admin = await api.createUser('admin');
    bob = await api.createUser('bobby');
    folderId = await api.defaultFolder(admin, 'Private');
    const { bucket, accessKeyId, secret, service } = s3.settings(prefix);
    const created = await api
      .as(admin)
      .post('/assetstore')
      .query({ name: 'S3', type: 2, bucket, prefix, accessKeyId, secret, service });
    expect([created.status, created.body.redirect]).toEqual([200, true]);
    storeId = created.body._id;
    const made = await api
      .as(admin)
      .put(`/assetstore/${storeId}`)
      .query({ name: 'S3', bucket, prefix, accessKeyId, service, current: true });
    expect(made.status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await s3?.close();
  });

  const sha = (algorithm: string, bytes: Buffer) => crypto.createHash(algorithm).update(bytes).digest('hex');
  const start = (name: string, size: number) =>
    api.as(admin).post('/file').query({ parentType: 'folder', parentId: folderId, name, size });
  /** What the browser does with a presigned request: exactly its method, URL and headers. */
  const send = (request: { method: string; url: string; headers?: Record<string, string> }, body?: Buffer | string) =>
    fetch(request.url, { method: request.method, headers: request.headers ?? {}, ...(body ? { body } : {}) });
  const complete = (uploadId: string, caller: TestUser = admin) =>
    api.as(caller).post('/file/completion').type('form').send({ uploadId });

  it('offers the direct path, and takes a file sent in one presigned PUT', async () => {
    const bytes = crypto.randomBytes(3000);
    const started = await start('direct.txt', bytes.length);
    expect(started.status).toBe(200);
    const key = `${prefix}/direct/${started.body._id}`;
    expect(started.body).toMatchObject({
      _modelType: 'upload',
      received: 0,
      assetstoreId: storeId,
      behavior: 's3',
      s3: {
        chunked: false,
        chunkLength: CHUNK,
        key,
        relpath: `/${s3.settings(prefix).bucket}/${key}`,
        request: {
          method: 'PUT',
          url: expect.stringContaining('X-Amz-Signature='),
          headers: {
            'Content-Type': 'application/octet-stream',
            'Content-Disposition': 'attachment; filename="direct.txt"',
          },
        },
      },
    });
    // Nothing was sent yet: Girder's message.
    const early = await complete(started.body._id);
    expect([early.status, early.body]).toEqual([
      400,
      { message: 'Server has only received 0 bytes, but the file should be 3000 bytes.', type: 'rest' },
    ]);
    // Resuming a single PUT: the request, signed again.
    const offset = await api.as(admin).get('/file/offset').query({ uploadId: started.body._id });
    expect(offset.body).toEqual({ ...started.body.s3.request, url: expect.any(String), offset: 0 });
    expect((await send(started.body.s3.request, bytes)).status).toBe(200);

    const stranger = await complete(started.body._id, bob);
    expect([stranger.status, stranger.body]).toEqual([
      403,
      { message: 'You did not initiate this upload.', type: 'access' },
    ]);
    const done = await complete(started.body._id);
    expect(done.status).toBe(200);
    // Read back once: the file has both hashes, and is a blob like any other.
    expect(done.body).toMatchObject({
      _modelType: 'file',
      name: 'direct.txt',
      size: 3000,
      sha512: sha('sha512', bytes),
    });
    expect(done.body.s3FinalizeRequest).toBeUndefined();
    expect(await s3.objectExists(key)).toBe(false);
    const again = await complete(started.body._id);
    expect([again.status, again.body]).toEqual([
      400,
      { message: `Invalid upload id (${started.body._id}).`, type: 'rest' },
    ]);

    // The download redirects to the bucket, with this file's name and type.
    const download = await api.download(admin, done.body._id).query({ contentDisposition: 'inline' });
    expect(download.status).toBe(303);
    const fetched = await fetch(download.headers.location);
    expect([fetched.status, fetched.headers.get('content-disposition')]).toEqual([
      200,
      'attachment; filename="direct.txt"',
    ]);
    expect(Buffer.from(await fetched.arrayBuffer()).equals(bytes)).toBe(true);
    // The Range header goes along with the redirect; offset/endByte cannot, so those bytes are streamed here.
    const ranged = await fetch(download.headers.location, { headers: { Range: 'bytes=10-19' } });
    expect([ranged.status, Buffer.from(await ranged.arrayBuffer()).equals(bytes.subarray(10, 20))]).toEqual([
      206,
      true,
    ]);
    const part = await api.download(admin, done.body._id).query({ offset: 100, endByte: 110 });
    expect([part.status, part.headers['content-range']]).toEqual([206, 'bytes 100-109/3000']);
    expect(part.body.equals(bytes.subarray(100, 110))).toBe(true);
  });

  it('takes a multipart upload the client sends itself, its parts signed through POST /file/chunk', async () => {
    const bytes = crypto.randomBytes(CHUNK + 1000);
    const started = await start('large.bin', bytes.length);
    expect(started.body.s3).toMatchObject({ chunked: true, request: { method: 'POST' } });
    const initiated = await send(started.body.s3.request);
    expect(initiated.status).toBe(200);
    const s3UploadId = /<UploadId>(.*)<\/UploadId>/.exec(await initiated.text())![1];

    const signPart = (partNumber: number, contentLength: number) =>
      api
        .as(admin)
        .post('/file/chunk')
        .type('form')
        .send({
          offset: 0,
          uploadId: started.body._id,
          chunk: JSON.stringify({ s3UploadId, partNumber, contentLength }),
        });
    const wrong = await signPart(1, 5);
    expect([wrong.status, wrong.body]).toEqual([
      400,
      { message: `Expected chunk size ${CHUNK}, but got 5.`, type: 'validation' },
    ]);
    const past = await signPart(3, 0);
    expect([past.status, past.body]).toEqual([
      400,
      { message: `Invalid chunk length -${CHUNK - 1000}.`, type: 'validation' },
    ]);
    const pieces = [bytes.subarray(0, CHUNK), bytes.subarray(CHUNK)];
    for (const [partNumber, piece] of pieces.entries()) {
      if (partNumber === 1) {
        // One part short: the completion refuses (nothing completed, nothing recorded), the client may send it yet.
        const early = await complete(started.body._id);
        expect([early.status, early.body]).toEqual([
          400,
          {
            message: `Server has only received ${CHUNK} bytes, but the file should be ${bytes.length} bytes.`,
            type: 'rest',
          },
        ]);
      }
      const signed = await signPart(partNumber + 1, piece.length);
      expect(signed.status).toBe(200);
      expect(signed.body.s3).toMatchObject({ uploadId: s3UploadId, partNumber: partNumber + 1 });
      expect(signed.body.s3.request).toEqual({ method: 'PUT', url: expect.stringContaining('X-Amz-Signature=') });
      const sent = await send(signed.body.s3.request, piece);
      expect(sent.status).toBe(200);
    }
    const offset = await api.as(admin).get('/file/offset').query({ uploadId: started.body._id });
    expect([offset.status, offset.body.message]).toEqual([
      400,
      'You should not call requestOffset on a chunked direct-to-S3 upload.',
    ]);

    const done = await complete(started.body._id);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ _modelType: 'file', size: bytes.length });
    // The service completed the multipart upload from the bucket's parts (Girder 5's protocol: the web client sends
    // no completion); the bytes never passed through it, so the file has no hash yet.
    expect(done.body.sha512).toBeUndefined();
    expect(done.body.s3FinalizeRequest).toBeUndefined();
    expect(await s3.openMultipartUploads(prefix)).toEqual([]);

    const download = await api.download(admin, done.body._id);
    expect(download.status).toBe(303);
    const fetched = Buffer.from(await (await fetch(download.headers.location)).arrayBuffer());
    expect(fetched.equals(bytes)).toBe(true);
    // The hash is taken on request, reading the object once.
    const hashed = await api.as(admin).post(`/file/${done.body._id}/hashsum`);
    expect([hashed.status, (await api.as(admin).get(`/file/${done.body._id}`)).body.sha512]).toEqual([
      200,
      sha('sha512', bytes),
    ]);
    // A copy shares the object; it goes with the last file that references it.
    const copy = await api.as(admin).post(`/file/${done.body._id}/copy`).query({ itemId: done.body.itemId });
    expect(copy.status).toBe(200);
    const key = `${prefix}/direct/${started.body._id}`;
    expect((await api.as(admin).delete(`/file/${done.body._id}`)).status).toBe(200);
    expect(await s3.objectExists(key)).toBe(true);
    expect((await api.as(admin).delete(`/file/${copy.body._id}`)).status).toBe(200);
    expect(await s3.objectExists(key)).toBe(false);
  }, 60_000);

  it('aborts the multipart uploads of a cancelled upload, and of uploads an administrator discards', async () => {
    expect(await s3.openMultipartUploads(prefix)).toEqual([]);
    const direct = await start('cancelled.bin', CHUNK + 1);
    const initiated = await send(direct.body.s3.request);
    const s3UploadId = /<UploadId>(.*)<\/UploadId>/.exec(await initiated.text())![1];
    const signed = await api
      .as(admin)
      .post('/file/chunk')
      .type('form')
      .send({ offset: 0, uploadId: direct.body._id, chunk: JSON.stringify({ s3UploadId, partNumber: 1 }) });
    expect(signed.status).toBe(200);
    // The service's own multipart upload (for chunks sent through it) and the client's.
    const open = await s3.openMultipartUploads(prefix);
    expect(open).toHaveLength(2);
    expect(open).toEqual(
      expect.arrayContaining([
        `${prefix}/direct/${direct.body._id}`,
        expect.stringMatching(new RegExp(`^${prefix}/uploads/`)),
      ]),
    );
    const cancelled = await api.as(admin).delete(`/file/upload/${direct.body._id}`);
    expect([cancelled.status, cancelled.body]).toEqual([200, { message: 'Upload canceled.' }]);
    expect(await s3.openMultipartUploads(prefix)).toEqual([]);

    // Chunks through the service, then swept by an administrator (DELETE /system/uploads).
    const proxied = await start('swept.bin', 6 * 1024 * 1024);
    const chunk = await api
      .as(admin)
      .post('/file/chunk')
      .query({ uploadId: proxied.body._id, offset: 0 })
      .set('Content-Type', 'application/octet-stream')
      .send(crypto.randomBytes(5 * 1024 * 1024));
    expect([chunk.status, chunk.body.received]).toEqual([200, 5 * 1024 * 1024]);
    expect(await s3.openMultipartUploads(prefix)).toHaveLength(1);
    const swept = await api.as(admin).delete('/system/uploads').query({ uploadId: proxied.body._id });
    expect(swept.status).toBe(200);
    expect(await s3.openMultipartUploads(prefix)).toEqual([]);
  });

  it('refuses the chunk parameter where no direct multipart upload was offered', async () => {
    const small = await start('small.bin', 10);
    const res = await api
      .as(admin)
      .post('/file/chunk')
      .type('form')
      .send({ offset: 0, uploadId: small.body._id, chunk: JSON.stringify({ s3UploadId: 'x', partNumber: 1 }) });
    expect([res.status, res.body]).toEqual([
      400,
      {
        message: 'Only a direct multipart upload to an S3 assetstore takes the chunk parameter.',
        type: 'validation',
        field: 'chunk',
      },
    ]);
    const chunked = await start('chunked.bin', CHUNK + 1);
    const bad = await api
      .as(admin)
      .post('/file/chunk')
      .type('form')
      .send({ offset: 0, uploadId: chunked.body._id, chunk: '{not json' });
    expect([bad.status, bad.body]).toEqual([
      400,
      { message: 'The chunk parameter must be a JSON object.', type: 'validation', field: 'chunk' },
    ]);
    expect((await api.as(admin).delete(`/file/upload/${chunked.body._id}`)).status).toBe(200);
    expect((await api.as(admin).delete(`/file/upload/${small.body._id}`)).status).toBe(200);
  });
});
