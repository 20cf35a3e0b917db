import type { Subscription } from 'rxjs';
import type { BehaviorSubject, Subject } from '../bus/rxjs';

/**
 * Resolves once `position$` reaches `position`; rejects with the error of `failed$` when it errors, or with
 * `timeoutError()` after `timeoutMs`. Two plain subscriptions and a timer: every write waits here
 * (read-your-writes), and the operator chain it replaced (merge, filter, timeout, firstValueFrom) built a pipeline
 * of subscribers per wait.
 */
export function positionReached(
  position$: BehaviorSubject<bigint>,
  failed$: Subject<never>,
  position: bigint,
  wait: { timeoutMs: number; timeoutError: () => Error },
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const subscriptions: Subscription[] = [];
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      for (const subscription of subscriptions) subscription.unsubscribe();
      outcome();
    };
    // A subject may answer while it is being subscribed to (position$ holds its value, an errored failed$ errors).
    const track = (subscription: Subscription) => {
      if (settled) subscription.unsubscribe();
      else subscriptions.push(subscription);
    };
    const timer = setTimeout(() => settle(() => reject(wait.timeoutError())), wait.timeoutMs);
    track(failed$.subscribe({ error: (error: Error) => settle(() => reject(error)) }));
    track(position$.subscribe((reachedPosition) => reachedPosition >= position && settle(resolve)));
  });
}
