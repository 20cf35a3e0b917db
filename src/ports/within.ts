/**
 * A bound on how long a call to a store may take: the promise's outcome, or a rejection naming `what` once `ms`
 * pass. The call itself is not cancelled (a store API seldom can be); the caller stops waiting for it. The timer does
 * not keep the process alive. In the ports layer because every layer that calls a store (projections, http, the
 * adapters) may import it.
 */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}
