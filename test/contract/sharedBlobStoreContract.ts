import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import type { BlobStore } from '../../src/ports/blobStore';

/**
 * The BlobStore contract across processes: `make` opens the same storage twice, as two service processes sharing
 * it would (two filesystem stores on one root; two GridFS stores on one database), each with its own claims. It
 * proves that a sweep or a reclaim in one never removes a blob the other has stored (or holds) but not yet released,
 * i.e. whose file event may not be projected yet, and that the sweep spares young blobs.
 */
export interface SharedBlobStores {
  first: BlobStore;
  second: BlobStore;
  dispose(): Promise<void>;
}

export function sharedBlobStoreContract(
  name: string,
  make: (options: { sweepGraceMs: number }) => Promise<SharedBlobStores>,
): void {
  describe(`BlobStore contract across processes: ${name}`, () => {
    let stores: SharedBlobStores;
    afterEach(() => stores.dispose());
    const bytes = (text: string) => Buffer.from(text);
    const sha256 = (data: Buffer) => crypto.createHash('sha256').update(data).digest('hex');
    const nothingReferenced = async () => false;

    it('never sweeps a blob another process stored and has not released yet, and sweeps it once released', async () => {
      stores = await make({ sweepGraceMs: 0 });
      const { first, second } = stores;
      // Process one stores the bytes of an upload; its file event is not projected yet, so nothing references them.
      const stored = await first.put(Readable.from([bytes('uploading elsewhere')]));
      expect(await second.sweep(nothingReferenced)).toMatchObject({ removedBlobs: 0 });
      expect(await second.exists(stored.blobId)).toBe(true);
      // Nor may a reclaim in the other process take it.
      expect(await second.delete(stored.blobId, second.deletionTicket(stored.blobId))).toBe(false);
      expect(await first.exists(stored.blobId)).toBe(true);
      first.release(stored.blobId);
      expect(await second.sweep(nothingReferenced)).toMatchObject({ removedBlobs: 1 });
      expect(await first.exists(stored.blobId)).toBe(false);
    });

    it('keeps a blob that another process holds for a copy or a restore', async () => {
      stores = await make({ sweepGraceMs: 0 });
      const { first, second } = stores;
      const blob = await first.put(Readable.from([bytes('copied elsewhere')]));
      first.release(blob.blobId);
      await second.hold(blob.blobId);
      expect(await first.delete(blob.blobId)).toBe(false);
      expect(await first.sweep(nothingReferenced)).toMatchObject({ removedBlobs: 0 });
      second.release(blob.blobId);
      expect(await first.delete(blob.blobId)).toBe(true);
    });

    it('never loses bytes put again in one process while another deletes them, whatever the interleaving', async () => {
      stores = await make({ sweepGraceMs: 0 });
      const { first, second } = stores;
      const data = bytes('raced across processes');
      const blobId = sha256(data);
      for (let round = 0; round < 25; round++) {
        const seed = await first.put(Readable.from([data]));
        first.release(seed.blobId);
        const [, again] = await Promise.all([
          first.delete(blobId),
          second.put(Readable.from([data.subarray(0, 5), data.subarray(5)])),
        ]);
        // Whatever happened to the old copy, the bytes the second process just stored are there.
        expect(again.blobId).toBe(blobId);
        expect(await second.exists(blobId)).toBe(true);
        const chunks: Buffer[] = [];
        for await (const chunk of await second.get(blobId)) chunks.push(chunk as Buffer);
        expect(Buffer.concat(chunks)).toEqual(data);
        second.release(blobId);
      }
    });

    it('spares blobs stored within the grace period', async () => {
      stores = await make({ sweepGraceMs: 60_000 });
      const { first, second } = stores;
      const blob = await first.put(Readable.from([bytes('young')]));
      first.release(blob.blobId);
      expect(await second.sweep(nothingReferenced)).toMatchObject({ removedBlobs: 0 });
      expect(await second.exists(blob.blobId)).toBe(true);
    });
  });
}
