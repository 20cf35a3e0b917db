import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { FsBlobStore } from '../../src/infra/blobs/fs/fsBlobStore';
import { blobStoreContract } from './blobStoreContract';
import { sharedBlobStoreContract } from './sharedBlobStoreContract';

const tempRoot = () => fs.mkdtempSync(path.join(os.tmpdir(), 'fs-blobs-'));

blobStoreContract('filesystem', async () => {
  const root = tempRoot();
  return {
    store: new FsBlobStore(path.join(root, 'blobs'), { sweepGraceMs: 0 }),
    dispose: async () => fs.rmSync(root, { recursive: true, force: true }),
  };
});

describe('FsBlobStore on disk', () => {
  let root: string;
  let store: FsBlobStore;
  beforeEach(() => {
    root = tempRoot();
    store = new FsBlobStore(path.join(root, 'blobs'), { sweepGraceMs: 0 });
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  /** Every regular file under the blob root, relative to it. */
  const filesOnDisk = (dir = store.root, prefix = ''): string[] =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .flatMap((entry) =>
        entry.isDirectory()
          ? filesOnDisk(path.join(dir, entry.name), `${prefix}${entry.name}/`)
          : [`${prefix}${entry.name}`],
      );

  it('stores identical bytes once, at <sha[0:2]>/<sha>, with no temporary file left', async () => {
    const bytes = crypto.randomBytes(4096);
    const sha = crypto.createHash('sha256').update(bytes).digest('hex');
    const a = await store.put(Readable.from([bytes.subarray(0, 100), bytes.subarray(100)]));
    const b = await store.put(Readable.from([bytes]));
    store.release(a.blobId);
    store.release(b.blobId);
    expect(a.blobId).toBe(sha);
    expect(b.blobId).toBe(sha);
    expect(filesOnDisk()).toEqual([`${sha.slice(0, 2)}/${sha}`]);
    expect(fs.readFileSync(store.pathOf(sha))).toEqual(bytes);
  });

  it('sweeps leftovers of interrupted puts from the temporary directory', async () => {
    fs.writeFileSync(path.join(store.root, 'tmp', 'crashed-put'), 'half of something');
    const report = await store.sweep(async () => true);
    expect(report).toEqual({ removedBlobs: 0, removedTemporary: 1 });
    expect(filesOnDisk()).toEqual([]);
  });

  it('refuses ids that are not SHA-256 hex (no path tricks)', async () => {
    expect(() => store.pathOf('../../etc/passwd')).toThrow('Invalid blob id');
    await expect(store.get('..')).rejects.toThrow('Invalid blob id');
  });
});

sharedBlobStoreContract('filesystem (two stores on one root)', async ({ sweepGraceMs }) => {
  const root = tempRoot();
  const blobs = path.join(root, 'blobs');
  return {
    first: new FsBlobStore(blobs, { sweepGraceMs }),
    second: new FsBlobStore(blobs, { sweepGraceMs }),
    dispose: async () => fs.rmSync(root, { recursive: true, force: true }),
  };
});
