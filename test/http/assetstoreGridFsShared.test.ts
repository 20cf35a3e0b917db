import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ApiClient, startApi, type TestUser } from '../support/apiClient';
import { MongoStandIn } from '../support/mongoStandIn';

/**
 * A GridFS assetstore shared by two service processes (issue 31): the chunks of one upload alternate between them,
 * and since an upload in progress lives in the store's database (src/infra/blobs/gridfs/uploadParts.ts), not under a
 * host's DATA_DIR/uploads, each process finds the parts the other took. (The S3 version is in assetstoreS3.test.ts.)
 *
 * The test-only seam: no mongod runs here, so the driver's MongoClient is replaced, in this file only, by one that
 * connects to the driver stand-in registered under its URL (test/support/standInMongoClient.ts); everything else (the
 * store's GridFSBucket, the service's code) is the real one. Both processes reach one stand-in through one
 * `mongohost`, as two hosts reach one MongoDB server.
 */
const MONGOHOST = 'mongodb://gridfs-shared.test:27017';
const mockServers = new Map<string, MongoStandIn>([[MONGOHOST, new MongoStandIn()]]);

jest.mock('mongodb', () =>
  jest
    .requireActual<typeof import('../support/standInMongoClient')>('../support/standInMongoClient')
    .mongodbWithStandIns(() => mockServers),
);

describe('a GridFS assetstore shared by two service processes', () => {
  let api: ApiClient;
  let other: ApiClient;
  let admin: TestUser;
  let folderId: string;
  const database = 'gridfs_shared';
  const partFiles = () =>
    mockServers
      .get(MONGOHOST)!
      .db(database)
      .asDb()
      .collection<{ filename: string }>('blobs.files')
      .find({ filename: /^part\// })
      .toArray();

  beforeAll(async () => {
    api = await startApi({ BLOB_SWEEP_GRACE_SECONDS: '0' });
    admin = await api.createUser('admin');
    folderId = await api.defaultFolder(admin, 'Private');
    const created = await api
      .as(admin)
      .post('/assetstore')
      .query({ name: 'GridFS', type: 1, db: database, mongohost: MONGOHOST });
    expect([created.status, created.body.mongohost]).toEqual([200, MONGOHOST]);
    const made = await api
      .as(admin)
      .put(`/assetstore/${created.body._id as string}`)
      .query({ name: 'GridFS', db: database, mongohost: MONGOHOST, current: true });
    expect([made.status, made.body.current]).toEqual([200, true]);
    // The second process shares the event log and read models (DATA_DIR's SQLite file) and the GridFS database.
    other = await startApi({ BLOB_SWEEP_GRACE_SECONDS: '0' }, { dataDir: api.server.dataDir });
  });
  afterAll(async () => {
    await other?.close();
    await api?.close();
  });

  it('takes the chunks of one upload alternately through the two processes', async () => {
    const bytes = crypto.randomBytes(10 * 1024 * 1024 + 99);
    const started = await api
      .as(admin)
      .post('/file')
      .query({ parentType: 'folder', parentId: folderId, name: 'alternating.bin', size: bytes.length });
    expect([started.status, started.body.behavior]).toEqual([200, undefined]);
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
      if (i === 0) {
        // The first chunk is a part in the database, and nothing on this host's disk.
        expect((await partFiles()).map((f) => f.filename)).toEqual([
          expect.stringMatching(/^part\/[0-9a-f]{24}\/1\/[0-9a-f]{24}$/),
        ]);
        expect(fs.readdirSync(path.join(api.server.dataDir, 'uploads'))).toEqual([]);
      }
    }
    expect(last!.body._modelType).toBe('file');
    expect(last!.body.sha512).toBe(crypto.createHash('sha512').update(bytes).digest('hex'));
    // The parts went with the upload; the file is one blob of the store, served by either process.
    expect(await partFiles()).toEqual([]);
    const files = await other.as(admin).get(`/assetstore/${started.body.assetstoreId as string}/files`);
    expect(files.body.map((f: { _id: string }) => f._id)).toEqual([last!.body._id]);
    expect((await other.download(admin, last!.body._id)).body.equals(bytes)).toBe(true);
    expect((await api.download(admin, last!.body._id)).body.equals(bytes)).toBe(true);
  });
});
