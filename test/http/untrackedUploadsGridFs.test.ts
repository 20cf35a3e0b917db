import { GridFSBucket, ObjectId } from 'mongodb';
import { ok, startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { MongoStandIn } from '../support/mongoStandIn';

/**
 * Untracked uploads in a GridFS store (issue 31): the parts of an upload in progress are GridFS files
 * `part/<upload id>/<n>/<id>` (src/infra/blobs/gridfs/uploadParts.ts); a set of parts no upload in progress records
 * (its process crashed while dropping them) is listed by `GET /system/uploads?includeUntracked=true`, with when its
 * first and newest parts were stored and its bytes, and removed by `DELETE`. `minimumAge` counts from the newest part.
 *
 * The test-only seam: the driver's MongoClient is replaced, in this file only, by one that connects to the driver
 * stand-in registered under its URL (test/support/standInMongoClient.ts).
 */
const MONGOHOST = 'mongodb://gridfs-untracked.test:27017';
const mockServers = new Map<string, MongoStandIn>([[MONGOHOST, new MongoStandIn()]]);

jest.mock('mongodb', () =>
  jest
    .requireActual<typeof import('../support/standInMongoClient')>('../support/standInMongoClient')
    .mongodbWithStandIns(() => mockServers),
);

const DAY_MS = 24 * 60 * 60 * 1000;
/** Girder's datetime rendering (src/domain/time.ts) of a time whose milliseconds are not zero. */
const girderTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000+00:00');

describe('untracked uploads in a GridFS store', () => {
  let api: ApiClient;
  let admin: TestUser;
  let folderId: string;
  let storeId: string;
  const database = 'gridfs_untracked';
  const db = () => mockServers.get(MONGOHOST)!.db(database).asDb();
  const files = () => db().collection<{ _id: ObjectId; filename: string; uploadDate: Date }>('blobs.files');

  /** Stores a part straight in the database, as the store names them; resolves its files document's id. */
  async function putPart(uploadId: string, number: number, bytes: Buffer, storedAt: Date): Promise<ObjectId> {
    const id = new ObjectId();
    const stream = new GridFSBucket(db(), { bucketName: 'blobs' }).openUploadStreamWithId(
      id,
      `part/${uploadId}/${number}/${id.toHexString()}`,
    );
    await new Promise<void>((resolve, reject) => stream.on('finish', resolve).on('error', reject).end(bytes));
    await files().updateOne({ _id: id }, { $set: { uploadDate: storedAt } });
    return id;
  }

  beforeAll(async () => {
    api = await startApi({ BLOB_SWEEP_GRACE_SECONDS: '0', LOG_LEVEL: 'warn' }, { captureLog: true });
    admin = await api.createUser('admin');
    await api.allowSmallChunks(admin);
    folderId = await api.defaultFolder(admin, 'Private');
    const created = await api
      .as(admin)
      .post('/assetstore')
      .query({ name: 'GridFS', type: 1, db: database, mongohost: MONGOHOST });
    storeId = ok<{ _id: string }>(created, 'GridFS store')._id;
    const made = await api
      .as(admin)
      .put(`/assetstore/${storeId}`)
      .query({ name: 'GridFS', db: database, mongohost: MONGOHOST, current: true });
    expect([made.status, made.body.current]).toEqual([200, true]);
  });
  afterAll(() => api?.close());

  it('lists the parts no upload records, by the age of their newest part, and removes them', async () => {
    const started = await api
      .as(admin)
      .post('/file')
      .query({ parentType: 'folder', parentId: folderId, name: 'tracked.txt', size: 10 })
      .set('Content-Type', 'text/plain')
      .send('abc');
    const tracked = ok<Record<string, unknown> & { _id: string }>(started, 'start upload');
    expect([tracked.received, tracked.assetstoreId]).toEqual([3, storeId]);

    // Left behind: one upload whose parts are all three days old, one whose newest part is fresh.
    // Milliseconds that are not zero, so the time is written out with them (Girder omits a zero fraction).
    const now = Math.floor(Date.now() / 1000) * 1000 + 123;
    const old = new ObjectId().toHexString();
    const oldFirst = new Date(now - 3 * DAY_MS - 60_000);
    const oldNewest = new Date(now - 3 * DAY_MS);
    const oldParts = [
      await putPart(old, 1, Buffer.from('0123'), oldFirst),
      await putPart(old, 2, Buffer.from('456789'), oldNewest),
    ];
    const fresh = new ObjectId().toHexString();
    const freshFirst = new Date(now - 3 * DAY_MS);
    await putPart(fresh, 1, Buffer.from('a'), freshFirst);
    await putPart(fresh, 2, Buffer.from('b'), new Date(now));

    const gridfs = (uploadId: string, created: Date, updated: Date, size: number) => ({
      gridfs: {
        uploadId,
        key: `part/${uploadId}/`,
        created: girderTime(created.getTime()),
        updated: girderTime(updated.getTime()),
        size,
      },
      assetstoreId: storeId,
    });
    const untracked = [gridfs(old, oldFirst, oldNewest, 10), gridfs(fresh, freshFirst, new Date(now), 2)];
    const list = async (query: Record<string, string | number> = {}) => {
      const res = await api.as(admin).get('/system/uploads').query(query);
      expect(res.status).toBe(200);
      return res.body as unknown[];
    };
    const sorted = (entries: unknown[]) =>
      [...entries].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    const all = await list();
    expect(all[0]).toEqual(tracked);
    expect(sorted(all.slice(1))).toEqual(sorted(untracked));
    expect(await list({ minimumAge: 2 })).toEqual([untracked[0]]);
    expect(await list({ minimumAge: 4 })).toEqual([]);
    expect(await list({ assetstoreId: '000000000000000000000001' })).toEqual([]);
    expect(sorted((await list({ assetstoreId: storeId })).slice(1))).toEqual(sorted(untracked));

    const discarded = await api.as(admin).delete('/system/uploads').query({ uploadId: 'none', minimumAge: 2 });
    expect([discarded.status, discarded.body]).toEqual([200, [untracked[0]]]);
    const chunksLeft = await db()
      .collection('blobs.chunks')
      .countDocuments({ files_id: { $in: oldParts } });
    expect(chunksLeft).toBe(0);
    const rest = await api.as(admin).delete('/system/uploads').query({ uploadId: 'none' });
    expect([rest.status, rest.body]).toEqual([200, [untracked[1]]]);
    const names = (
      await files()
        .find({ filename: /^part\// })
        .toArray()
    ).map((f) => f.filename);
    expect(names).toEqual([expect.stringMatching(/^part\/[0-9a-f]{24}\/1\/[0-9a-f]{24}$/)]);
    expect(names[0]).not.toContain(old);
    expect(names[0]).not.toContain(fresh);

    // The upload in progress kept its part: it completes.
    const last = await api
      .as(admin)
      .post('/file/chunk')
      .query({ uploadId: tracked._id, offset: 3 })
      .set('Content-Type', 'text/plain')
      .send('defghij');
    expect([last.status, last.body._modelType]).toEqual([200, 'file']);
    expect(String((await api.download(admin, last.body._id as string)).body)).toBe('abcdefghij');
    expect(await list()).toEqual([]);
  });

  it('deletes a store whose parts cannot be dropped all the same: the deletion is recorded, a warning says so', async () => {
    const created = await api
      .as(admin)
      .post('/assetstore')
      .query({ name: 'GridFS doomed', type: 1, db: 'gridfs_doomed', mongohost: MONGOHOST });
    const doomedId = ok<{ _id: string }>(created, 'second GridFS store')._id;
    const doomedFiles = mockServers.get(MONGOHOST)!.db('gridfs_doomed').asDb().collection('blobs.files');
    const uploadId = new ObjectId().toHexString();
    const part = await new Promise<ObjectId>((resolve, reject) => {
      const id = new ObjectId();
      const bucket = new GridFSBucket(mockServers.get(MONGOHOST)!.db('gridfs_doomed').asDb(), { bucketName: 'blobs' });
      bucket
        .openUploadStreamWithId(id, `part/${uploadId}/1/${id.toHexString()}`)
        .on('finish', () => resolve(id))
        .on('error', reject)
        .end(Buffer.from('left'));
    });

    // The store's database refuses the next write: the parts' removal fails after the deletion was recorded.
    mockServers.get(MONGOHOST)!.failAfterWrites(0);
    const from = api.server.logLines.length;
    const deleted = await api.as(admin).delete(`/assetstore/${doomedId}`);
    mockServers.get(MONGOHOST)!.failAfterWrites(null);
    expect([deleted.status, deleted.body]).toEqual([200, { message: 'Deleted assetstore GridFS doomed.' }]);
    expect((await api.as(admin).get(`/assetstore/${doomedId}`)).status).toBe(400);
    const warnings = api.server.logLines.slice(from).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(warnings).toEqual([
      expect.objectContaining({
        msg: 'Could not abort a partial upload of a deleted assetstore',
        assetstoreId: doomedId,
        key: `part/${uploadId}/`,
      }),
    ]);
    expect(await doomedFiles.countDocuments({ _id: part })).toBe(1);
  });
});
