import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { MongoClient, ObjectId, type Db } from 'mongodb';
import { GridFsBlobStore } from '../../src/infra/blobs/gridfs/gridfsBlobStore';
import { MongoStandIn } from '../support/mongoStandIn';
import { blobStoreContract } from './blobStoreContract';
import { sharedBlobStoreContract } from './sharedBlobStoreContract';

/**
 * The GridFS blob store: the BlobStore contract with the driver's real `GridFSBucket` running over the driver
 * stand-in's collections (`blobs.files`, `blobs.chunks`), and over a real server when MONGODB_URL is set; then what
 * is particular to GridFS: chunking, ranges across chunks, dedupe under concurrency, leftovers of crashed puts.
 */

blobStoreContract('GridFS (driver GridFSBucket over the stand-in)', async () => {
  const store = await GridFsBlobStore.open(new MongoStandIn().db('blobs').asDb(), {
    chunkSizeBytes: 64,
    sweepGraceMs: 0,
  });
  return { store, dispose: () => store.dispose() };
});

sharedBlobStoreContract('GridFS (two stores on one database over the stand-in)', async ({ sweepGraceMs }) => {
  const db = new MongoStandIn().db('blobs').asDb();
  const [first, second] = [
    await GridFsBlobStore.open(db, { sweepGraceMs }),
    await GridFsBlobStore.open(db, { sweepGraceMs }),
  ];
  return { first, second, dispose: async () => undefined };
});

const MONGODB_URL = process.env.MONGODB_URL;
if (MONGODB_URL) {
  let client: MongoClient;
  beforeAll(async () => {
    client = await new MongoClient(MONGODB_URL).connect();
  });
  afterAll(() => (client as MongoClient | undefined)?.close()); // undefined if beforeAll failed
  blobStoreContract('GridFS on a real server', async () => {
    const db = client.db(`gridfs_contract_${crypto.randomUUID().slice(0, 8)}`);
    const store = await GridFsBlobStore.open(db, { chunkSizeBytes: 64, sweepGraceMs: 0 });
    return { store, dispose: () => db.dropDatabase().then(() => undefined) };
  });
} else {
  describe('BlobStore contract: GridFS on a real server', () => {
    it.skip('skipped: MONGODB_URL not set', () => undefined);
    beforeAll(() => console.info('BlobStore contract on a real MongoDB server (GridFS): skipped: MONGODB_URL not set'));
  });
}

