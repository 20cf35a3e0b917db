import type { DeletionTicket } from '../../ports/blobStore';

/** Touch records of blobs that are not held are forgotten after this long (see `prune`). */
const TOUCH_MEMORY_MS = 60_000;
const PRUNE_ABOVE = 4096;

interface Touch {
  holds: number;
  /** Value of the counter at the last put/hold of this blob. */
  touched: number;
  at: number;
}

/**
 * The holds and deletion tickets of the BlobStore port (src/ports/blobStore.ts), in process, with the same rules
 * as the filesystem store: a held blob is never deleted, and a ticket is refused when the blob was put or held after
 * it was issued (or when the touch records it would need were forgotten).
 */
export class Holds {
  private readonly touches = new Map<string, Touch>();
  private counter = 0;
  /** Every forgotten touch had `touched` ≤ this: a ticket older than it can no longer be trusted. */
  private prunedThrough = 0;

  hold(blobId: string): void {
    const touch = this.touches.get(blobId) ?? { holds: 0, touched: 0, at: 0 };
    touch.holds += 1;
    touch.touched = ++this.counter;
    touch.at = Date.now();
    this.touches.set(blobId, touch);
  }

  release(blobId: string): void {
    const touch = this.touches.get(blobId);
    if (!touch || touch.holds === 0) return;
    touch.holds -= 1;
    touch.at = Date.now();
    this.prune();
  }

  ticket(): DeletionTicket {
    return this.counter;
  }

  /** Whether a delete of `blobId` (with `ticket`, if any) may go ahead now. */
  mayDelete(blobId: string, ticket?: DeletionTicket): boolean {
    const touch = this.touches.get(blobId);
    if (touch && touch.holds > 0) return false;
    if (ticket !== undefined && (ticket < this.prunedThrough || (touch !== undefined && touch.touched > ticket)))
      return false;
    return true;
  }

  /** Forgets touches of unheld blobs older than TOUCH_MEMORY_MS, so the map does not grow with every blob ever put. */
  private prune(): void {
    if (this.touches.size <= PRUNE_ABOVE) return;
    const before = Date.now() - TOUCH_MEMORY_MS;
    for (const [blobId, touch] of this.touches) {
      if (touch.holds === 0 && touch.at < before) {
        this.prunedThrough = Math.max(this.prunedThrough, touch.touched);
        this.touches.delete(blobId);
      }
    }
  }
}
