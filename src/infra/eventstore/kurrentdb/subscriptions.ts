import { START, type AllStreamResolvedEvent, type Position } from '@kurrent/kurrentdb-client';
import type { SubscribeAllOptions, Subscription, SubscriptionItem } from '../../../ports/eventStore';
import { fromResolvedEvent, toBigInt, toClientPosition } from './mapping';
import { SubscriptionReader } from './subscriptionReader';
import type { ChannelUse, KurrentClient } from './client';
import { normalisePrefixes, samePrefixes, type KurrentReads } from './reads';

export interface BackoffOptions {
  /** Wait before the first resubscription after a drop. */
  initialMs: number;
  /** Ceiling of the doubling wait. */
  maxMs: number;
}

const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 10_000 };

interface SubscriptionState {
  closed: boolean;
  reader: SubscriptionReader | undefined;
  /** Ends a backoff wait early (unsubscribe, dispose). */
  cancelWait: (() => void) | undefined;
  /** Settles once the subscription's server call is cancelled. */
  closing: Promise<void> | undefined;
}

/** Whether the subscription was closed: a call, since the flag changes while the generator waits at a yield or an
 * await. */
const isClosed = (state: SubscriptionState): boolean => state.closed;

interface CatchUpTarget {
  /** Head (under the store's default filter) when the subscription started. */
  head: bigint;
  /** Position of the last event matching the subscription's own filter when it started. */
  lastMatching: bigint;
}

/**
 * `$all` subscriptions of the KurrentDB event store: catch-up events, one caught-up marker, then live events, in
 * order; a dropped subscription is resumed after the last delivered position with exponential backoff, invisibly to
 * the consumer, until it is unsubscribed or the store disposed.
 */
export class KurrentSubscriptions {
  private readonly subscriptions = new Set<SubscriptionState>();
  private closedAll = false;

  constructor(
    private readonly client: KurrentClient,
    private readonly reads: KurrentReads,
    private readonly channel: ChannelUse,
    private readonly backoff: BackoffOptions = DEFAULT_BACKOFF,
    private readonly logger?: { warn(obj: object, msg: string): void },
  ) {}

  subscribeToAll(options: SubscribeAllOptions = {}): Subscription {
    const state: SubscriptionState = {
      closed: this.closedAll,
      reader: undefined,
      cancelWait: undefined,
      closing: undefined,
    };
    if (!state.closed) this.subscriptions.add(state);
    const prefixes =
      options.streamPrefixes === undefined ? this.reads.defaultPrefixes : normalisePrefixes(options.streamPrefixes);
    const items = this.subscriptionItems(state, options.fromPosition ?? 0n, prefixes);
    return {
      [Symbol.asyncIterator]: () => items,
      unsubscribe: async () => this.closeSubscription(state),
    };
  }

  /** Closes every subscription and refuses new ones (they end at once): the store is being disposed. */
  async closeAll(): Promise<void> {
    this.closedAll = true;
    await Promise.all([...this.subscriptions].map((state) => this.closeSubscription(state)));
  }

