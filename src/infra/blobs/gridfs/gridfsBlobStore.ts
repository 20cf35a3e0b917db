import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GridFSBucket, MongoClient, ObjectId, type Collection, type Db, type MongoClientOptions } from 'mongodb';
import type {
  ByteRange,
  DeletionTicket,
  HeldUpload,
  MultipartBlobStore,
  StoreUpload,
  StoredBlob,
  SweepReport,
  UploadedPart,
} from '../../../ports/blobStore';
import type { RunningHash } from '../../../domain/contentHashes';
import { GridFsUploadParts } from './uploadParts';
import { Holds } from '../holds';
import { claimCounts, CLAIM_STALE_MS, DEFAULT_SWEEP_GRACE_MS } from '../claims';
import { holderStarted, newHolderId } from '../../../ports/holderIdentity';
import { HashingTap } from '../hashingTap';

const BLOB_ID = /^[0-9a-f]{64}$/;
const TEMPORARY_PREFIX = 'tmp/';
/** A blob a delete has taken out of place (`aside/<blob id>/<files _id>`) while it looks for claims. */
const ASIDE_PREFIX = 'aside/';

export interface GridFsBlobStoreOptions {
  /** GridFS bucket name (collections `<bucket>.files` / `<bucket>.chunks`); default `blobs`. */
  bucketName?: string;
  /** Chunk size of new blobs; default GridFS's 255 KiB. */
  chunkSizeBytes?: number;
  /**
   * A put that started longer ago than this and never finished is a leftover the sweep removes (default: the sweep's
   * grace period). Younger ones may belong to another process still uploading, and are kept.
   */
  leftoverAfterMs?: number;
  /** The sweep spares blobs stored, or stored again, less than this long ago (default one hour). */
  sweepGraceMs?: number;
  /** Called by dispose() (e.g. to close a client the store owns). */
  onDispose?: () => Promise<void>;
}

interface FilesDoc {
  _id: ObjectId;
  filename: string;
  length: number;
  uploadDate?: Date;
  /** `storedAt`: the last put of these bytes (a put that found them stored moves it). */
  metadata?: { storedAt?: Date };
}

/** A "stored, not yet referenced" claim (../claims.ts). */
interface ClaimDoc {
  _id: ObjectId;
  blobId: string;
  holder: string;
  at: Date;
}

interface PendingDoc {
  _id: ObjectId;
  started: Date;
}

const isDuplicateKey = (error: unknown) => (error as { code?: number } | null | undefined)?.code === 11000;

/** Resolves once `done()` holds (polled), or after `timeoutMs` at the latest. */
async function settled(done: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
}

/**
 * Blobs in GridFS (the driver's `GridFSBucket`), content-addressed like the filesystem store: a blob's GridFS
 * filename is the SHA-256 of its bytes, unique (a unique index on `filename`), so identical bytes are stored once.
 *
 * A put streams the bytes into a GridFS file named `tmp/<id>` while hashing them (never buffering more than a chunk),
 * then renames that file to its hash, or drops it when those bytes are already stored (or when a concurrent put of
 * the same bytes won the rename: the unique index decides). Each put first records itself in `<bucket>.pending`, so
 * that the bytes of a put cut short by a crash are found and removed by the sweep. Reads stream chunk by chunk,
 * byte ranges through `openDownloadStream`'s `start`/`end`.
 *
 * Holds and deletion tickets (see the port) live in this process, as in the filesystem store; a delete and a put of
 * the same bytes in this process are serialized so that a put never dedupes onto a blob being deleted. Across
 * processes, puts and holds record claims in `<bucket>.claims`; a delete renames the blob's files document aside
 * (`aside/<id>`) before it looks for claims of other processes, and back when it finds one (../claims.ts). The sweep
 * spares blobs whose last put is younger than the grace period.
 */
