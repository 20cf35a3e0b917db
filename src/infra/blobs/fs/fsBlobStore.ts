import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore, ByteRange, DeletionTicket, StoredBlob, SweepReport } from '../../../ports/blobStore';
import type { ContentHashes } from '../../../domain/contentHashes';
import { Holds } from '../holds';
import { claimCounts, DEFAULT_SWEEP_GRACE_MS } from '../claims';
import { holderStarted, newHolderId } from '../../../ports/holderIdentity';
import { HashingTap } from '../hashingTap';

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

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException | null | undefined)?.code === 'ENOENT';

/** A claim file: `claims/<blobId>~<holder id>~<n>` (see ../claims.ts). */
const CLAIM = /^([0-9a-f]{64})~(.+)~(\d+)$/;

/**
 * Bytes per read of a blob being streamed out (Node's default is 64 KiB). Every chunk costs a trip through the stream
 * machinery, and through an HTTP response a `writev` and chunked-encoding framing of its own: a zip download of 34 MiB
 * used a third less server CPU with 1 MiB chunks. At most this much is buffered per stream being read.
 */
const READ_CHUNK = 1024 * 1024;

export interface FsBlobStoreOptions {
  /** The sweep spares blobs stored, or stored again, less than this long ago, and temporary files as young. */
  sweepGraceMs?: number;
}

/**
 * Blobs on the local filesystem under `root` (DATA_DIR/blobs): `<root>/<sha[0:2]>/<sha>`. A put streams into
 * `<root>/tmp/<uuid>` while hashing (SHA-256 and SHA-512 in the same pass), fsyncs, then renames into place (or drops the temporary file when those bytes are
 * already stored, touching the stored blob's mtime), and fsyncs the directory, so an acknowledged blob survives a
 * crash and a half-written one never appears under its id.
 *
 * Several processes may share the root (several services on one DATA_DIR): holds and deletion tickets (see the port)
 * work within a process, and "stored, not yet referenced" claims under `<root>/claims` across processes (../claims.ts).
 * A delete moves the blob to `<root>/trash` before it looks for claims, and back when it finds one. The sweep spares
 * blobs and temporary files younger than the grace period.
 */
export class FsBlobStore implements BlobStore {
  private readonly tmpDir: string;
  private readonly claimsDir: string;
  private readonly trashDir: string;
  private readonly holds = new Holds();
  /** Names this instance's claims carry (a lease-holder style id: other processes can tell when it is gone). */
  readonly holderId = newHolderId();
  /** This instance's claim files, by blob id (one per put or hold not yet released). */
  private readonly claims = new Map<string, string[]>();
  private claimCounter = 0;
  private readonly sweepGraceMs: number;

  constructor(
    readonly root: string,
    options: FsBlobStoreOptions = {},
  ) {
    this.tmpDir = path.join(root, 'tmp');
    this.claimsDir = path.join(root, 'claims');
    this.trashDir = path.join(root, 'trash');
    for (const dir of [this.tmpDir, this.claimsDir, this.trashDir]) fs.mkdirSync(dir, { recursive: true });
    this.sweepGraceMs = options.sweepGraceMs ?? DEFAULT_SWEEP_GRACE_MS;
    holderStarted(this.holderId);
  }

  /** Where a blob's bytes live (exposed for tests and tooling). */
  pathOf(blobId: string): string {
    if (!BLOB_ID.test(blobId)) throw new Error(`Invalid blob id: ${blobId}`);
    return path.join(this.root, blobId.slice(0, 2), blobId);
  }

