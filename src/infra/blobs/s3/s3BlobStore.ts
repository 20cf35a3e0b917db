import crypto from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import {
  type ByteRange,
  type DeletionTicket,
  type MultipartBlobStore,
  type StoreUpload,
  type StoredBlob,
  type SweepReport,
  type UploadedPart,
  type ClientRequest,
  type DirectBlobStore,
  type DirectUploadStart,
  type ImportListingPage,
  type HeldUpload,
} from '../../../ports/blobStore';
import { importedPathOf, objectKeyOf, objectLocalId } from '../../../domain/assetstoreBlobRef';
import { presignDownload, presignPart, presignUploadStart } from './s3Presign';
import { type ContentHashes, type RunningHash } from '../../../domain/contentHashes';
import type { S3Settings } from '../../../domain/assetstore';
import { Holds } from '../holds';
import { countedPart } from '../countedPart';
import { isNotFound, keyPrefix, s3ClientFor, type Bucket } from './s3Client';
import { copyInBucket } from './s3Copy';
import { importListing, keysUnder, multipartUploadsUnder } from './s3Listing';
import { checkDirectObject, completeDirectUpload } from './s3DirectCompletion';
import { DEFAULT_SWEEP_GRACE_MS } from '../claims';
import { HashingTap, ThreadedHasher } from '../hashingTap';

/**
 * Bytes per part of a multipart upload: S3's minimum part size is 5 MiB (the last part excepted); one part is
 * buffered at a time while the bytes stream in.
 */
export const S3_PART_BYTES = 8 * 1024 * 1024;
/** S3's smallest part but the last (Girder's minimum chunk size). */
const S3_MINIMUM_PART_BYTES = 5 * 1024 * 1024;
/** Girder 3.2's CHUNK_LEN: direct uploads larger than this go in parts of this size. */
const S3_DIRECT_CHUNK_BYTES = 32 * 1024 * 1024;

export interface S3BlobStoreOptions {
  sweepGraceMs?: number;
  /** The store's `redirect` setting: clients may talk to the bucket themselves (direct uploads, redirects). */
  direct?: boolean;
  /**
   * The store's `readOnly` setting: the bucket is another application's to write (an import of its data), so what
   * lies under the store's keys may be its own, not leftovers of this service's: `heldUploads` lists none and `sweep`
   * removes nothing (that application may well name keys `uploads/…` or `tmp/…` too).
   */
  readOnly?: boolean;
}

/**
 * Blobs in an S3 bucket (AWS, MinIO, Ceph…), content-addressed like the other stores: `<prefix>/blobs/<sha[0:2]>/<sha>`.
 * A put streams the bytes while hashing them: up to one part they are sent with one PutObject once their hash (the
 * key) is known; beyond, they go as a multipart upload to `<prefix>/tmp/<uuid>`, one part buffered at a time, and are
 * then copied to their key inside the bucket (or dropped when those bytes are already stored). A failed put aborts
 * its multipart upload and leaves nothing.
 *
 * Chunked uploads go straight into the bucket: each chunk is one part of a multipart upload to `<prefix>/uploads/<uuid>`
 * recorded with the upload (so any process may take the next chunk), and the last one completes it. The completed
 * object stays where it is, named by its key (`objectLocalId`, as a direct upload's object): copying it to a content
 * key would write every byte again (a CopyObject of the whole file, which on many S3-compatible servers costs as much
 * as the upload), so identical bytes uploaded twice are kept twice, as Girder keeps every upload's object.
 *
 * Holds and deletion tickets live in this process (as in the other stores); a delete and a put of the same bytes in
 * this process are serialised, so a put never dedupes onto a blob being deleted. Across processes the sweep's grace
 * period spares young blobs and temporary objects.
 */
