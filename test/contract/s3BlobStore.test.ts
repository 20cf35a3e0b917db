import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { CreateMultipartUploadCommand, S3Client } from '@aws-sdk/client-s3';
import { S3BlobStore, S3_PART_BYTES } from '../../src/infra/blobs/s3/s3BlobStore';
import { blobStoreContract } from './blobStoreContract';
import { startTestS3, type TestS3 } from '../support/s3Server';

/** The BlobStore contract on the S3 store: s3rver started here, or the real S3/MinIO of S3_TEST_URL (README). */
let s3: TestS3;
beforeAll(async () => {
  s3 = await startTestS3();
});
afterAll(() => s3?.close());

/** Each store under a prefix of its own: a fresh, empty store in the shared bucket. */
const freshStore = (prefix = `contract-${crypto.randomUUID()}`) =>
  S3BlobStore.open(s3.settings(prefix), { sweepGraceMs: 0 });

blobStoreContract('S3', async () => {
  const store = freshStore();
  return { store, dispose: () => store.dispose() };
});

describe('S3BlobStore', () => {
  const bytesOf = async (stream: Readable) => {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };

  it('stores bytes larger than a part as a multipart upload, read back whole and by range', async () => {
    const store = freshStore();
    try {
      const bytes = crypto.randomBytes(2 * S3_PART_BYTES + 12345);
      const chunks = Array.from({ length: Math.ceil(bytes.length / 65536) }, (_, i) =>
        bytes.subarray(i * 65536, (i + 1) * 65536),
      );
      const blob = await store.put(Readable.from(chunks));
      store.release(blob.blobId);
      expect(blob).toEqual({
        blobId: crypto.createHash('sha256').update(bytes).digest('hex'),
        size: bytes.length,
        sha512: crypto.createHash('sha512').update(bytes).digest('hex'),
      });
      expect((await bytesOf(await store.get(blob.blobId))).equals(bytes)).toBe(true);
      const start = S3_PART_BYTES - 10;
      const part = await bytesOf(await store.get(blob.blobId, { start, end: start + 20 }));
      expect(part.equals(bytes.subarray(start, start + 20))).toBe(true);
      // The temporary object of the multipart upload is gone: a sweep that keeps every blob removes nothing.
      expect(await store.sweep(async () => true)).toEqual({ removedBlobs: 0, removedTemporary: 0 });
    } finally {
      await store.dispose();
    }
  });

  const sha = (algorithm: string, bytes: Buffer) => crypto.createHash(algorithm).update(bytes).digest('hex');
  /** Sends `bytes` as the parts of `upload`, 5 MiB each but the last. */
  const sendParts = async (store: S3BlobStore, upload: { key: string; uploadId: string }, bytes: Buffer) => {
    const parts = [];
    for (let offset = 0, number = 1; offset < bytes.length; offset += 5 * 1024 * 1024, number += 1) {
      const piece = bytes.subarray(offset, offset + 5 * 1024 * 1024);
      parts.push(await store.uploadPart(upload, number, Readable.from([piece]), piece.length));
    }
    return parts;
  };

  it("keeps a chunked upload's object under its key: no copy, held until released, swept once unreferenced", async () => {
    const prefix = `contract-${crypto.randomUUID()}`;
    const store = freshStore(prefix);
    try {
      const bytes = crypto.randomBytes(5 * 1024 * 1024 + 777);
      const upload = await store.beginUpload();
      expect(upload.key).toMatch(new RegExp(`^${prefix}/uploads/[0-9a-f-]{36}$`));
      // No hashes from the chunks (they went through several processes): the object is read back once.
      const blob = await store.finishUpload(upload, await sendParts(store, upload, bytes), null);
      expect(blob).toEqual({ blobId: `object:${upload.key}`, size: bytes.length, sha512: sha('sha512', bytes) });
      expect(await s3.objectExists(`${prefix}/blobs/${sha('sha256', bytes).slice(0, 2)}/${sha('sha256', bytes)}`)).toBe(
        false,
      );
      expect((await bytesOf(await store.get(blob.blobId, { start: 5, end: 15 }))).equals(bytes.subarray(5, 15))).toBe(
        true,
      );
      // Held until the file that references it is recorded.
      expect(await store.delete(blob.blobId)).toBe(false);
      store.release(blob.blobId);
      expect(await store.sweep(async () => true)).toEqual({ removedBlobs: 0, removedTemporary: 0 });
      expect(await store.exists(blob.blobId)).toBe(true);
      expect(await store.sweep(async (id) => id !== blob.blobId)).toEqual({ removedBlobs: 1, removedTemporary: 0 });
      expect(await s3.objectExists(upload.key)).toBe(false);
    } finally {
      await store.dispose();
    }
  });

  it('completes an upload begun under tmp/ (before uploads kept their objects) into its content key', async () => {
    const prefix = `contract-${crypto.randomUUID()}`;
    const store = freshStore(prefix);
    const settings = s3.settings(prefix);
    const client = new S3Client({
      region: settings.region,
      endpoint: settings.service,
      forcePathStyle: true,
      credentials: { accessKeyId: settings.accessKeyId ?? '', secretAccessKey: settings.secret ?? '' },
    });
    try {
      const bytes = crypto.randomBytes(5 * 1024 * 1024 + 3);
      const key = `${prefix}/tmp/${crypto.randomUUID()}`;
      const created = await client.send(new CreateMultipartUploadCommand({ Bucket: settings.bucket, Key: key }));
      const upload = { key, uploadId: created.UploadId ?? '' };
      const blob = await store.finishUpload(upload, await sendParts(store, upload, bytes), null);
      store.release(blob.blobId);
      expect(blob).toEqual({ blobId: sha('sha256', bytes), size: bytes.length, sha512: sha('sha512', bytes) });
      expect((await bytesOf(await store.get(blob.blobId))).equals(bytes)).toBe(true);
      expect(await s3.objectExists(key)).toBe(false);
    } finally {
      client.destroy();
      await store.dispose();
    }
  });

  it("holds the multipart uploads under its own keys: a put's tmp/ upload only past the sweep's grace", async () => {
    const prefix = `contract-${crypto.randomUUID()}`;
    const held = async (store: S3BlobStore) => {
      const found: { key: string; uploadId: string }[] = [];
      for await (const { key, uploadId, created } of store.heldUploads()) {
        expect(Math.abs(Date.now() - created)).toBeLessThan(60_000);
        found.push({ key, uploadId });
      }
      return found;
    };
    const chunked = `${prefix}/uploads/left`;
    const direct = `${prefix}/direct/left`;
    const temporary = `${prefix}/tmp/left`;
    const uploads = {
      chunked: await s3.startMultipartUpload(chunked),
      direct: await s3.startMultipartUpload(direct),
      temporary: await s3.startMultipartUpload(temporary),
    };
    // Not the store's: another key under its prefix, and a store whose prefix only begins like this one's.
    await s3.startMultipartUpload(`${prefix}/elsewhere/left`);
    await s3.startMultipartUpload(`${prefix}-other/uploads/left`);
    const withoutGrace = freshStore(prefix);
    const withGrace = S3BlobStore.open(s3.settings(prefix), { sweepGraceMs: 60_000 });
    try {
      expect(await held(withoutGrace)).toEqual([
        { key: direct, uploadId: uploads.direct },
        { key: temporary, uploadId: uploads.temporary },
        { key: chunked, uploadId: uploads.chunked },
      ]);
      // A put within the grace may be another process's, still sending parts.
      expect(await held(withGrace)).toEqual([
        { key: direct, uploadId: uploads.direct },
        { key: chunked, uploadId: uploads.chunked },
      ]);
      for (const upload of await held(withoutGrace)) await withoutGrace.abortUpload(upload);
      expect(await held(withoutGrace)).toEqual([]);
      expect(await s3.openMultipartUploads(prefix)).toEqual([
        `${prefix}-other/uploads/left`,
        `${prefix}/elsewhere/left`,
      ]);
    } finally {
      await withoutGrace.dispose();
      await withGrace.dispose();
    }
  });

  it("removes nothing of a read-only store's bucket: its objects and uploads under the store's keys are another's", async () => {
    const prefix = `contract-${crypto.randomUUID()}`;
    const keys = [`${prefix}/blobs/ab/${'ab'.repeat(32)}`, `${prefix}/tmp/theirs`, `${prefix}/uploads/theirs`];
    for (const key of keys) await s3.putObject(key, Buffer.from('theirs'));
    const upload = await s3.startMultipartUpload(`${prefix}/uploads/in-progress`);
    const readOnly = S3BlobStore.open({ ...s3.settings(prefix), readOnly: true }, { sweepGraceMs: 0 });
    try {
      const held: unknown[] = [];
      for await (const found of readOnly.heldUploads()) held.push(found);
      expect(held).toEqual([]);
      expect(await readOnly.sweep(async () => false)).toEqual({ removedBlobs: 0, removedTemporary: 0 });
      expect(await Promise.all(keys.map((key) => s3.objectExists(key)))).toEqual([true, true, true]);
      expect(await s3.openMultipartUploads(prefix)).toEqual([`${prefix}/uploads/in-progress`]);
      expect(upload).not.toBe('');
    } finally {
      await readOnly.dispose();
    }
  });
});
