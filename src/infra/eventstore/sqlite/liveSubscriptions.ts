import type { SubscribeAllOptions, Subscription, SubscriptionItem } from '../../../ports/eventStore';
import { normalisePrefixes, toRecordedEvent, type EventLogReads } from './eventLogReads';

/** How often waiting subscriptions look for commits made by other connections (other processes). */
const POLL_INTERVAL_MS = 250;

interface SubscriptionState {
  closed: boolean;
  /** Resolves the wait in progress, if any. */
  wake: (() => void) | undefined;
}

/** Whether the subscription was closed: a call, since the flag changes while the generator waits at a yield or an
 * await. */
const isClosed = (state: SubscriptionState): boolean => state.closed;

interface Waiter {
  /** Head position this waiter has already scanned up to; the poll wakes it once the head moves past. */
  seenHead: bigint;
  resolve: () => void;
}

/**
 * `$all` subscriptions of the SQLite event store: each catches up by paging the log, then waits for the next commit.
 * Commits of this process wake them at once ({@link notifyAll}); commits of other connections are found by a poll
 * that runs only while someone waits.
 */
export class LiveSubscriptions {
  private readonly subscriptions = new Set<SubscriptionState>();
  private readonly waiters = new Set<Waiter>();
  private pollTimer: NodeJS.Timeout | undefined;
  private disposed = false;

  constructor(private readonly reads: EventLogReads) {}

  subscribeToAll(options: SubscribeAllOptions = {}): Subscription {
    const state: SubscriptionState = { closed: this.disposed, wake: undefined };
    if (!state.closed) this.subscriptions.add(state);
    const items = this.subscriptionItems(state, options.fromPosition ?? 0n, normalisePrefixes(options.streamPrefixes));
    return {
      [Symbol.asyncIterator]: () => items,
      unsubscribe: async () => this.closeSubscription(state),
    };
  }

  /** Ends every subscription; later ones end at once. */
  dispose(): void {
    this.disposed = true;
    for (const state of [...this.subscriptions]) this.closeSubscription(state);
    this.stopPolling();
  }

  /** Wakes every waiting subscription: a commit through this connection. */
  notifyAll(): void {
    for (const waiter of [...this.waiters]) waiter.resolve();
  }

  private async *subscriptionItems(
    state: SubscriptionState,
    fromPosition: bigint,
    prefixes: string[],
  ): AsyncGenerator<SubscriptionItem> {
    let cursor = fromPosition;
    try {
      // Catch-up: page until a page comes back short.
      for (;;) {
        if (isClosed(state)) return;
        const page = this.reads.scanPage(cursor, prefixes);
        for (const row of page.rows) {
          yield { kind: 'event', event: toRecordedEvent(row) };
          if (isClosed(state)) return;
        }
        cursor = page.scannedTo;
        if (!page.full) break;
      }
      yield { kind: 'caughtUp', position: cursor };
      // Live: scan; when there is nothing new, wait (registered synchronously after the empty scan, so no commit
      // can slip in between) for an in-process notification or the poll.
      for (;;) {
        if (isClosed(state)) return;
        const page = this.reads.scanPage(cursor, prefixes);
        cursor = page.scannedTo;
        if (page.rows.length === 0) {
          await this.waitForCommit(state, cursor);
          continue;
        }
        for (const row of page.rows) {
          yield { kind: 'event', event: toRecordedEvent(row) };
          if (isClosed(state)) return;
        }
      }
    } finally {
      this.closeSubscription(state);
    }
  }

  private waitForCommit(state: SubscriptionState, seenHead: bigint): Promise<void> {
    return new Promise<void>((resolve) => {
      if (state.closed) return resolve();
      const waiter: Waiter = {
        seenHead,
        resolve: () => {
          this.waiters.delete(waiter);
          state.wake = undefined;
          resolve();
        },
      };
      state.wake = waiter.resolve;
      this.waiters.add(waiter);
      this.startPolling();
    });
  }

  private closeSubscription(state: SubscriptionState): void {
    state.closed = true;
    this.subscriptions.delete(state);
    state.wake?.();
    if (this.waiters.size === 0) this.stopPolling();
  }

  private startPolling(): void {
    if (this.pollTimer || this.disposed) return;
    this.pollTimer = setInterval(() => this.poll(), POLL_INTERVAL_MS);
  }

  private stopPolling(): void {
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
  }

  /** Wakes the waiters that have not seen the current head: commits made through other connections. */
  private poll(): void {
    if (this.waiters.size === 0) return this.stopPolling();
    let head: bigint;
    try {
      head = this.reads.head();
    } catch {
      // The connection was closed under us (shutdown order); stop quietly rather than crash the timer.
      return this.stopPolling();
    }
    for (const waiter of [...this.waiters]) if (head > waiter.seenHead) waiter.resolve();
  }
}
