import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { FsBlobStore } from '../../src/infra/blobs/fs/fsBlobStore';
import { PartialUploads } from '../../src/infra/blobs/fs/partialUploads';
import { ContentHasher } from '../../src/domain/contentHashes';

/**
 * A finished chunked upload's file is hard-linked into the filesystem store (one pass over the bytes): the blob then
 * shares the upload file's bytes, so writing to that file again (the last chunk sent again after its commit failed;
 * the startup sweep cutting it back) must leave the blob as it was.
 */
describe('an upload file linked into the filesystem store', () => {
  let root: string;
  let store: FsBlobStore;
  let uploads: PartialUploads;
  const uploadId = 'a'.repeat(24);
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'linked-upload-'));
    store = new FsBlobStore(path.join(root, 'blobs'), { sweepGraceMs: 0 });
    uploads = new PartialUploads(path.join(root, 'uploads'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

  /** Writes `bytes` as one chunk at `offset`, hashed as it goes; resolves with the hashes. */
  async function writeChunk(bytes: Buffer, offset = 0) {
    const hasher = new ContentHasher();
    expect(await uploads.write(uploadId, offset, Readable.from([bytes]), bytes.length, hasher)).toBe(bytes.length);
    return hasher.digests();
  }

  it('is stored under the SHA-256 taken while the chunk was written, with its SHA-512, and nothing copied', async () => {
    const bytes = crypto.randomBytes(300_000);
    const hashes = await writeChunk(bytes);
    expect(hashes).toEqual({
      sha256: sha256(bytes),
      sha512: crypto.createHash('sha512').update(bytes).digest('hex'),
      size: bytes.length,
    });
    const stored = await store.linkFile(uploads.pathOf(uploadId), hashes);
    expect(stored).toEqual({ blobId: hashes.sha256, size: bytes.length, sha512: hashes.sha512 });
    expect(fs.statSync(store.pathOf(hashes.sha256)).ino).toBe(fs.statSync(uploads.pathOf(uploadId)).ino);
    await uploads.remove(uploadId);
    expect(fs.readFileSync(store.pathOf(hashes.sha256))).toEqual(bytes);
  });

  it('keeps its bytes when the upload file is written again or cut back afterwards', async () => {
    const bytes = crypto.randomBytes(200_000);
    const hashes = await writeChunk(bytes);
    await store.linkFile(uploads.pathOf(uploadId), hashes);
    const other = crypto.randomBytes(200_000);
    await writeChunk(other.subarray(0, 1000), 0);
    expect(fs.readFileSync(uploads.pathOf(uploadId))).toEqual(other.subarray(0, 1000));
    expect(fs.readFileSync(store.pathOf(hashes.sha256))).toEqual(bytes);
    await store.linkFile(uploads.pathOf(uploadId), await writeChunk(bytes));
    await uploads.truncate(uploadId, 10);
    expect(fs.readFileSync(uploads.pathOf(uploadId))).toEqual(bytes.subarray(0, 10));
    expect(fs.readFileSync(store.pathOf(hashes.sha256))).toEqual(bytes);
    expect(fs.readdirSync(path.join(root, 'uploads'))).toEqual([uploadId]);
  });

  it('leaves an already stored blob as it is, and the upload file where it was', async () => {
    const bytes = crypto.randomBytes(50_000);
    const first = await store.put(Readable.from([bytes]));
    const inode = fs.statSync(store.pathOf(first.blobId)).ino;
    const stored = await store.linkFile(uploads.pathOf(uploadId), await writeChunk(bytes));
    expect(stored?.blobId).toBe(first.blobId);
    expect(fs.statSync(store.pathOf(first.blobId)).ino).toBe(inode);
    expect(fs.existsSync(uploads.pathOf(uploadId))).toBe(true);
  });
});
