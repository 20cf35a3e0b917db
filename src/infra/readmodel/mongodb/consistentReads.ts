import type { Generations } from './generations';

/**
 * A store whose public methods all return promises: what {@link consistentReads} may wrap. A sync method, a getter
 * computed per call or an iterator would come back from the wrap as a promise; the type refuses such a store.
 */
export type AsyncMethodsOnly<T> = {
  [K in keyof T]: T[K] extends (...args: never[]) => infer R ? (R extends Promise<unknown> ? T[K] : never) : T[K];
};

/**
 * A store whose every method call runs through {@link Generations.consistent}: each call (one query or several)
 * sees an event applied in steps whole or not at all, even when it began before the event's barrier rose and ran
 * longer than the alias cache (./stepwiseApply.ts). The check is here, around the stores' public methods, and not
 * in each of their queries, so that a call made of several queries is one read: it is run again as a whole.
 *
 * Every public method of the query stores is async and only reads (the type says the first), so running one again
 * is harmless. Calls the store makes on itself (`this.…`) go to the store itself and are not checked twice.
 */
export function consistentReads<T extends AsyncMethodsOnly<T>>(store: T, generations: Generations): T {
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => Promise<unknown>;
      return (...args: unknown[]) => generations.consistent(() => method.apply(target, args));
    },
  });
}