export class GridFsBlobStore implements MultipartBlobStore {
  /** GridFS takes chunks of any size (Girder's minimum chunk size is checked before they reach a store). */
  readonly minimumPartBytes = 0;
  /** Chunks of uploads in progress, in the database (./uploadParts.ts). */
  private readonly parts: GridFsUploadParts;
  private readonly bucket: GridFSBucket;
  private readonly files: Collection<FilesDoc>;
  private readonly chunks: Collection;
  private readonly pending: Collection<PendingDoc>;
  private readonly claims: Collection<ClaimDoc>;
  private readonly holds = new Holds();
  /** Names this instance's claims carry (a lease-holder style id: other processes can tell when it is gone). */
  readonly holderId = newHolderId();
  /** This instance's claims, by blob id (one per put or hold not yet released). */
  private readonly claimIds = new Map<string, ObjectId[]>();
  /** Deletes in progress, by blob id: a put of the same bytes waits for them before it looks for an existing blob. */
  private readonly deleting = new Map<string, Promise<unknown>>();
  /** Temporary files of puts in progress in this process (never swept). */
  private readonly inFlight = new Set<string>();

  private constructor(
    db: Db,
    private readonly options: GridFsBlobStoreOptions,
  ) {
    const bucketName = options.bucketName ?? 'blobs';
    this.bucket = new GridFSBucket(db, {
      bucketName,
      ...(options.chunkSizeBytes ? { chunkSizeBytes: options.chunkSizeBytes } : {}),
    });
    this.files = db.collection<FilesDoc>(`${bucketName}.files`);
    this.chunks = db.collection(`${bucketName}.chunks`);
    this.pending = db.collection<PendingDoc>(`${bucketName}.pending`);
    this.claims = db.collection<ClaimDoc>(`${bucketName}.claims`);
    this.parts = new GridFsUploadParts(this.bucket, db.collection(`${bucketName}.files`), this.chunks);
    holderStarted(this.holderId);
  }

  private get sweepGraceMs(): number {
    return this.options.sweepGraceMs ?? DEFAULT_SWEEP_GRACE_MS;
  }

  /** Opens the store in `db`, creating its indexes (GridFS's own ones are created by the driver on the first put). */
  static async open(db: Db, options: GridFsBlobStoreOptions = {}): Promise<GridFsBlobStore> {
    const store = new GridFsBlobStore(db, options);
    await store.files.createIndexes([
      { key: { filename: 1 }, name: 'filename_unique', unique: true },
      { key: { filename: 1, uploadDate: 1 }, name: 'filename_1_uploadDate_1' },
    ]);
    await store.chunks.createIndexes([{ key: { files_id: 1, n: 1 }, name: 'files_id_1_n_1', unique: true }]);
    await store.pending.createIndexes([{ key: { started: 1 }, name: 'started' }]);
    await store.claims.createIndexes([{ key: { blobId: 1 }, name: 'blobId' }]);
    return store;
  }

  /** Connects to `url` and opens the store in the URL's database; the store owns (and on dispose closes) the client. */
  static async connect(
    url: string,
    database: string,
    options: GridFsBlobStoreOptions = {},
    clientOptions: MongoClientOptions = {},
  ): Promise<GridFsBlobStore> {
    const client = await new MongoClient(url, clientOptions).connect();
    try {
      return await GridFsBlobStore.open(client.db(database), { ...options, onDispose: () => client.close() });
    } catch (error) {
      await client.close();
      throw error;
    }
  }

  async dispose(): Promise<void> {
    await this.options.onDispose?.();
  }

  private static check(blobId: string): void {
    if (!BLOB_ID.test(blobId)) throw new Error(`Invalid blob id: ${blobId}`);
  }

  async put(source: Readable): Promise<StoredBlob> {
    const tmpId = new ObjectId();
    const key = tmpId.toHexString();
    this.inFlight.add(key);
    try {
      await this.pending.insertOne({ _id: tmpId, started: new Date() });
      const tap = new HashingTap();
      const upload = this.bucket.openUploadStreamWithId(tmpId, `${TEMPORARY_PREFIX}${key}`);
      try {
        await pipeline(source, tap, upload);
      } catch (error) {
        // A chunk write may still be in flight after the pipeline gave up: let it land, then remove everything.
        await settled(() => upload.state.outstandingRequests === 0);
        await this.removeTemporary(tmpId);
        throw error;
      }
      const { sha256: blobId, sha512, size } = tap.digests();
      // Held and claimed before looking for the bytes under their id: a concurrent delete of the same id, in this
      // process or another, now refuses (or puts the blob back).
      try {
        await this.hold(blobId);
      } catch (error) {
        await this.removeTemporary(tmpId);
        throw error;
      }
      try {
        await this.deleting.get(blobId);
        const stored = await this.files.updateOne({ filename: blobId }, { $set: { 'metadata.storedAt': new Date() } });
        if (stored.matchedCount === 1) {
          await this.removeTemporary(tmpId);
        } else {
          try {
            await this.bucket.rename(tmpId, blobId);
            await this.pending.deleteOne({ _id: tmpId });
          } catch (error) {
            // A concurrent put of the same bytes renamed its file first: keep that one.
            if (!isDuplicateKey(error)) throw error;
            await this.removeTemporary(tmpId);
          }
        }
      } catch (error) {
        this.release(blobId);
        await this.removeTemporary(tmpId);
        throw error;
      }
      return { blobId, size, sha512 };
    } finally {
      this.inFlight.delete(key);
    }
  }

