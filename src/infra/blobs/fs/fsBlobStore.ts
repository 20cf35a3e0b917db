import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore, ByteRange, DeletionTicket, StoredBlob, SweepReport } from '../../../ports/blobStore';
import { Holds } from '../holds';

const BLOB_ID = /^[0-9a-f]{64}$/;

/** fsyncs a file or a directory (a directory fsync makes a rename in it durable; not supported everywhere). */
async function fsyncPath(target: string, directory = false): Promise<void> {
  let handle: fs.promises.FileHandle | undefined;
  try {
    handle = await fs.promises.open(target, 'r');
    await handle.sync();
  } catch (error) {
    if (!directory) throw error;
  } finally {
    await handle?.close();
  }
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException)?.code === 'ENOENT';

/**
 * Blobs on the local filesystem under `root` (DATA_DIR/blobs): `<root>/<sha[0:2]>/<sha>`. A put streams into
 * `<root>/tmp/<uuid>` while hashing, fsyncs, then renames into place (or drops the temporary file when those bytes are
 * already stored), and fsyncs the directory, so an acknowledged blob survives a crash and a half-written one never
 * appears under its id. Holds and deletion tickets (see the port) live in this process: this adapter serves the
 * single-process embedded deployment.
 */
export class FsBlobStore implements BlobStore {
  private readonly tmpDir: string;
  private readonly holds = new Holds();

  constructor(readonly root: string) {
    this.tmpDir = path.join(root, 'tmp');
    fs.mkdirSync(this.tmpDir, { recursive: true });
  }

  /** Where a blob's bytes live (exposed for tests and tooling). */
  pathOf(blobId: string): string {
    if (!BLOB_ID.test(blobId)) throw new Error(`Invalid blob id: ${blobId}`);
    return path.join(this.root, blobId.slice(0, 2), blobId);
  }

  async put(source: Readable): Promise<StoredBlob> {
    const tmp = path.join(this.tmpDir, crypto.randomUUID());
    const hash = crypto.createHash('sha256');
    let size = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash.update(chunk);
        size += chunk.length;
        callback(null, chunk);
      },
    });
    try {
      await pipeline(source, tap, fs.createWriteStream(tmp, { flags: 'wx' }));
      await fsyncPath(tmp);
    } catch (error) {
      await fs.promises.rm(tmp, { force: true });
      throw error;
    }
    const blobId = hash.digest('hex');
    // Held before the bytes appear under their id: a concurrent delete of the same id now refuses.
    this.hold(blobId);
    try {
      const target = this.pathOf(blobId);
      if (await this.exists(blobId)) {
        await fs.promises.rm(tmp, { force: true });
      } else {
        await fs.promises.mkdir(path.dirname(target), { recursive: true });
        await fs.promises.rename(tmp, target);
        await fsyncPath(path.dirname(target), true);
      }
    } catch (error) {
      this.release(blobId);
      await fs.promises.rm(tmp, { force: true });
      throw error;
    }
    return { blobId, size };
  }

  hold(blobId: string): void {
    this.holds.hold(blobId);
  }

  release(blobId: string): void {
    this.holds.release(blobId);
  }

  async get(blobId: string, range?: ByteRange): Promise<Readable> {
    const file = this.pathOf(blobId);
    await fs.promises.access(file, fs.constants.R_OK);
    if (range && range.end <= range.start) return Readable.from([]);
    return fs.createReadStream(file, range ? { start: range.start, end: range.end - 1 } : {});
  }

  async exists(blobId: string): Promise<boolean> {
    try {
      await fs.promises.access(this.pathOf(blobId));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  deletionTicket(): DeletionTicket {
    return this.holds.ticket();
  }

  async delete(blobId: string, ticket?: DeletionTicket): Promise<boolean> {
    const file = this.pathOf(blobId);
    if (!this.holds.mayDelete(blobId, ticket)) return false;
    // Synchronous from the checks above to the unlink: no put or hold of this id can slip in between.
    try {
      fs.unlinkSync(file);
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
    return true;
  }

  async sweep(isReferenced: (blobId: string) => Promise<boolean>): Promise<SweepReport> {
    let removedTemporary = 0;
    for (const name of await fs.promises.readdir(this.tmpDir)) {
      await fs.promises.rm(path.join(this.tmpDir, name), { force: true, recursive: true });
      removedTemporary += 1;
    }
    let removedBlobs = 0;
    for (const prefix of await fs.promises.readdir(this.root)) {
      if (!/^[0-9a-f]{2}$/.test(prefix)) continue;
      for (const name of await fs.promises.readdir(path.join(this.root, prefix))) {
        if (!BLOB_ID.test(name) || name.slice(0, 2) !== prefix) continue;
        const ticket = this.deletionTicket();
        if (await isReferenced(name)) continue;
        if (await this.delete(name, ticket)) removedBlobs += 1;
      }
    }
    return { removedBlobs, removedTemporary };
  }
}