describe('GridFsBlobStore', () => {
  let db: Db;
  let store: GridFsBlobStore;
  const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');
  const bytesOf = async (stream: Readable) => {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  const put = async (bytes: Buffer) => {
    const blob = await store.put(Readable.from([bytes]));
    store.release(blob.blobId);
    return blob;
  };

  beforeEach(async () => {
    db = new MongoStandIn().db('blobs').asDb();
    store = await GridFsBlobStore.open(db, { chunkSizeBytes: 100, leftoverAfterMs: 60_000, sweepGraceMs: 0 });
  });

  it('stores a blob as GridFS chunks under its hash, with no temporary file left', async () => {
    const bytes = crypto.randomBytes(1050);
    const { blobId } = await put(bytes);
    const files = await db.collection('blobs.files').find({}).toArray();
    expect(files).toHaveLength(1);
    expect(files[0]).toMatchObject({ filename: sha256(bytes), length: 1050, chunkSize: 100 });
    const chunks = await db
      .collection('blobs.chunks')
      .find({ files_id: files[0]._id }, { sort: { n: 1 } })
      .toArray();
    expect(chunks.map((c) => c.n)).toEqual(Array.from({ length: 11 }, (_, i) => i));
    expect(await db.collection('blobs.pending').countDocuments({})).toBe(0);
    expect(await bytesOf(await store.get(blobId))).toEqual(bytes);
  });

  it('reads ranges that start and end inside and across chunks', async () => {
    const bytes = crypto.randomBytes(1050);
    const { blobId } = await put(bytes);
    for (const [start, end] of [
      [0, 1],
      [0, 100],
      [99, 101],
      [150, 950],
      [1000, 1050],
      [1049, 1050],
      [0, 1050],
      [300, 300],
    ]) {
      expect([start, end, await bytesOf(await store.get(blobId, { start, end }))]).toEqual([
        start,
        end,
        bytes.subarray(start, end),
      ]);
    }
  });

  it('stores identical bytes once when they are put concurrently', async () => {
    const bytes = crypto.randomBytes(500);
    const results = await Promise.all(
      Array.from({ length: 5 }, () => store.put(Readable.from([bytes.subarray(0, 250), bytes.subarray(250)]))),
    );
    for (const r of results) store.release(r.blobId);
    expect(new Set(results.map((r) => r.blobId))).toEqual(new Set([sha256(bytes)]));
    expect(await db.collection('blobs.files').countDocuments({})).toBe(1);
    expect(await db.collection('blobs.chunks').countDocuments({})).toBe(5);
    expect(await db.collection('blobs.pending').countDocuments({})).toBe(0);
  });

  it('never loses bytes that are put again while they are being deleted', async () => {
    const bytes = Buffer.from('deleted and stored again');
    const { blobId } = await put(bytes);
    const [deleted, again] = await Promise.all([store.delete(blobId), store.put(Readable.from([bytes]))]);
    store.release(again.blobId);
    expect(deleted).toBe(true);
    expect(await store.exists(blobId)).toBe(true);
    expect(await bytesOf(await store.get(blobId))).toEqual(bytes);
  });

  it('sweeps the chunks of puts a crash cut short, and only old enough ones', async () => {
    const old = new ObjectId();
    const young = new ObjectId();
    await db.collection('blobs.pending').insertMany([
      { _id: old, started: new Date(Date.now() - 120_000) },
      { _id: young, started: new Date() },
    ]);
    await db.collection('blobs.chunks').insertMany([
      { files_id: old, n: 0, data: Buffer.from('half') },
      { files_id: young, n: 0, data: Buffer.from('in flight elsewhere') },
    ]);
    // A put renamed into place just before a crash left its pending record: the blob itself stays.
    const { blobId } = await put(Buffer.from('complete'));
    const file = await db.collection('blobs.files').findOne({ filename: blobId });
    await db.collection('blobs.pending').insertOne({ _id: file!._id, started: new Date(0) });

    const report = await store.sweep(async () => true);
    expect(report).toEqual({ removedBlobs: 0, removedTemporary: 1 });
    expect(await db.collection('blobs.chunks').countDocuments({ files_id: old })).toBe(0);
    expect(await db.collection('blobs.chunks').countDocuments({ files_id: young })).toBe(1);
    expect(await db.collection('blobs.pending').countDocuments({})).toBe(1);
    expect(await bytesOf(await store.get(blobId))).toEqual(Buffer.from('complete'));
  });

  it('refuses ids that are not SHA-256 hex', async () => {
    await expect(store.get('../etc')).rejects.toThrow('Invalid blob id');
    await expect(store.exists('x')).rejects.toThrow('Invalid blob id');
  });
});

/**
 * Uploads in progress live in the database (issue 31 item 2), as S3's multipart uploads live in the bucket: two
 * processes sharing MongoDB but no directory (two stores on one stand-in database) take alternate chunks of one
 * upload, and either completes it. On the old store there was no `beginUpload`: chunks went to DATA_DIR/uploads of
 * the process that received them.
 */
describe('GridFsBlobStore: chunks of an upload in progress, in the database', () => {
  const sha = (algorithm: string, bytes: Buffer) => crypto.createHash(algorithm).update(bytes).digest('hex');
  const bytesOf = async (stream: Readable) => {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };

  async function twoProcesses() {
    const db = new MongoStandIn().db('blobs').asDb();
    const options = { chunkSizeBytes: 100, sweepGraceMs: 0 };
    return { db, first: await GridFsBlobStore.open(db, options), second: await GridFsBlobStore.open(db, options) };
  }

  it('takes the chunks of one upload alternately through two processes; either completes it', async () => {
    const { db, first, second } = await twoProcesses();
    const bytes = crypto.randomBytes(1000);
    const upload = await first.beginUpload();
    const parts = [];
    for (const [i, offset] of [0, 300, 600, 900].entries()) {
      const chunk = bytes.subarray(offset, Math.min(offset + 300, bytes.length));
      parts.push(await (i % 2 === 0 ? first : second).uploadPart(upload, i + 1, Readable.from([chunk]), chunk.length));
    }
    // Any process finishes it, from the parts its events recorded (here out of order).
    const blob = await second.finishUpload(upload, [...parts].reverse());
    second.release(blob.blobId);
    expect(blob).toEqual({ blobId: sha('sha256', bytes), size: bytes.length, sha512: sha('sha512', bytes) });
    expect(await bytesOf(await first.get(blob.blobId))).toEqual(bytes);
    // Nothing of the upload is left beside the blob.
    expect(await db.collection('blobs.files').countDocuments({ filename: { $regex: '^part/' } })).toBe(0);
    expect(await db.collection('blobs.files').countDocuments({})).toBe(1);
  });

  it('keeps nothing of a chunk cut short, and drops every part when the upload is aborted', async () => {
    const { db, first, second } = await twoProcesses();
    const upload = await first.beginUpload();
    await first.uploadPart(upload, 1, Readable.from([Buffer.alloc(300, 1)]), 300);
    await expect(second.uploadPart(upload, 2, Readable.from([Buffer.alloc(120, 2)]), 300)).rejects.toThrow(
      'Chunk ended after 120 of 300 bytes.',
    );
    await expect(second.uploadPart(upload, 2, Readable.from([Buffer.alloc(400, 2)]), 300)).rejects.toThrow();
    expect(await db.collection('blobs.files').countDocuments({})).toBe(1);
    await second.abortUpload(upload);
    expect(await db.collection('blobs.files').countDocuments({})).toBe(0);
    expect(await db.collection('blobs.chunks').countDocuments({})).toBe(0);
  });
});
