import type { Observable, Subscription } from 'rxjs';
import { Subject } from './rxjs';
import type { EventStore, RecordedEvent } from '../ports/eventStore';
import { StreamNotFoundError } from '../ports/eventStore';

/**
 * Domain-event fan-out: the projector publishes every event here right after the read models applied it, so a
 * subscriber that reacts to an event (checks an ACL, looks a folder up) sees the read models as of that event or later.
 *
 * {@link catchUpThenLive} joins a store read (catch-up) and this subject (live) without a gap or a duplicate, which is
 * what the SSE routes (src/http/resources/events.ts) stream.
 */
export class DomainEvents {
  private readonly subject = new Subject<RecordedEvent>();
  /** Every applied event, in log order. Completes when the service shuts down. */
  readonly applied$: Observable<RecordedEvent> = this.subject.asObservable();

  /** Called by the projector after an event's read-model transaction committed. */
  publish(event: RecordedEvent): void {
    this.subject.next(event);
  }

  complete(): void {
    this.subject.complete();
  }
}

/** Where catch-up reads: one stream, or `$all` (optionally only streams with these prefixes). */
export type CatchUpSource = { streamId: string } | { streamPrefixes?: string[] };

export interface CatchUpThenLiveOptions {
  store: EventStore;
  events: DomainEvents;
  /** The read models' position now (`projector.position$.value`): catch-up reads up to it, live takes over after. */
  appliedPosition: () => bigint;
  source: CatchUpSource;
  /** Exclusive: deliver events strictly after this position. */
  since: bigint;
  /** Receives every event after `since` exactly once, in log order; may be async (the next waits for it). */
  deliver: (event: RecordedEvent) => Promise<void> | void;
  /** Called once when the live subject completes (shutdown) or fails. */
  onEnd?: (error?: unknown) => void;
}

export interface LiveFeed {
  /** Resolves once catch-up is done (events delivered up to the applied position at the start). */
  caughtUp: Promise<void>;
  stop(): void;
}

/**
 * Catch-up, then live, with no gap and no duplicate:
 *  1. subscribe to the live subject first and queue what it emits;
 *  2. read the applied position P; every event at or below P is in the store, and every event above it will be
 *     published after this subscription (the projector publishes in order, after applying);
 *  3. deliver the store's events in (since, P], then the queue and everything live, skipping positions already sent.
 * Delivery is sequential: an event is handed over only after the previous `deliver` settled.
 */
export function catchUpThenLive(o: CatchUpThenLiveOptions): LiveFeed {
  let last = o.since;
  let stopped = false;
  let live = false;
  const queue: RecordedEvent[] = [];
  let draining: Promise<void> = Promise.resolve();

  const deliverInOrder = async (event: RecordedEvent) => {
    if (stopped || event.position <= last) return;
    last = event.position;
    await o.deliver(event);
  };
  const pump = () => {
    draining = draining
      .then(async () => {
        while (!stopped) {
          const next = queue.shift();
          if (next === undefined) break;
          await deliverInOrder(next);
        }
      })
      .catch((error: unknown) => {
        // A delivery that fails ends the feed (the caller closes its stream); later events are not skipped silently.
        if (stopped) return;
        stopped = true;
        queue.length = 0;
        subscription.unsubscribe();
        o.onEnd?.(error);
      });
  };

  const fromSource = sourceFilter(o.source);
  const subscription: Subscription = o.events.applied$.subscribe({
    next: (event) => {
      if (stopped || !fromSource(event)) return;
      queue.push(event);
      if (live) pump();
    },
    complete: () => o.onEnd?.(),
    error: (error: unknown) => o.onEnd?.(error),
  });
  const upTo = o.appliedPosition();

  // A named function, not an IIFE: `stopped` changes in the callbacks above while this loop awaits.
  const catchUp = async () => {
    for await (const event of readSource(o.store, o.source, o.since)) {
      if (stopped || event.position > upTo) break;
      await deliverInOrder(event);
    }
    live = true;
    pump();
    await draining;
  };
  const caughtUp = catchUp();

  return {
    caughtUp,
    stop() {
      stopped = true;
      queue.length = 0;
      subscription.unsubscribe();
    },
  };
}

/** Whether a live event belongs to the source (what the catch-up read selects in the store). */
function sourceFilter(source: CatchUpSource): (event: RecordedEvent) => boolean {
  if ('streamId' in source) return (event) => event.streamId === source.streamId;
  const prefixes = source.streamPrefixes;
  if (!prefixes) return () => true;
  return (event) => prefixes.some((prefix) => event.streamId.startsWith(prefix));
}

async function* readSource(store: EventStore, source: CatchUpSource, since: bigint): AsyncIterable<RecordedEvent> {
  if ('streamId' in source) {
    try {
      for await (const event of store.readStream(source.streamId)) if (event.position > since) yield event;
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
    return;
  }
  yield* store.readAll({
    fromPosition: since,
    ...(source.streamPrefixes ? { streamPrefixes: source.streamPrefixes } : {}),
  });
}
