const TURN_END = Symbol('turn end');

/**
 * Groups the items of an async iterable into arrays of what is already available: a batch ends when `max` items are
 * in, or when the source would make us wait past the current event-loop turn (a `setImmediate`). A subscription
 * paging through a backlog yields hundreds per batch; a live one yields what one commit (or one group commit)
 * brought, so a lone event is never held back waiting for company.
 *
 * The source is not returned (closed) by this generator: its owner ends it (the projector unsubscribes), which also
 * settles a `next()` still waiting for a commit.
 */
export async function* inBatches<T>(source: AsyncIterable<T>, max: number): AsyncGenerator<T[]> {
  const it = source[Symbol.asyncIterator]();
  let pending = it.next();
  for (;;) {
    const first = await pending;
    if (first.done) return;
    const batch = [first.value];
    const turnEnd = new Promise<typeof TURN_END>((resolve) => setImmediate(resolve, TURN_END));
    for (;;) {
      pending = it.next();
      if (batch.length >= max) break;
      const next = await Promise.race([pending, turnEnd]);
      if (next === TURN_END) break;
      if (next.done) {
        yield batch;
        return;
      }
      batch.push(next.value);
    }
    yield batch;
  }
}
