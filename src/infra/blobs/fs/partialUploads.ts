import fs from 'node:fs';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import { TooManyBytesError, type PartialUploadStore } from '../../../ports/blobStore';

const UPLOAD_ID = /^[0-9a-f]{24}$/;

/**
 * The bytes of chunked uploads in progress, one file per upload: DATA_DIR/uploads/<uploadId>. Only what the upload's
 * record says was received counts: a chunk is written at that offset (after cutting off anything beyond it, the
 * leftovers of an interrupted chunk) and fsynced before the record advances; a chunk that fails (client disconnect,
 * too many bytes) is cut off again at once.
 */
export class PartialUploads implements PartialUploadStore {
  constructor(readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true });
  }

  pathOf(uploadId: string): string {
    if (!UPLOAD_ID.test(uploadId)) throw new Error(`Invalid upload id: ${uploadId}`);
    return path.join(this.dir, uploadId);
  }

  /**
   * Streams `source` into the upload's file at `offset`; fails with TooManyBytesError as soon as more than `maxBytes`
   * arrive. Resolves with the number of bytes written once they are durable. On failure the file is cut back to
   * `offset`.
   */
  async write(uploadId: string, offset: number, source: Readable, maxBytes: number): Promise<number> {
    const file = this.pathOf(uploadId);
    const handle = await fs.promises.open(file, fs.constants.O_WRONLY | fs.constants.O_CREAT);
    try {
      const { size } = await handle.stat();
      if (size < offset)
        throw new Error(
          `Partial upload ${uploadId} holds ${size} bytes, fewer than the ${offset} recorded as received.`,
        );
      if (size > offset) await handle.truncate(offset);
    } finally {
      await handle.close();
    }
    let written = 0;
    const limiter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        written += chunk.length;
        if (written > maxBytes) callback(new TooManyBytesError());
        else callback(null, chunk);
      },
    });
    try {
      await pipeline(source, limiter, fs.createWriteStream(file, { flags: 'r+', start: offset }));
      const synced = await fs.promises.open(file, 'r+');
      try {
        await synced.sync();
      } finally {
        await synced.close();
      }
      return written;
    } catch (error) {
      await fs.promises.truncate(file, offset).catch(() => undefined);
      throw error;
    }
  }

  /** The bytes received so far. */
  read(uploadId: string): Readable {
    return fs.createReadStream(this.pathOf(uploadId));
  }

  /** Cuts the file back to `length` bytes (the startup sweep: what an interrupted chunk left behind goes). */
  async truncate(uploadId: string, length: number): Promise<void> {
    try {
      await fs.promises.truncate(this.pathOf(uploadId), length);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }

  async remove(uploadId: string): Promise<void> {
    await fs.promises.rm(this.pathOf(uploadId), { force: true });
  }

  /** Every upload id that has a file here; other entries are returned as `stray` (safe to remove). */
  async list(): Promise<{ uploads: string[]; stray: string[] }> {
    const uploads: string[] = [];
    const stray: string[] = [];
    for (const name of await fs.promises.readdir(this.dir)) (UPLOAD_ID.test(name) ? uploads : stray).push(name);
    return { uploads, stray };
  }

  async removeStray(name: string): Promise<void> {
    if (UPLOAD_ID.test(name) || name.includes('/') || name === '..' || name === '.') return;
    await fs.promises.rm(path.join(this.dir, name), { force: true, recursive: true });
  }
}
