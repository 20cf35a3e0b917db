import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ObjectId, type Collection, type GridFSBucket } from 'mongodb';
import type { HeldUpload, StoreUpload, UploadedPart } from '../../../ports/blobStore';
import type { RunningHash } from '../../../domain/contentHashes';
import { countedPart } from '../countedPart';

/** Files of uploads in progress: `part/<upload id>/<part number>/<attempt>`. */
const PART_PREFIX = 'part/';

/** An upload's id: an ObjectId's hex (so a name made of it is a literal in a regex). */
const UPLOAD_ID = /^[0-9a-f]{24}$/;

/** Where an upload's parts are named. */
function prefixOf(uploadId: string): string {
  if (!UPLOAD_ID.test(uploadId)) throw new Error(`Invalid GridFS upload id: ${uploadId}`);
  return `${PART_PREFIX}${uploadId}/`;
}

/**
 * The chunks of uploads in progress, in GridFS (issue 31): each chunk is stored as its own GridFS file beside the
 * blobs, named after its upload and part number, and acknowledged with its file id (the part's "etag", recorded with
 * the upload's events). So nothing of an upload lives on a host's disk, and the next chunk may reach any process that
 * shares the database. A chunk cut short leaves a file no event names; finishing or aborting the upload removes every
 * file of it, named or not. Completing streams the named parts, in order, through the store's `put` (which hashes and
 * dedupes them like any blob), so the bytes are read back once.
 */
export class GridFsUploadParts {
  constructor(
    private readonly bucket: GridFSBucket,
    private readonly files: Collection,
    private readonly chunks: Collection,
  ) {}

  begin(): StoreUpload {
    const uploadId = new ObjectId().toHexString();
    return { key: prefixOf(uploadId), uploadId };
  }

  /** Stores exactly `length` bytes as part `number`; a failed or short chunk leaves nothing. */
  async put(
    upload: StoreUpload,
    number: number,
    source: Readable,
    length: number,
    hasher?: RunningHash,
  ): Promise<UploadedPart> {
    const id = new ObjectId();
    const counted = countedPart(length, hasher);
    const stream = this.bucket.openUploadStreamWithId(id, `${prefixOf(upload.uploadId)}${number}/${id.toHexString()}`);
    try {
      await pipeline(source, counted.stream, stream);
      if (counted.seen() !== length) throw new Error(`Chunk ended after ${counted.seen()} of ${length} bytes.`);
    } catch (error) {
      await this.remove(id);
      throw error;
    }
    return { number, etag: id.toHexString() };
  }

  /** The named parts' bytes, in order. */
  read(parts: UploadedPart[]): Readable {
    const ordered = [...parts].sort((a, b) => a.number - b.number);
    const out = new PassThrough();
    void (async () => {
      for (const part of ordered)
        await pipeline(this.bucket.openDownloadStream(new ObjectId(part.etag)), out, { end: false });
      out.end();
    })().catch((error: unknown) => out.destroy(error as Error));
    return out;
  }

  /** Removes every part of the upload, the parts its events name and any a failed chunk left. */
  async drop(upload: StoreUpload): Promise<void> {
    const prefix = prefixOf(upload.uploadId);
    for await (const file of this.files.find({ filename: { $regex: `^${prefix}` } }, { projection: { _id: 1 } }))
      await this.remove(file._id);
  }

  /**
   * Every upload with parts here, by its parts' names: when its first and newest parts were stored and their bytes. A
   * part being written has no files document until its last byte is in, so only whole parts count.
   */
  async *held(): AsyncGenerator<HeldUpload> {
    const uploads = new Map<string, HeldUpload & { updated: number; size: number }>();
    const parts = this.files.find<{ filename: string; length: number; uploadDate: Date }>(
      { filename: { $regex: `^${PART_PREFIX}` } },
      { projection: { filename: 1, length: 1, uploadDate: 1 } },
    );
    for await (const part of parts) {
      const uploadId = part.filename.slice(PART_PREFIX.length).split('/')[0];
      if (!UPLOAD_ID.test(uploadId)) continue;
      const at = part.uploadDate.getTime();
      const known = uploads.get(uploadId);
      if (known) {
        known.created = Math.min(known.created, at);
        known.updated = Math.max(known.updated, at);
        known.size += part.length;
      } else uploads.set(uploadId, { key: prefixOf(uploadId), uploadId, created: at, updated: at, size: part.length });
    }
    yield* uploads.values();
  }

  private async remove(id: ObjectId): Promise<void> {
    await this.files.deleteOne({ _id: id });
    await this.chunks.deleteMany({ files_id: id });
  }
}