  async beginUpload(): Promise<StoreUpload> {
    return Promise.resolve(this.parts.begin());
  }

  async uploadPart(
    upload: StoreUpload,
    number: number,
    source: Readable,
    length: number,
    hasher?: RunningHash,
  ): Promise<UploadedPart> {
    return this.parts.put(upload, number, source, length, hasher);
  }

  /** Stores the parts' bytes as a blob (held, as `put` holds), hashed as they are read back, then drops the parts. */
  async finishUpload(upload: StoreUpload, parts: UploadedPart[]): Promise<StoredBlob> {
    const blob = await this.put(this.parts.read(parts));
    await this.parts.drop(upload);
    return blob;
  }

  async abortUpload(upload: StoreUpload): Promise<void> {
    await this.parts.drop(upload);
  }

  heldUploads(): AsyncGenerator<HeldUpload> {
    return this.parts.held();
  }

  /** Removes a temporary file (its files document, its chunks) and its pending record. */
  private async removeTemporary(id: ObjectId): Promise<void> {
    await this.files.deleteOne({ _id: id, filename: { $regex: `^${TEMPORARY_PREFIX}` } });
    await this.chunks.deleteMany({ files_id: id });
    await this.pending.deleteOne({ _id: id });
  }

  async hold(blobId: string): Promise<void> {
    GridFsBlobStore.check(blobId);
    this.holds.hold(blobId);
    const claim: ClaimDoc = { _id: new ObjectId(), blobId, holder: this.holderId, at: new Date() };
    this.claimIds.set(blobId, [...(this.claimIds.get(blobId) ?? []), claim._id]);
    try {
      await this.claims.insertOne(claim);
    } catch (error) {
      this.release(blobId);
      throw error;
    }
  }

  release(blobId: string): void {
    const ids = this.claimIds.get(blobId);
    const id = ids?.pop();
    if (ids?.length === 0) this.claimIds.delete(blobId);
    this.holds.release(blobId);
    // In the background: a claim left behind only keeps the blob until this process is gone (or the claim is stale).
    if (id) void this.claims.deleteOne({ _id: id }).catch(() => undefined);
  }

  /** Whether another live process claims the blob (a put or hold of it not yet released). */
  private async claimedElsewhere(blobId: string): Promise<boolean> {
    const now = Date.now();
    const recent = { blobId, holder: { $ne: this.holderId }, at: { $gt: new Date(now - CLAIM_STALE_MS) } };
    for await (const claim of this.claims.find(recent))
      if (claimCounts(claim.holder, claim.at.getTime(), this.holderId, now)) return true;
    return false;
  }

  async get(blobId: string, range?: ByteRange): Promise<Readable> {
    GridFsBlobStore.check(blobId);
    const file = await this.files.findOne({ filename: blobId }, { projection: { _id: 1, length: 1 } });
    if (!file) throw Object.assign(new Error(`Blob not found: ${blobId}`), { code: 'ENOENT' });
    if (range && range.end <= range.start) return Readable.from([]);
    return this.bucket.openDownloadStream(file._id, range ? { start: range.start, end: range.end } : {});
  }

  async exists(blobId: string): Promise<boolean> {
    GridFsBlobStore.check(blobId);
    return (await this.files.findOne({ filename: blobId }, { projection: { _id: 1 } })) !== null;
  }

