import type { AllStreamResolvedEvent } from '@kurrent/kurrentdb-client';

/**
 * What the reader needs of the client's `$all` subscription (`AllStreamSubscription`, an object-mode Readable that
 * also emits `caughtUp`). Narrow so that tests can hand in a fake.
 */
export interface SubscriptionSource {
  read(): AllStreamResolvedEvent | null;
  readonly readableLength: number;
  on(event: 'readable' | 'end' | 'close' | 'caughtUp', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  unsubscribe(): Promise<void>;
  destroy(): unknown;
}

export type ReaderItem =
  | { kind: 'event'; resolved: AllStreamResolvedEvent }
  /** The server's CaughtUp, in its place among the events (servers from EventStoreDB 23.10 on send it). */
  | { kind: 'caughtUp' }
  /** The server ended the subscription without an error (counts as a drop). */
  | { kind: 'end' }
  /** {@link SubscriptionReader.close} was called. */
  | { kind: 'closed' };

/**
 * Pulls a client subscription one item at a time, in order, and puts the server's caught-up signal exactly where it
 * belongs among the events.
 *
 * The client reports CaughtUp as an emitted event, not as an item of the stream, and events that arrived before it
 * may still sit in the stream's buffer when it is emitted. So the reader pulls with `read()` (the same pull the
 * stream's own async iterator makes, never flowing `on('data')`), counts what it has taken, and when `caughtUp` is
 * emitted notes that the signal goes after the items taken so far plus the ones still buffered (`readableLength`).
 */
export class SubscriptionReader {
  private taken = 0;
  private caughtUpAfter: number | undefined;
  private caughtUpDelivered = false;
  private failure: Error | undefined;
  private ended = false;
  private closed = false;
  private wake: (() => void) | undefined;

  constructor(private readonly source: SubscriptionSource) {
    const notify = () => {
      const wake = this.wake;
      this.wake = undefined;
      wake?.();
    };
    source.on('readable', notify);
    source.on('end', () => {
      this.ended = true;
      notify();
    });
    source.on('close', () => {
      this.ended = true;
      notify();
    });
    source.on('error', (error: Error) => {
      this.failure ??= error;
      notify();
    });
    source.on('caughtUp', () => {
      this.caughtUpAfter ??= this.taken + source.readableLength;
      notify();
    });
  }

  /** The next item; throws the subscription's error when it failed. */
  async next(): Promise<ReaderItem> {
    for (;;) {
      if (this.closed) return { kind: 'closed' };
      if (!this.caughtUpDelivered && this.caughtUpAfter !== undefined && this.taken >= this.caughtUpAfter) {
        this.caughtUpDelivered = true;
        return { kind: 'caughtUp' };
      }
      const resolved = this.source.read();
      if (resolved !== null) {
        this.taken += 1;
        return { kind: 'event', resolved };
      }
      // A caughtUp emitted synchronously inside read() (no event came with it) is delivered on the next turn.
      if (!this.caughtUpDelivered && this.caughtUpAfter !== undefined && this.taken >= this.caughtUpAfter) continue;
      if (this.failure) throw this.failure;
      if (this.ended) return { kind: 'end' };
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Cancels the server subscription and wakes a pending {@link next}. Safe to call more than once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
    try {
      await this.source.unsubscribe();
    } catch {
      // The subscription never got a connection (that is often why it is being closed): nothing to cancel.
    }
    this.source.destroy();
  }
}
