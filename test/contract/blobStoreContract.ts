import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import type { BlobStore } from '../../src/ports/blobStore';

/**
 * The BlobStore contract, run against every adapter: content addressing (id = SHA-256, identical bytes stored
 * once), streamed reads with ranges, holds and deletion tickets (the reclaim race), failed puts leaving nothing,
 * and the sweep. `make` returns a fresh, empty store.
 */
export function blobStoreContract(
  name: string,
  make: () => Promise<{ store: BlobStore; dispose(): Promise<void> }>,
): void {
  describe(`BlobStore contract: ${name}`, () => {
    let store: BlobStore;
    let dispose: () => Promise<void>;
    beforeEach(async () => {
      ({ store, dispose } = await make());
    });
    afterEach(() => dispose());

    const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');
    const sha512 = (bytes: Buffer) => crypto.createHash('sha512').update(bytes).digest('hex');
    const bytesOf = async (stream: Readable) => {
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    };
    /** A source in several chunks, as a request body would arrive. */
    const source = (bytes: Buffer, chunk = 7) =>
      Readable.from(
        Array.from({ length: Math.ceil(bytes.length / chunk) }, (_, i) => bytes.subarray(i * chunk, (i + 1) * chunk)),
      );
    const put = async (bytes: Buffer) => {
      const blob = await store.put(source(bytes));
      store.release(blob.blobId);
      return blob;
    };

    it('stores bytes under their SHA-256, gives their SHA-512 from the same pass, and reads them back', async () => {
      const bytes = crypto.randomBytes(1000);
      const blob = await put(bytes);
      expect(blob).toEqual({ blobId: sha256(bytes), size: 1000, sha512: sha512(bytes) });
      expect(await store.exists(blob.blobId)).toBe(true);
      expect(await bytesOf(await store.get(blob.blobId))).toEqual(bytes);
    });

    it('stores the empty blob', async () => {
      const blob = await put(Buffer.alloc(0));
      expect(blob).toEqual({ blobId: sha256(Buffer.alloc(0)), size: 0, sha512: sha512(Buffer.alloc(0)) });
      expect(await bytesOf(await store.get(blob.blobId))).toEqual(Buffer.alloc(0));
    });

    it('gives identical bytes the same id', async () => {
      const bytes = Buffer.from('same bytes, stored once');
      const a = await put(bytes);
      const b = await put(bytes);
      expect(b.blobId).toBe(a.blobId);
      // Bytes stored already are still hashed as they stream in: the second put gives the same SHA-512.
      expect(b.sha512).toBe(sha512(bytes));
      expect(await bytesOf(await store.get(a.blobId))).toEqual(bytes);
    });

    it('reads byte ranges (end exclusive)', async () => {
      const bytes = Buffer.from('0123456789');
      const { blobId } = await put(bytes);
      expect((await bytesOf(await store.get(blobId, { start: 2, end: 6 }))).toString()).toBe('2345');
      expect((await bytesOf(await store.get(blobId, { start: 9, end: 10 }))).toString()).toBe('9');
      expect((await bytesOf(await store.get(blobId, { start: 4, end: 4 }))).length).toBe(0);
    });

    it('rejects reads of a missing blob', async () => {
      await expect(store.get('0'.repeat(64))).rejects.toThrow();
      expect(await store.exists('0'.repeat(64))).toBe(false);
    });

    it('deletes a blob that is not held', async () => {
      const { blobId } = await put(Buffer.from('to delete'));
      expect(await store.delete(blobId)).toBe(true);
      expect(await store.exists(blobId)).toBe(false);
      expect(await store.delete(blobId)).toBe(false);
    });

    it('keeps a held blob until it is released', async () => {
      const blob = await store.put(source(Buffer.from('held')));
      expect(await store.delete(blob.blobId)).toBe(false);
      expect(await store.exists(blob.blobId)).toBe(true);
      void store.hold(blob.blobId);
      store.release(blob.blobId);
      expect(await store.delete(blob.blobId)).toBe(false);
      store.release(blob.blobId);
      expect(await store.delete(blob.blobId)).toBe(true);
    });

    it('refuses a delete whose ticket predates a new put or hold of the same bytes', async () => {
      const bytes = Buffer.from('raced');
      const { blobId } = await put(bytes);
      const stale = store.deletionTicket(blobId);
      await put(bytes); // stored (and released) again after the ticket: its reference may not be visible yet
      expect(await store.delete(blobId, stale)).toBe(false);
      const held = store.deletionTicket(blobId);
      void store.hold(blobId);
      store.release(blobId);
      expect(await store.delete(blobId, held)).toBe(false);
      const fresh = store.deletionTicket(blobId);
      expect(await store.delete(blobId, fresh)).toBe(true);
      expect(await store.exists(blobId)).toBe(false);
    });

    it('leaves nothing behind when the source fails', async () => {
      const failing = new Readable({
        read() {
          this.push(Buffer.from('partial'));
          this.destroy(new Error('client went away'));
        },
      });
      await expect(store.put(failing)).rejects.toThrow('client went away');
      expect(await store.exists(sha256(Buffer.from('partial')))).toBe(false);
      const report = await store.sweep(async () => true);
      expect(report.removedTemporary).toBe(0);
    });

    it('sweeps unreferenced blobs and keeps referenced and held ones', async () => {
      const kept = await put(Buffer.from('referenced'));
      const dropped = await put(Buffer.from('orphan'));
      const held = await store.put(source(Buffer.from('in flight')));
      const report = await store.sweep(async (blobId) => blobId === kept.blobId);
      expect(report.removedBlobs).toBe(1);
      expect(await store.exists(kept.blobId)).toBe(true);
      expect(await store.exists(dropped.blobId)).toBe(false);
      expect(await store.exists(held.blobId)).toBe(true);
      store.release(held.blobId);
    });
  });
}
