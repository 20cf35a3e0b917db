import crypto from 'node:crypto';
import { ok, startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { startTestS3, type TestS3 } from '../support/s3Server';

/**
 * Girder's untracked uploads in S3 stores (issue 31): `GET` and `DELETE /system/uploads?includeUntracked=true` list
 * and abort the multipart uploads a bucket holds under a store's own keys that no upload in progress records (one a
 * crashed process left, one whose upload ended), as Girder's S3 adapter does with ListMultipartUploads. The bucket
 * answers two uploads a page, so the listing pages through KeyMarker and UploadIdMarker.
 */
describe('untracked uploads in S3 stores', () => {
  let api: ApiClient;
  let s3: TestS3;
  let admin: TestUser;
  let folderId: string;
  let storeA: string;
  let storeB: string;
  const prefixA = `untracked-a-${crypto.randomUUID()}`;
  const prefixB = `untracked-b-${crypto.randomUUID()}`;
  /** Girder's datetime rendering (src/domain/time.ts). */
  const GIRDER_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$/;

  const makeStore = async (name: string, prefix: string) => {
    const { bucket, accessKeyId, secret, service } = s3.settings(prefix);
    const query = { name, type: 2, bucket, prefix, accessKeyId, secret, service };
    return ok<{ _id: string }>(await api.as(admin).post('/assetstore').query(query), `store ${name}`)._id;
  };
  const makeCurrent = async (id: string, name: string, prefix: string) => {
    const { bucket, accessKeyId, secret, service } = s3.settings(prefix);
    const query = { name, bucket, prefix, accessKeyId, secret, service, current: true };
    ok(await api.as(admin).put(`/assetstore/${id}`).query(query), `make ${name} current`);
  };
  const startUpload = async (name: string) => {
    const query = { parentType: 'folder', parentId: folderId, name, size: 10 };
    const started = ok<Record<string, unknown> & { behavior: string; s3: unknown }>(
      await api.as(admin).post('/file').query(query),
      `start ${name}`,
    );
    // The upload document as listed: without the direct path's offer the start answered.
    const { behavior, s3: offer, ...view } = started;
    expect([behavior, typeof offer]).toEqual(['s3', 'object']);
    return view as Record<string, unknown> & { _id: string };
  };
  const entry = (key: string, uploadId: string, assetstoreId: string) => ({
    s3: { uploadId, key, created: expect.stringMatching(GIRDER_TIME) as unknown },
    assetstoreId,
  });
  const list = async (query: Record<string, string | number | boolean> = {}) => {
    const res = await api.as(admin).get('/system/uploads').query(query);
    expect(res.status).toBe(200);
    return res.body as Record<string, unknown>[];
  };

  beforeAll(async () => {
    s3 = await startTestS3({ uploadsPerPage: 2 });
    // No grace: a `tmp/` upload of a put is a leftover at once (it is spared within the grace otherwise).
    api = await startApi({ BLOB_SWEEP_GRACE_SECONDS: '0', LOG_LEVEL: 'warn' }, { captureLog: true });
    admin = await api.createUser('admin');
    folderId = await api.defaultFolder(admin, 'Private');
    storeA = await makeStore('S3 A', prefixA);
    storeB = await makeStore('S3 B', prefixB);
    await makeCurrent(storeA, 'S3 A', prefixA);
  });
  afterAll(async () => {
    await api?.close();
    await s3?.close();
  });

  it('lists the multipart uploads no upload records, by store, and aborts them', async () => {
    // Tracked: the service's multipart upload begun for the upload's chunks, and the client's on its direct key
    // (started, not yet named to the service by a part's signing).
    const tracked = await startUpload('a.bin');
    expect(tracked.assetstoreId).toBe(storeA);
    const directKey = `${prefixA}/direct/${tracked._id}`;
    const clientUploadId = await s3.startMultipartUpload(directKey);
    // Untracked: left by crashed processes in each store's areas; a key outside them is not the service's.
    const orphanKey = `${prefixA}/uploads/orphan`;
    const orphan = await s3.startMultipartUpload(orphanKey);
    const leftoverKey = `${prefixA}/tmp/leftover`;
    const leftover = await s3.startMultipartUpload(leftoverKey);
    await s3.startMultipartUpload(`${prefixA}/elsewhere/theirs`);
    const otherKey = `${prefixB}/uploads/orphan`;
    const other = await s3.startMultipartUpload(otherKey);

    const untrackedA = [entry(leftoverKey, leftover, storeA), entry(orphanKey, orphan, storeA)];
    const untrackedB = [entry(otherKey, other, storeB)];
    const all = await list();
    expect(all).toEqual([tracked, ...untrackedA, ...untrackedB]);
    const created = Date.parse((all[1].s3 as { created: string }).created);
    expect(Math.abs(Date.now() - created)).toBeLessThan(60_000);

    expect(await list({ assetstoreId: storeB })).toEqual(untrackedB);
    expect(await list({ assetstoreId: storeA })).toEqual([tracked, ...untrackedA]);
    expect(await list({ assetstoreId: '0123456789abcdef01234567' })).toEqual([]);
    expect(await list({ minimumAge: 1 })).toEqual([]);
    expect(await list({ minimumAge: 0 })).toEqual([tracked, ...untrackedA, ...untrackedB]);
    expect(await list({ limit: 2 })).toEqual([tracked, untrackedA[0]]);
    expect(await list({ includeUntracked: false })).toEqual([tracked]);

    const discardedB = await api.as(admin).delete('/system/uploads').query({ assetstoreId: storeB });
    expect([discardedB.status, discardedB.body]).toEqual([200, untrackedB]);
    expect(await s3.openMultipartUploads(prefixB)).toEqual([]);
    // Only the untracked ones of store A (no upload has this id): the upload in progress and the foreign key stay.
    const discardedA = await api.as(admin).delete('/system/uploads').query({ assetstoreId: storeA, uploadId: 'none' });
    expect([discardedA.status, discardedA.body]).toEqual([200, untrackedA]);
    expect(await s3.openMultipartUploads(prefixA)).toEqual([
      directKey,
      `${prefixA}/elsewhere/theirs`,
      expect.stringMatching(new RegExp(`^${prefixA}/uploads/`)),
    ]);
    expect(await list()).toEqual([tracked]);

    // Cancelled before the client named its multipart upload: the service could not abort that one, and now no
    // upload records it.
    expect((await api.as(admin).delete(`/file/upload/${tracked._id}`)).status).toBe(200);
    const ended = entry(directKey, clientUploadId, storeA);
    expect(await list()).toEqual([ended]);
    const discarded = await api.as(admin).delete('/system/uploads');
    expect([discarded.status, discarded.body]).toEqual([200, [ended]]);
    expect(await s3.openMultipartUploads(prefixA)).toEqual([`${prefixA}/elsewhere/theirs`]);
  });

  it('aborts the uploads a deleted store holds, but one an upload into another store under its keys records', async () => {
    // Store D keeps its keys inside store C's `uploads/` area; each has an upload in progress, and a crash left one.
    const prefix = `untracked-c-${crypto.randomUUID()}`;
    const storeC = await makeStore('S3 C', prefix);
    const storeD = await makeStore('S3 D', `${prefix}/uploads`);
    await makeCurrent(storeC, 'S3 C', prefix);
    const intoC = await startUpload('c.bin');
    await makeCurrent(storeD, 'S3 D', `${prefix}/uploads`);
    const intoD = await startUpload('d.bin');
    await makeCurrent(storeA, 'S3 A', prefixA);
    await s3.startMultipartUpload(`${prefix}/uploads/orphan`);
    expect([intoC.assetstoreId, intoD.assetstoreId]).toEqual([storeC, storeD]);
    expect(await s3.openMultipartUploads(`${prefix}/uploads/uploads/`)).toHaveLength(1);
    expect(await s3.openMultipartUploads(prefix)).toHaveLength(3);

    const deleted = await api.as(admin).delete(`/assetstore/${storeC}`);
    expect([deleted.status, deleted.body]).toEqual([200, { message: 'Deleted assetstore S3 C.' }]);
    // Left: the upload into D, which D lists as tracked.
    const left = await s3.openMultipartUploads(prefix);
    expect(left).toEqual(await s3.openMultipartUploads(`${prefix}/uploads/uploads/`));
    expect(left).toHaveLength(1);
    expect(await list({ assetstoreId: storeD })).toEqual([intoD]);

    // The upload into the deleted store is still listed, and cancelled, as Girder's would be.
    const discarded = await api.as(admin).delete('/system/uploads');
    expect([discarded.status, discarded.body]).toEqual([200, [intoC, intoD]]);
    expect(await s3.openMultipartUploads(prefix)).toEqual([]);
  });

  it("leaves a read-only store's multipart uploads alone: its bucket is another application's to write", async () => {
    // A store on a bucket the service only reads (an import of another application's data, which keeps its own
    // uploads under `uploads/`), as Girder's S3 adapter lists no untracked uploads for a read-only store.
    const prefix = `untracked-ro-${crypto.randomUUID()}`;
    const { bucket, accessKeyId, secret, service } = s3.settings(prefix);
    const query = { name: 'S3 read-only', type: 2, bucket, prefix, accessKeyId, secret, service, readOnly: true };
    const storeId = ok<{ _id: string }>(await api.as(admin).post('/assetstore').query(query), 'read-only store')._id;
    const theirs = [`${prefix}/direct/theirs`, `${prefix}/tmp/theirs`, `${prefix}/uploads/theirs`];
    for (const key of theirs) await s3.startMultipartUpload(key);

    expect(await list({ assetstoreId: storeId })).toEqual([]);
    const discarded = await api.as(admin).delete('/system/uploads').query({ assetstoreId: storeId });
    expect([discarded.status, discarded.body]).toEqual([200, []]);
    expect((await api.as(admin).delete('/system/uploads')).status).toBe(200);
    const deleted = await api.as(admin).delete(`/assetstore/${storeId}`);
    expect([deleted.status, deleted.body]).toEqual([200, { message: 'Deleted assetstore S3 read-only.' }]);
    expect(await s3.openMultipartUploads(prefix)).toEqual(theirs);
  });

  // A server of its own, stopped (S3_TEST_URL's bucket cannot be stopped here).
  (process.env.S3_TEST_URL ? it.skip : it)(
    'leaves out a store it cannot reach, with a warning, and deletes it all the same',
    async () => {
      const gone = await startTestS3();
      const { bucket, accessKeyId, secret, service } = gone.settings('gone');
      const query = { name: 'S3 gone', type: 2, bucket, prefix: 'gone', accessKeyId, secret, service };
      const storeId = ok<{ _id: string }>(await api.as(admin).post('/assetstore').query(query), 'store')._id;
      await gone.startMultipartUpload('gone/uploads/left');
      await gone.close();

      const from = api.server.logLines.length;
      expect(await list()).toEqual([]);
      const discarded = await api.as(admin).delete('/system/uploads');
      expect([discarded.status, discarded.body]).toEqual([200, []]);
      const warnings = api.server.logLines.slice(from).map((line) => JSON.parse(line) as Record<string, unknown>);
      const warning = {
        msg: 'Could not list the untracked uploads of these assetstores',
        assetstores: ['S3 gone'],
        reasons: { 'S3 gone': expect.stringMatching(/./) as unknown },
      };
      expect(warnings).toEqual([expect.objectContaining(warning), expect.objectContaining(warning)]);
      const deletedFrom = api.server.logLines.length;
      const deleted = await api.as(admin).delete(`/assetstore/${storeId}`);
      expect([deleted.status, deleted.body]).toEqual([200, { message: 'Deleted assetstore S3 gone.' }]);
      const deletion = api.server.logLines
        .slice(deletedFrom)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(deletion).toEqual([
        expect.objectContaining({
          msg: 'Could not list the partial uploads of an assetstore being deleted; they stay in it',
          assetstoreId: storeId,
          reason: expect.stringMatching(/./) as unknown,
        }),
      ]);
    },
  );
});
