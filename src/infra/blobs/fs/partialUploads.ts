import fs from 'node:fs';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import { TooManyBytesError, type PartialUploadStore } from '../../../ports/blobStore';
import type { RunningHash } from '../../../domain/contentHashes';

const UPLOAD_ID = /^[0-9a-f]{24}$/;

/** Bytes gathered before a write to the file (a socket delivers 64 KiB at a time). */
const WRITE_BATCH = 1024 * 1024;

/**
 * A chunk is durable before it is acknowledged (one fsync at its end). Left to itself, the kernel would write none of
 * a 64 MiB chunk to disk before that fsync (it starts writing back at a tenth of memory dirty), so the disk would sit
 * idle while the chunk arrives and the client wait while it writes: every this many bytes received, a sync in the
 * background (one at a time) sends what is written so far, and the disk works while the rest of the chunk arrives.
 */
const SYNC_AHEAD = 8 * 1024 * 1024;

/**
 * A finished upload's file is linked into the blob store (FsBlobStore.linkFile), and a later write to it (the last
 * chunk sent again after its commit failed, the startup sweep cutting it back) must not change the blob: the file is
 * first replaced by a copy of its own. Missing is fine (a new upload).
 */
async function unlinkFromBlobs(file: string): Promise<void> {
  const stat = await fs.promises.stat(file).catch(() => null);
  if (!stat || stat.nlink <= 1) return;
  const copy = `${file}.copy`;
  await fs.promises.copyFile(file, copy);
  await fs.promises.rename(copy, file);
}

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
   * Streams `source` into the upload's file at `offset`, feeding `hasher` as the bytes pass; fails with
   * TooManyBytesError as soon as more than `maxBytes` arrive. Resolves with the number of bytes written once they are
   * durable. On failure the file is cut back to `offset`.
   */
  async write(
    uploadId: string,
    offset: number,
    source: Readable,
    maxBytes: number,
    hasher?: RunningHash,
  ): Promise<number> {
    const file = this.pathOf(uploadId);
    await unlinkFromBlobs(file);
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
    // A second handle, to sync through while the write stream writes: see SYNC_AHEAD.
    const syncing = await fs.promises.open(file, 'r+');
    let syncedThrough = 0;
    // An object, so that the checks after the pipeline are not narrowed away (the transform sets it).
    const sync: { inFlight: Promise<void> | null } = { inFlight: null };
    const counted = new Transform({
      // Bytes are gathered up to this much before they are written (fewer, larger writes: the fs stream writes what
      // is buffered with one writev).
      writableHighWaterMark: WRITE_BATCH,
      readableHighWaterMark: WRITE_BATCH,
      transform(chunk: Buffer, _encoding, callback) {
        written += chunk.length;
        if (written > maxBytes) {
          callback(new TooManyBytesError());
          return;
        }
        if (written - syncedThrough >= SYNC_AHEAD && !sync.inFlight) {
          syncedThrough = written;
          // Not waited for (the last sync is): a failure here shows again in that one.
          sync.inFlight = syncing
            .datasync()
            .catch(() => undefined)
            .finally(() => (sync.inFlight = null));
        }
        const waiting = hasher?.update(chunk);
        if (!waiting) callback(null, chunk);
        else waiting.then(() => callback(null, chunk), callback);
      },
    });
    try {
      await pipeline(
        source,
        counted,
        fs.createWriteStream(file, { flags: 'r+', start: offset, highWaterMark: WRITE_BATCH }),
      );
      await sync.inFlight;
      await syncing.sync();
      return written;
    } catch (error) {
      await sync.inFlight;
      await fs.promises.truncate(file, offset).catch(() => undefined);
      throw error;
    } finally {
      await syncing.close();
    }
  }

  /** Cuts the file back to `length` bytes (the startup sweep: what an interrupted chunk left behind goes). */
  async truncate(uploadId: string, length: number): Promise<void> {
    try {
      await unlinkFromBlobs(this.pathOf(uploadId));
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

  async modifiedAt(name: string): Promise<number | null> {
    const entry = this.entryPath(name);
    const stat = entry ? await fs.promises.stat(entry).catch(() => null) : null;
    return stat ? stat.mtimeMs : null;
  }

  async removeStray(name: string): Promise<void> {
    const entry = UPLOAD_ID.test(name) ? null : this.entryPath(name);
    if (entry) await fs.promises.rm(entry, { force: true, recursive: true });
  }

  /** Where an entry `list` gave lies; null for a name that would reach outside the directory (or be it). */
  private entryPath(name: string): string | null {
    if (name.includes('/') || name === '..' || name === '.' || name === '') return null;
    return path.join(this.dir, name);
  }
}
