import type { EventStore, RecordedEvent, Subscription } from '../ports/eventStore';
import type { CheckpointWatcher } from './checkpointWatcher';

/** A loop over an `$all` subscription the projector runs (projecting, or following as a standby). */
export interface ActiveLoop {
  subscription: Subscription;
  loop: Promise<void>;
  /** Aborts a follower's wait for the checkpoint. */
  abort?: AbortController;
}

/**
 * A standby's loop: tails the log from `from` and hands on each event once the shared checkpoint (`watcher`) has
 * passed it, that is once the lease holder's projections reflect it. `failed` hears why the loop ended (it does not
 * when the loop is aborted).
 */
export function followLog(
  store: EventStore,
  watcher: CheckpointWatcher,
  from: bigint,
  handlers: { reached(event: RecordedEvent): void; failed(error: unknown, subscription: Subscription): void },
): ActiveLoop {
  const subscription = store.subscribeToAll({ fromPosition: from });
  const abort = new AbortController();
  const loop = (async () => {
    try {
      for await (const item of subscription) {
        if (item.kind === 'caughtUp') continue;
        await watcher.until(item.event.position, { signal: abort.signal });
        handlers.reached(item.event);
      }
    } catch (error) {
      if (abort.signal.aborted) return;
      await subscription.unsubscribe().catch(() => undefined);
      handlers.failed(error, subscription);
    }
  })();
  return { subscription, loop, abort };
}