  async put(source: Readable): Promise<StoredBlob> {
    const tmp = path.join(this.tmpDir, crypto.randomUUID());
    const tap = new HashingTap();
    try {
      await pipeline(source, tap, fs.createWriteStream(tmp, { flags: 'wx' }));
      await fsyncPath(tmp);
    } catch (error) {
      await fs.promises.rm(tmp, { force: true });
      throw error;
    }
    const { sha256: blobId, sha512, size } = tap.digests();
    // Held and claimed before looking for the bytes under their id: a concurrent delete of the same id, in this
    // process or another, now refuses (or puts the blob back).
    this.holdNow(blobId);
    try {
      const target = this.pathOf(blobId);
      if (this.touch(target)) {
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
    return { blobId, size, sha512 };
  }

  /**
   * A finished upload's file, hashed as it was written, linked in under its id: no byte read or copied (a hard link;
   * the file was fsynced when its last chunk was written, the directory is fsynced here). The caller removes its file
   * once done; later writes to it never reach the blob (PartialUploads writes a copy of a linked file). Null when the
   * file is on another filesystem than the store.
   */
  async linkFile(file: string, hashes: ContentHashes): Promise<StoredBlob | null> {
    const { sha256: blobId, sha512, size } = hashes;
    this.holdNow(blobId);
    try {
      const target = this.pathOf(blobId);
      if (!this.touch(target)) {
        await fs.promises.mkdir(path.dirname(target), { recursive: true });
        try {
          await fs.promises.link(file, target);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          // EEXIST: stored meanwhile by another process, the same bytes.
          if (code === 'EXDEV' || code === 'EPERM') {
            this.release(blobId);
            return null;
          }
          if (code !== 'EEXIST') throw error;
        }
        await fsyncPath(path.dirname(target), true);
      }
    } catch (error) {
      this.release(blobId);
      throw error;
    }
    return { blobId, size, sha512 };
  }

  async hold(blobId: string): Promise<void> {
    this.holdNow(blobId);
  }

  /** Holds in process and claims across processes, synchronously. */
  private holdNow(blobId: string): void {
    this.pathOf(blobId); // refuses ids that are not SHA-256 hex
    const name = `${blobId}~${this.holderId}~${++this.claimCounter}`;
    fs.writeFileSync(path.join(this.claimsDir, name), '', { flag: 'wx' });
    this.claims.set(blobId, [...(this.claims.get(blobId) ?? []), name]);
    this.holds.hold(blobId);
  }

  release(blobId: string): void {
    const names = this.claims.get(blobId);
    const name = names?.pop();
    if (names?.length === 0) this.claims.delete(blobId);
    this.holds.release(blobId);
    if (name) fs.rmSync(path.join(this.claimsDir, name), { force: true });
  }

  /** Moves a stored blob's mtime to now (the sweep's grace period starts again); false when it is not stored. */
  private touch(file: string): boolean {
    const now = new Date();
    try {
      fs.utimesSync(file, now, now);
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  /** Whether another live process claims the blob (a put or hold of it not yet released). */
  private claimedElsewhere(blobId: string): boolean {
    const now = Date.now();
    for (const name of fs.readdirSync(this.claimsDir)) {
      const match = CLAIM.exec(name);
      if (match?.[1] !== blobId) continue;
      let at: number;
      try {
        at = fs.statSync(path.join(this.claimsDir, name)).mtimeMs;
      } catch (error) {
        if (isMissing(error)) continue;
        throw error;
      }
      if (claimCounts(match[2], at, this.holderId, now)) return true;
    }
    return false;
  }

  async get(blobId: string, range?: ByteRange): Promise<Readable> {
    // Opened here (not checked, then opened by the stream): a missing blob rejects, and one call to the thread pool
    // fewer per blob counts in a zip of many small files.
    const handle = await fs.promises.open(this.pathOf(blobId), 'r');
    if (range && range.end <= range.start) {
      await handle.close();
      return Readable.from([]);
    }
    return handle.createReadStream({
      highWaterMark: READ_CHUNK,
      ...(range ? { start: range.start, end: range.end - 1 } : {}),
    });
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
    // Synchronous from the checks above to the unlink: no put or hold of this id in this process can slip in
    // between. Another process's put claims first and looks second, so the blob goes aside before the claims are read.
    const aside = path.join(this.trashDir, `${blobId}~${crypto.randomUUID()}`);
    try {
      fs.renameSync(file, aside);
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
    let claimed = true;
    try {
      claimed = this.claimedElsewhere(blobId);
    } finally {
      // Put back (over an identical copy another process may have stored meanwhile), or dropped.
      if (claimed) fs.renameSync(aside, file);
      else fs.unlinkSync(aside);
    }
    return !claimed;
  }

  /**
   * Temporary files, blobs and claims: young temporary files and blobs (within the grace period) are spared, since
   * another process sharing the root may be writing them, or may have stored them for a file event it has not had
   * projected yet. Claims that no longer count (their process is gone) are removed, and so are blobs a delete cut
   * short by a crash left aside (put back when something still uses them).
   */
  async sweep(isReferenced: (blobId: string) => Promise<boolean>): Promise<SweepReport> {
    const youngSince = Date.now() - this.sweepGraceMs;
    const isYoung = async (file: string) =>
      this.sweepGraceMs > 0 && ((await fs.promises.stat(file).catch(() => null))?.mtimeMs ?? 0) > youngSince;
    let removedTemporary = 0;
    for (const name of await fs.promises.readdir(this.tmpDir)) {
      const file = path.join(this.tmpDir, name);
      if (await isYoung(file)) continue;
      await fs.promises.rm(file, { force: true, recursive: true });
      removedTemporary += 1;
    }
    for (const name of await fs.promises.readdir(this.claimsDir)) {
      const match = CLAIM.exec(name);
      const file = path.join(this.claimsDir, name);
      const at = (await fs.promises.stat(file).catch(() => null))?.mtimeMs;
      if (at === undefined || (match && (match[2] === this.holderId || claimCounts(match[2], at, this.holderId))))
        continue;
      await fs.promises.rm(file, { force: true });
    }
    for (const name of await fs.promises.readdir(this.trashDir)) {
      const blobId = name.split('~')[0];
      const aside = path.join(this.trashDir, name);
      if (
        BLOB_ID.test(blobId) &&
        !(await this.exists(blobId)) &&
        (this.claimedElsewhere(blobId) || (await isReferenced(blobId)))
      ) {
        await fs.promises.mkdir(path.dirname(this.pathOf(blobId)), { recursive: true });
        await fs.promises.rename(aside, this.pathOf(blobId));
      } else {
        await fs.promises.rm(aside, { force: true, recursive: true });
      }
    }
    let removedBlobs = 0;
    for (const prefix of await fs.promises.readdir(this.root)) {
      if (!/^[0-9a-f]{2}$/.test(prefix)) continue;
      for (const name of await fs.promises.readdir(path.join(this.root, prefix))) {
        if (!BLOB_ID.test(name) || name.slice(0, 2) !== prefix) continue;
        if (await isYoung(path.join(this.root, prefix, name))) continue;
        const ticket = this.deletionTicket();
        if (await isReferenced(name)) continue;
        if (await this.delete(name, ticket)) removedBlobs += 1;
      }
    }
    return { removedBlobs, removedTemporary };
  }
}