  /**
   * Catch-up ends — and the one caught-up marker goes out — at whichever comes first: the server's CaughtUp
   * (EventStoreDB 23.10+ / KurrentDB), or the delivery of the last matching event that existed when the subscription
   * started (read first, so this works on every server version). Drops are retried from the last delivered
   * position, with exponential backoff, until unsubscribe or dispose.
   */
  private async *subscriptionItems(
    state: SubscriptionState,
    fromPosition: bigint,
    prefixes: string[],
  ): AsyncGenerator<SubscriptionItem> {
    const filter = this.reads.filterFor(prefixes);
    let resumeFrom: Position | undefined = fromPosition > 0n ? toClientPosition(fromPosition) : undefined;
    let last = fromPosition;
    let target: CatchUpTarget | undefined;
    let caughtUp = false;
    let failures = 0;
    // The marker's position: at least the head seen at the start, and never past an event still to come. Always an
    // event's position (or the caller's), never the server's own caught-up position, which need not be one.
    // Each `yield marker()` is preceded by `caughtUp = true` (in the loop, where narrowing sees it).
    const marker = (): SubscriptionItem => {
      const head = target?.head ?? 0n;
      return { kind: 'caughtUp', position: last > head ? last : head };
    };
    try {
      while (!isClosed(state)) {
        let reader: SubscriptionReader | undefined;
        try {
          target ??= await this.catchUpTarget(prefixes);
          if (isClosed(state)) return;
          if (!caughtUp && target.lastMatching <= last) {
            caughtUp = true;
            yield marker();
            if (isClosed(state)) return;
          }
          this.channel.used = true;
          const source = this.client.subscribeToAll({
            fromPosition: resumeFrom ?? START,
            filter,
            resolveLinkTos: false,
          });
          reader = new SubscriptionReader(source);
          state.reader = reader;
          for (;;) {
            const item = await reader.next();
            if (item.kind === 'closed') return;
            if (item.kind === 'end') throw new Error('the server ended the subscription');
            failures = 0;
            if (item.kind === 'caughtUp') {
              if (!caughtUp) {
                caughtUp = true;
                yield marker();
                if (isClosed(state)) return;
              }
              continue;
            }
            const event = fromResolvedEvent(item.resolved);
            if (!event) continue;
            const at = tuplePosition(item.resolved, event.position);
            if (resumeFrom && !isAfter(at, resumeFrom)) continue;
            if (!caughtUp && event.position > target.lastMatching) {
              caughtUp = true;
              yield marker();
              if (isClosed(state)) return;
            }
            yield { kind: 'event', event };
            last = event.position;
            resumeFrom = at;
            if (isClosed(state)) return;
            if (!caughtUp && event.position >= target.lastMatching) {
              caughtUp = true;
              yield marker();
              if (isClosed(state)) return;
            }
          }
        } catch (error) {
          if (isClosed(state)) return;
          await reader?.close();
          failures += 1;
          const delayMs = backoffDelay(failures, this.backoff);
          this.logger?.warn(
            { err: error, resumeAfter: last.toString(), retryInMs: delayMs },
            'KurrentDB $all subscription dropped; resubscribing',
          );
          await this.pause(state, delayMs);
        } finally {
          if (state.reader === reader) state.reader = undefined;
          await reader?.close();
        }
      }
    } finally {
      await this.closeSubscription(state);
    }
  }

  private async catchUpTarget(prefixes: string[]): Promise<CatchUpTarget> {
    // Head first, then the filter's last event: any matching event at or below the head is then at or below
    // lastMatching, so everything after lastMatching is genuinely live.
    const head = await this.reads.headPosition();
    const lastMatching = samePrefixes(prefixes, this.reads.defaultPrefixes)
      ? head
      : await this.reads.lastPosition(prefixes);
    return { head, lastMatching };
  }

  private pause(state: SubscriptionState, ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      if (state.closed) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        state.cancelWait = undefined;
        resolve();
      }
      state.cancelWait = done;
    });
  }

  private closeSubscription(state: SubscriptionState): Promise<void> {
    if (!state.closing) {
      state.closed = true;
      this.subscriptions.delete(state);
      state.cancelWait?.();
      state.closing = state.reader?.close() ?? Promise.resolve();
    }
    return state.closing;
  }
}

/** The exponential backoff: initialMs, doubled per consecutive failure, capped at maxMs. */
export function backoffDelay(failures: number, backoff: BackoffOptions): number {
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.max(0, failures - 1));
}

function tuplePosition(resolved: AllStreamResolvedEvent, commit: bigint): Position {
  const position = resolved.event?.position;
  if (!position) return toClientPosition(commit);
  return { commit: toBigInt(position.commit), prepare: toBigInt(position.prepare) };
}

function isAfter(a: Position, b: Position): boolean {
  return a.commit > b.commit || (a.commit === b.commit && a.prepare > b.prepare);
}
