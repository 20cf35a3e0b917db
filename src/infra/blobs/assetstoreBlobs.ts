import fs from 'node:fs';
import type { Readable } from 'node:stream';
import type {
  BlobStore,
  BlobStores,
  ByteRange,
  DeletionTicket,
  HeldUpload,
  StoredBlob,
  SweepReport,
} from '../../ports/blobStore';
import { importsObjects, takesDirectUploads, takesMultipartUploads } from '../../ports/blobStore';
import { blobRef, importedPathOf, parseBlobRef } from '../../domain/assetstoreBlobRef';
import { importedFiles } from './importedFiles';
import {
  currentAssetstore,
  findAssetstore,
  type AssetstoreRecord,
  type AssetstoreSettings,
  type AssetstoreState,
} from '../../domain/assetstore';
import { RestError } from '../../domain/errors';
import { Holds } from './holds';
import { ThreadedHasher } from './hashingTap';
import type { ContentHashes, RunningHash } from '../../domain/contentHashes';

/** Bytes per read of a file given to a store whole (fewer trips through the stream machinery than 64 KiB). */
const READ_CHUNK = 1024 * 1024;

/** The hashes of a file's bytes, read once (an upload whose chunks no single process saw all of). */
async function hashFile(file: string): Promise<ContentHashes> {
  const hasher = new ThreadedHasher();
  try {
    for await (const chunk of fs.createReadStream(file, { highWaterMark: READ_CHUNK }))
      await hasher.update(chunk as Buffer);
  } catch (error) {
    hasher.abort();
    throw error;
  }
  return hasher.digests();
}

/** Opens the blob store an assetstore's settings describe (src/infra/blobs/assetstoreAdapters.ts). */
export type OpenAdapter = (settings: AssetstoreSettings) => Promise<BlobStore & { dispose?(): Promise<void> }>;

interface OpenStore {
  /** The settings it was opened with: changed settings open a new adapter. */
  key: string;
  store: Promise<BlobStore & { dispose?(): Promise<void> }>;
  /** Set once `store` resolved, for the synchronous step of a delete. */
  ready?: BlobStore;
  /** When the log last confirmed the store's settings (Date.now()). */
  confirmedAt: number;
}

/**
 * How long an open store is used without reading the assetstores from the log again: reads of many blobs (a zip of a
 * folder's thousand files) then read the log once, and a change made in another process is seen within this time.
 */
const CONFIRMED_FOR_MS = 2_000;

/**
 * Every assetstore's bytes behind one BlobStore (the `blobs` of src/services.ts): a blob reference names its store
 * (src/domain/assetstoreBlobRef.ts), and each call goes to that store's adapter, opened on first use and again when
 * the store's settings change. Which stores exist, and which is current, is read from the log (`loadState`), so every
 * process sharing the log uses the same stores.
 *
 * Holds and deletion tickets are kept here, by reference, over every store (the adapters keep their own too): every
 * put and hold of this process passes through here, so a ticket taken here sees them all, whichever adapter was open.
 */
export class AssetstoreBlobs implements BlobStores {
  private readonly open = new Map<string, OpenStore>();
  /** Adapters replaced after a settings change: streams may still read from them, so they are closed at dispose. */
  private readonly retired: Promise<BlobStore & { dispose?(): Promise<void> }>[] = [];
  private readonly holds = new Holds();

  constructor(
    private readonly loadState: () => Promise<AssetstoreState>,
    private readonly openAdapter: OpenAdapter,
    private readonly probeSettings: (settings: AssetstoreSettings) => Promise<void>,
  ) {}

  probe(settings: AssetstoreSettings): Promise<void> {
    return this.probeSettings(settings);
  }

  async currentId(): Promise<string> {
    return currentAssetstore(await this.loadState()).assetstoreId;
  }

  /** The adapter of a store; a store that no longer exists is a 400 (a file or an upload that outlived its store). */
  /** The adapter for reading blobs a file references: the open one while recently confirmed. */
  private async readerOf(assetstoreId: string): Promise<BlobStore> {
    const known = this.open.get(assetstoreId);
    if (known && Date.now() - known.confirmedAt < CONFIRMED_FOR_MS) return known.store;
    return this.adapterOf(assetstoreId);
  }

  /** Writes always check the log: no new bytes go to a store deleted or changed a moment ago. */
  async adapterOf(assetstoreId: string): Promise<BlobStore> {
    const record = findAssetstore(await this.loadState(), assetstoreId);
    if (!record) throw new RestError(`Invalid assetstore id (${assetstoreId}).`);
    return this.adapterFor(record);
  }

  async uploadsHeldIn(assetstoreId: string): Promise<HeldUpload[]> {
    const adapter = await this.adapterOf(assetstoreId);
    if (!takesMultipartUploads(adapter)) return [];
    const held: HeldUpload[] = [];
    for await (const upload of adapter.heldUploads()) held.push(upload);
    return held;
  }

