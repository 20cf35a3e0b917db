import crypto from 'node:crypto';
import { Readable } from 'node:stream';
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
const freshStore = () => S3BlobStore.open(s3.settings(`contract-${crypto.randomUUID()}`), { sweepGraceMs: 0 });

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
});