export class S3BlobStore implements MultipartBlobStore, Omit<DirectBlobStore, 'direct'> {
  private readonly holds = new Holds();
  private readonly deleting = new Map<string, Promise<boolean>>();
  /** Temporary objects of puts in progress in this process (never swept). */
  private readonly inFlight = new Set<string>();
  private readonly prefix: string;
  /** Whether clients may talk to the bucket themselves (the store's `redirect` setting). */
  readonly direct: boolean;
  readonly directChunkBytes = S3_DIRECT_CHUNK_BYTES;

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    prefix: string,
    private readonly options: S3BlobStoreOptions = {},
  ) {
    this.prefix = keyPrefix(prefix);
    this.direct = options.direct ?? false;
  }

  static open(settings: S3Settings, options: S3BlobStoreOptions = {}): S3BlobStore {
    return new S3BlobStore(s3ClientFor(settings), settings.bucket, settings.prefix, {
      direct: settings.redirect !== false,
      readOnly: settings.readOnly,
      ...options,
    });
  }

  async dispose(): Promise<void> {
    this.client.destroy();
    return Promise.resolve();
  }

  /**
   * The key of a local id: a content address (`<prefix>/blobs/…`), an object named by its key (a direct upload's
   * under `<prefix>/direct/`, a chunked upload's under `<prefix>/uploads/`) or an imported object (any key of the
   * bucket).
   */
  private keyOf(blobId: string): string {
    const object = objectKeyOf(blobId);
    if (object !== null && this.objectAreas.some((area) => object.startsWith(area))) return object;
    const imported = importedPathOf(blobId);
    if (imported !== null) return imported;
    if (!/^[0-9a-f]{64}$/.test(blobId)) throw new Error(`Invalid blob id: ${blobId}`);
    return `${this.prefix}blobs/${blobId.slice(0, 2)}/${blobId}`;
  }

  async put(source: Readable): Promise<StoredBlob> {
    const tap = new HashingTap();
    const parts: CompletedPart[] = [];
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    /** The multipart upload, once the bytes outgrew one part (set inside `sendPart`). */
    const open: { upload: { key: string; uploadId: string } | null } = { upload: null };
    const sendPart = async (body: Buffer) => {
      if (!open.upload) {
        const key = `${this.prefix}tmp/${crypto.randomUUID()}`;
        this.inFlight.add(key);
        const created = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key }));
        open.upload = { key, uploadId: created.UploadId ?? '' };
      }
      const PartNumber = parts.length + 1;
      const sent = await this.client.send(
        new UploadPartCommand({
          Bucket: this.bucket,
          Key: open.upload.key,
          UploadId: open.upload.uploadId,
          PartNumber,
          Body: body,
        }),
      );
      parts.push({ PartNumber, ETag: sent.ETag ?? '' });
    };
    try {
      await pipeline(source, tap, async (chunks: AsyncIterable<Buffer>) => {
        for await (const chunk of chunks) {
          pending.push(chunk);
          pendingBytes += chunk.length;
          if (pendingBytes >= S3_PART_BYTES) {
            const body = Buffer.concat(pending);
            pending = [];
            pendingBytes = 0;
            await sendPart(body);
          }
        }
      });
      const hashes = tap.digests();
      const upload = open.upload;
      if (upload === null) return await this.storeSmall(hashes, Buffer.concat(pending));
      if (pendingBytes > 0) await sendPart(Buffer.concat(pending));
      await this.complete(upload, parts);
      open.upload = null;
      return await this.settleTemporary(upload.key, hashes);
    } catch (error) {
      await this.abort(open.upload);
      throw error;
    }
  }

  /** Bytes that fit in one part, stored under their key unless already there. */
  private async storeSmall(hashes: ContentHashes, bytes: Buffer): Promise<StoredBlob> {
    const { sha256: blobId, sha512, size } = hashes;
    await this.holdForStoring(blobId, async (stored) => {
      if (!stored)
        await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.keyOf(blobId), Body: bytes }));
    });
    return { blobId, size, sha512 };
  }

  /**
   * Holds `blobId` before looking for it (a delete of these bytes that starts now is refused, one under way is
   * awaited), then runs `store` with whether the bytes are already there; the hold is kept unless it fails.
   */
  private async holdForStoring(blobId: string, store: (stored: boolean) => Promise<void>): Promise<void> {
    this.holds.hold(blobId);
    try {
      await this.deleting.get(blobId);
      await store(await this.exists(blobId));
    } catch (error) {
      this.holds.release(blobId);
      throw error;
    }
  }

  private async complete(upload: StoreUpload, parts: CompletedPart[]): Promise<void> {
    await this.client.send(
      new CompleteMultipartUploadCommand({
        Bucket: this.bucket,
        Key: upload.key,
        UploadId: upload.uploadId,
        MultipartUpload: { Parts: parts },
      }),
    );
  }

  /** A completed temporary object becomes the blob of its hashes (copied to its key unless there), then goes. */
  private async settleTemporary(temporary: string, hashes: ContentHashes): Promise<StoredBlob> {
    const { sha256: blobId, sha512, size } = hashes;
    try {
      await this.holdForStoring(blobId, async (stored) => {
        if (!stored) await copyInBucket(this.at, temporary, this.keyOf(blobId), size, (upload) => this.abort(upload));
      });
    } finally {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: temporary }));
      this.inFlight.delete(temporary);
    }
    return { blobId, size, sha512 };
  }

  readonly minimumPartBytes = S3_MINIMUM_PART_BYTES;

  /** Where the store keeps objects named by their key (objectLocalId): direct uploads', chunked uploads'. */
  private get objectAreas(): string[] {
    return [`${this.prefix}direct/`, `${this.prefix}uploads/`];
  }

  async beginUpload(): Promise<StoreUpload> {
    const key = `${this.prefix}uploads/${crypto.randomUUID()}`;
    const created = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key }));
    return { key, uploadId: created.UploadId ?? '' };
  }

  async uploadPart(
    upload: StoreUpload,
    number: number,
    source: Readable,
    length: number,
    hasher?: RunningHash,
  ): Promise<UploadedPart> {
    const counted = countedPart(length, hasher);
    const body = new PassThrough();
    const piping = pipeline(source, counted.stream, body);
    const sent = await Promise.all([
      this.client.send(
        new UploadPartCommand({
          Bucket: this.bucket,
          Key: upload.key,
          UploadId: upload.uploadId,
          PartNumber: number,
          Body: body,
          ContentLength: length,
        }),
      ),
      piping,
    ]).catch((error: unknown) => {
      body.destroy();
      throw error;
    });
    if (counted.seen() !== length) throw new Error(`Chunk ended after ${counted.seen()} of ${length} bytes.`);
    return { number, etag: sent[0].ETag ?? '' };
  }

  /**
   * Completes a chunked upload: its object stays under its key and is the blob (no copy). The hashes are the ones
   * taken as the chunks streamed, or read once from the object when no process saw them all.
   */
  async finishUpload(upload: StoreUpload, parts: UploadedPart[], hashes: ContentHashes | null): Promise<StoredBlob> {
    const completed = parts.map((p) => ({ PartNumber: p.number, ETag: p.etag }));
    if (!upload.key.startsWith(`${this.prefix}uploads/`)) return this.finishTemporaryUpload(upload, completed, hashes);
    const blobId = objectLocalId(upload.key);
    // Held from before it exists until the file that references it is recorded (as a put holds its blob).
    this.holds.hold(blobId);
    try {
      await this.complete(upload, completed);
      const { size, sha512 } = hashes ?? (await this.hashObject(upload.key));
      return { blobId, size, sha512 };
    } catch (error) {
      this.holds.release(blobId);
      throw error;
    }
  }

  /**
   * An upload begun before chunked uploads kept their objects (under `<prefix>/tmp/`, which the sweep empties): it is
   * completed and copied to its content key, as it was then.
   */
  private async finishTemporaryUpload(
    upload: StoreUpload,
    parts: CompletedPart[],
    hashes: ContentHashes | null,
  ): Promise<StoredBlob> {
    this.inFlight.add(upload.key);
    try {
      await this.complete(upload, parts);
    } catch (error) {
      this.inFlight.delete(upload.key);
      throw error;
    }
    return this.settleTemporary(upload.key, hashes ?? (await this.hashObject(upload.key)));
  }

  /** The hashes of an object, read once (a multipart upload whose chunks no single process saw all of). */
  private async hashObject(key: string): Promise<ContentHashes> {
    const hasher = new ThreadedHasher();
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      for await (const chunk of object.Body as Readable) await hasher.update(chunk as Buffer);
    } catch (error) {
      hasher.abort();
      throw error;
    }
    return hasher.digests();
  }

  async abortUpload(upload: StoreUpload): Promise<void> {
    await this.abort(upload);
  }

  /** Drops an unfinished multipart upload (servers without AbortMultipartUpload expire it themselves). */
  private async abort(upload: StoreUpload | null): Promise<void> {
    if (!upload) return;
    this.inFlight.delete(upload.key);
    await this.client
      .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: upload.key, UploadId: upload.uploadId }))
      .catch(() => undefined);
  }

  /**
   * The multipart uploads in progress under the store's own keys: chunked uploads' (`uploads/`), clients' direct ones
   * (`direct/`) and large puts' (`tmp/`), except puts this process is making and `tmp/` ones within the sweep's grace
   * (another process's put may still be sending them). Other keys under the prefix are left alone: the bucket may be
   * shared, and an upload there is not the service's to drop (Girder lists every key under the prefix). A read-only
   * store holds none, as in Girder: its bucket is another application's, whose uploads may use the same key names.
   */
  async *heldUploads(): AsyncGenerator<HeldUpload> {
    if (this.options.readOnly) return;
    const youngSince = Date.now() - (this.options.sweepGraceMs ?? DEFAULT_SWEEP_GRACE_MS);
    const temporary = `${this.prefix}tmp/`;
    const areas = [temporary, ...this.objectAreas];
    for await (const { key, uploadId, initiated } of multipartUploadsUnder(this.at, this.prefix)) {
      if (!areas.some((area) => key.startsWith(area))) continue;
      if (key.startsWith(temporary) && (this.inFlight.has(key) || initiated > youngSince)) continue;
      yield { key, uploadId, created: initiated };
    }
  }

  // Direct uploads and redirects (DirectBlobStore, used when `direct` is on).

  private target(key: string) {
    return { ...this.at, key };
  }

  /** The bucket as the helpers of this folder take it. */
  private get at(): Bucket {
    return { client: this.client, bucket: this.bucket };
  }

  directKey(uploadId: string): string {
    return `${this.prefix}direct/${uploadId}`;
  }

  directObjectId(key: string): string {
    return objectLocalId(key);
  }

  async startDirect(
    key: string,
    upload: { size: number; mimeType: string; contentDisposition: string; userId: string },
  ): Promise<DirectUploadStart> {
    const chunked = upload.size > S3_DIRECT_CHUNK_BYTES;
    return {
      chunked,
      chunkLength: S3_DIRECT_CHUNK_BYTES,
      key,
      relpath: `/${this.bucket}/${key}`,
      request: await presignUploadStart(this.target(key), { ...upload, chunked }),
    };
  }

  signDirectPart(
    key: string,
    part: { s3UploadId: string; partNumber: number; length: number },
  ): Promise<ClientRequest> {
    return presignPart(this.target(key), part);
  }

  completeDirect(key: string, s3UploadId: string, size: number): Promise<void> {
    return completeDirectUpload(this.at, key, s3UploadId, size);
  }

  async adoptDirect(key: string, size: number): Promise<StoredBlob> {
    await checkDirectObject(this.at, key, size);
    return this.settleTemporary(key, await this.hashObject(key));
  }

  async abortDirect(key: string, s3UploadId: string | undefined): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })).catch(() => undefined);
    if (s3UploadId !== undefined) await this.abort({ key, uploadId: s3UploadId });
  }

  downloadUrl(blobId: string, headers: { contentType: string; contentDisposition: string }): Promise<string> {
    return presignDownload(this.target(this.keyOf(blobId)), headers);
  }

  async hold(blobId: string): Promise<void> {
    this.holds.hold(blobId);
    return Promise.resolve();
  }

  release(blobId: string): void {
    this.holds.release(blobId);
  }

  async get(blobId: string, range?: ByteRange): Promise<Readable> {
    const key = this.keyOf(blobId);
    if (range && range.end <= range.start) {
      // S3 has no empty range: the object's existence is checked, and nothing is read.
      if (!(await this.exists(blobId))) throw new Error(`No such blob: ${blobId}`);
      return Readable.from([]);
    }
    const object = await this.client.send(
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: key,
        ...(range ? { Range: `bytes=${range.start}-${range.end - 1}` } : {}),
      }),
    );
    return object.Body as Readable;
  }

  async exists(blobId: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.keyOf(blobId) }));
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  deletionTicket(): DeletionTicket {
    return this.holds.ticket();
  }

  async delete(blobId: string, ticket?: DeletionTicket): Promise<boolean> {
    if (!this.holds.mayDelete(blobId, ticket)) return false;
    const running = this.deleting.get(blobId);
    if (running) return running.then(() => false);
    const deletion = (async () => {
      if (!(await this.exists(blobId))) return false;
      // Checked again after the look-up: a put or hold of these bytes meanwhile keeps them.
      if (!this.holds.mayDelete(blobId, ticket)) return false;
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.keyOf(blobId) }));
      return true;
    })();
    this.deleting.set(blobId, deletion);
    try {
      return await deletion;
    } finally {
      this.deleting.delete(blobId);
    }
  }

  /** Where the store keeps its own objects (content-addressed blobs, puts in progress, objects named by key). */
  private get ownAreas(): string[] {
    return [`${this.prefix}blobs/`, `${this.prefix}tmp/`, ...this.objectAreas];
  }

  /** Girder's S3 importData listing (s3Listing.ts); the store's own objects are never imported. */
  listForImport(prefix: string): AsyncGenerator<ImportListingPage> {
    return importListing(this.at, prefix, this.ownAreas);
  }

  /**
   * Temporary objects of interrupted puts and unreferenced blobs go, except young ones (the grace period) and held
   * ones; nothing of a read-only store (`S3BlobStoreOptions.readOnly`).
   */
  async sweep(isReferenced: (blobId: string) => Promise<boolean>): Promise<SweepReport> {
    const youngSince = Date.now() - (this.options.sweepGraceMs ?? DEFAULT_SWEEP_GRACE_MS);
    const report: SweepReport = { removedBlobs: 0, removedTemporary: 0 };
    if (this.options.readOnly) return report;
    for await (const { key, modified } of keysUnder(this.at, `${this.prefix}tmp/`)) {
      if (this.inFlight.has(key) || modified > youngSince) continue;
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
      report.removedTemporary += 1;
    }
    // Objects of direct and chunked uploads: referenced by key (objectLocalId) once their upload completed.
    for (const area of this.objectAreas)
      for await (const { key, modified } of keysUnder(this.at, area)) {
        const localId = objectLocalId(key);
        if (modified > youngSince || !this.holds.mayDelete(localId)) continue;
        const ticket = this.holds.ticket();
        if (await isReferenced(localId)) continue;
        if (await this.delete(localId, ticket)) report.removedBlobs += 1;
      }
    for await (const { key, modified } of keysUnder(this.at, `${this.prefix}blobs/`)) {
      const blobId = key.slice(key.lastIndexOf('/') + 1);
      if (!/^[0-9a-f]{64}$/.test(blobId) || modified > youngSince) continue;
      if (!this.holds.mayDelete(blobId)) continue;
      const ticket = this.holds.ticket();
      if (await isReferenced(blobId)) continue;
      if (await this.delete(blobId, ticket)) report.removedBlobs += 1;
    }
    return report;
  }
}
