import type { Generations } from './generations';

/**
 * A store whose every method call runs through {@link Generations.consistent}: each call (one query or several)
 * sees an event applied in steps whole or not at all, even when it began before the event's barrier rose and ran
 * longer than the alias cache (./stepwiseApply.ts). The check is here, around the stores' public methods, and not
 * in each of their queries, so that a call made of several queries is one read: it is run again as a whole.
 *
 * Every public method of the query stores is async and only reads, so running one again is harmless. Calls the
 * store makes on itself (`this.…`) go to the store itself and are not checked twice.
 */
export function consistentReads<T extends object>(store: T, generations: Generations): T {
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => Promise<unknown>;
      return (...args: unknown[]) => generations.consistent(() => method.apply(target, args));
    },
  });
}