  private adapterFor(record: AssetstoreRecord): Promise<BlobStore> {
    const key = JSON.stringify(record.settings);
    const known = this.open.get(record.assetstoreId);
    if (known?.key === key) {
      known.confirmedAt = Date.now();
      return known.store;
    }
    if (known) this.retired.push(known.store);
    const entry: OpenStore = { key, store: this.openAdapter(record.settings), confirmedAt: Date.now() };
    this.open.set(record.assetstoreId, entry);
    entry.store.then(
      (store) => (entry.ready = store),
      () => {
        // Not kept: the next use tries again (a database that was down, a directory made meanwhile).
        if (this.open.get(record.assetstoreId) === entry) this.open.delete(record.assetstoreId);
      },
    );
    return entry.store;
  }

  async put(source: Readable): Promise<StoredBlob> {
    return this.putInto(await this.currentId(), source);
  }

  async putInto(assetstoreId: string, source: Readable): Promise<StoredBlob> {
    const adapter = await this.adapterOf(assetstoreId);
    return this.adopt(assetstoreId, await adapter.put(source));
  }

  async putFileInto(assetstoreId: string, file: string, hashes: ContentHashes | null): Promise<StoredBlob> {
    const adapter = await this.adapterOf(assetstoreId);
    if (adapter.linkFile) {
      const linked = await adapter.linkFile(file, hashes ?? (await hashFile(file)));
      if (linked) return this.adopt(assetstoreId, linked);
    }
    return this.adopt(assetstoreId, await adapter.put(fs.createReadStream(file, { highWaterMark: READ_CHUNK })));
  }

  runningHash(): RunningHash {
    return new ThreadedHasher();
  }

  adopt(assetstoreId: string, stored: StoredBlob): StoredBlob {
    const ref = blobRef(assetstoreId, stored.blobId);
    this.holds.hold(ref);
    return { ...stored, blobId: ref };
  }

  async hold(ref: string): Promise<void> {
    const { assetstoreId, localId } = parseBlobRef(ref);
    this.holds.hold(ref);
    // An imported file's bytes are never deleted: nothing to hold them against.
    if (importedPathOf(localId) !== null) return;
    try {
      await (await this.readerOf(assetstoreId)).hold(localId);
    } catch (error) {
      this.holds.release(ref);
      throw error;
    }
  }

  release(ref: string): void {
    const { assetstoreId, localId } = parseBlobRef(ref);
    this.holds.release(ref);
    // Taken through readerOf, so the adapter is open (or its opening failed and nothing was held there).
    this.open.get(assetstoreId)?.ready?.release(localId);
  }

  async get(ref: string, range?: ByteRange): Promise<Readable> {
    const { assetstoreId, localId } = parseBlobRef(ref);
    const imported = importedPathOf(localId);
    const adapter = await this.readerOf(assetstoreId);
    // Files imported from a filesystem path are read where they are; an imported object, by its store.
    if (imported !== null && !importsObjects(adapter)) return importedFiles.get(imported, range);
    return adapter.get(localId, range);
  }

  async downloadUrl(ref: string, headers: { contentType: string; contentDisposition: string }): Promise<string | null> {
    const { assetstoreId, localId } = parseBlobRef(ref);
    const adapter = await this.readerOf(assetstoreId);
    return takesDirectUploads(adapter) ? adapter.downloadUrl(localId, headers) : null;
  }

  async exists(ref: string): Promise<boolean> {
    const { assetstoreId, localId } = parseBlobRef(ref);
    const imported = importedPathOf(localId);
    const adapter = await this.readerOf(assetstoreId);
    if (imported !== null && !importsObjects(adapter)) return importedFiles.exists(imported);
    return adapter.exists(localId);
  }

  deletionTicket(): DeletionTicket {
    return this.holds.ticket();
  }

  async delete(ref: string, ticket?: DeletionTicket): Promise<boolean> {
    const { assetstoreId, localId } = parseBlobRef(ref);
    // Imported bytes belong to whoever put them there: the service never deletes them.
    if (importedPathOf(localId) !== null) return false;
    if (!this.holds.mayDelete(ref, ticket)) return false;
    const ready = this.open.get(assetstoreId)?.ready;
    // With the adapter open, from the check above to the adapter's own check nothing else runs in this process.
    if (ready) return ready.delete(localId);
    const adapter = await this.readerOf(assetstoreId);
    if (!this.holds.mayDelete(ref, ticket)) return false;
    return adapter.delete(localId);
  }

  /** Sweeps every store, each with the references of its own blobs. */
  async sweep(isReferenced: (ref: string) => Promise<boolean>): Promise<SweepReport> {
    const total: SweepReport = { removedBlobs: 0, removedTemporary: 0, skippedStores: [] };
    for (const record of (await this.loadState()).stores) {
      const adapter = await this.adapterFor(record).catch(() => null);
      if (!adapter) {
        total.skippedStores?.push(record.name);
        continue;
      }
      const report = await adapter.sweep((localId) => isReferenced(blobRef(record.assetstoreId, localId)));
      total.removedBlobs += report.removedBlobs;
      total.removedTemporary += report.removedTemporary;
    }
    return total;
  }

  async dispose(): Promise<void> {
    const stores = [...this.retired, ...[...this.open.values()].map((entry) => entry.store)];
    this.open.clear();
    for (const store of await Promise.allSettled(stores))
      if (store.status === 'fulfilled') await store.value.dispose?.();
  }
}