  deletionTicket(): DeletionTicket {
    return this.holds.ticket();
  }

  async delete(blobId: string, ticket?: DeletionTicket): Promise<boolean> {
    GridFsBlobStore.check(blobId);
    if (!this.holds.mayDelete(blobId, ticket)) return false;
    // Registered synchronously after the checks: a put of these bytes from now on waits for this delete to finish.
    const deletion = this.deleteFile(blobId);
    const marker = deletion.catch(() => undefined);
    this.deleting.set(blobId, marker);
    try {
      return await deletion;
    } finally {
      if (this.deleting.get(blobId) === marker) this.deleting.delete(blobId);
    }
  }

  private async deleteFile(blobId: string): Promise<boolean> {
    const file = await this.files.findOne({ filename: blobId }, { projection: { _id: 1 } });
    if (!file) return false;
    // Aside first, then the claims: another process's put claims first and looks second (../claims.ts).
    const aside = await this.files.updateOne(
      { _id: file._id, filename: blobId },
      { $set: { filename: `${ASIDE_PREFIX}${blobId}/${file._id.toHexString()}` } },
    );
    if (aside.matchedCount !== 1) return false;
    if (await this.claimedElsewhere(blobId).catch(() => true)) {
      await this.putBack(file._id, blobId);
      return false;
    }
    await this.files.deleteOne({ _id: file._id });
    await this.chunks.deleteMany({ files_id: file._id });
    return true;
  }

  /** Renames a blob set aside back to its id; drops it when another put stored the same bytes meanwhile. */
  private async putBack(id: ObjectId, blobId: string): Promise<void> {
    try {
      await this.files.updateOne({ _id: id }, { $set: { filename: blobId } });
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      await this.files.deleteOne({ _id: id });
      await this.chunks.deleteMany({ files_id: id });
    }
  }

  async sweep(isReferenced: (blobId: string) => Promise<boolean>): Promise<SweepReport> {
    let removedTemporary = 0;
    const before = new Date(Date.now() - (this.options.leftoverAfterMs ?? this.sweepGraceMs));
    for await (const pending of this.pending.find({ started: { $lt: before } })) {
      if (this.inFlight.has(pending._id.toHexString())) continue;
      const file = await this.files.findOne({ _id: pending._id }, { projection: { filename: 1 } });
      if (file && BLOB_ID.test(file.filename)) {
        // Renamed into place just before a crash: a real blob, only its record was left.
        await this.pending.deleteOne({ _id: pending._id });
        continue;
      }
      await this.removeTemporary(pending._id);
      removedTemporary += 1;
    }
    // Claims whose process is gone, or that are stale, keep nothing any more.
    for await (const claim of this.claims.find({ holder: { $ne: this.holderId } })) {
      if (!claimCounts(claim.holder, claim.at.getTime(), this.holderId))
        await this.claims.deleteOne({ _id: claim._id });
    }
    // Blobs a delete cut short by a crash left aside: back in place when something still uses them, else gone.
    for await (const file of this.files.find(
      { filename: { $regex: `^${ASIDE_PREFIX}` } },
      { projection: { _id: 1, filename: 1 } },
    )) {
      const blobId = file.filename.slice(ASIDE_PREFIX.length).split('/')[0];
      if (BLOB_ID.test(blobId) && ((await this.claimedElsewhere(blobId)) || (await isReferenced(blobId)))) {
        await this.putBack(file._id, blobId);
      } else {
        await this.files.deleteOne({ _id: file._id });
        await this.chunks.deleteMany({ files_id: file._id });
      }
    }
    let removedBlobs = 0;
    const young = new Date(Date.now() - this.sweepGraceMs);
    const projection = { filename: 1, uploadDate: 1, 'metadata.storedAt': 1 };
    for await (const file of this.files.find({ filename: { $regex: '^[0-9a-f]{64}$' } }, { projection })) {
      const storedAt = file.metadata?.storedAt ?? file.uploadDate;
      if (this.sweepGraceMs > 0 && storedAt && storedAt > young) continue;
      const ticket = this.deletionTicket();
      if (await isReferenced(file.filename)) continue;
      if (await this.delete(file.filename, ticket)) removedBlobs += 1;
    }
    return { removedBlobs, removedTemporary };
  }
}
