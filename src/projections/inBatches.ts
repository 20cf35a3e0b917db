const TURN_END = Symbol('turn end');

/**
 * Groups the items of an async iterable into arrays of what is already available: a batch ends when `max` items are
 * in, or when the source would make us wait past the current event-loop turn (a `setImmediate`). A subscription
 * paging through a backlog yields hundreds per batch; a live one yields what one commit (or one group commit)
 * brought, so a lone event is never held back waiting for company.
 *
 * Between two batches the generator yields to the event loop (one `setImmediate`). A source that always has items
 * ready (a backlog, or another process appending back to back) resolves every `next()` in microtasks, and batches
 * chained that way never let a timer or a request run until the source runs dry: seconds without an answer, and a
 * lease renewal that never fires.
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
    const turnEnd = nextTurn(TURN_END);
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
    await nextTurn(undefined);
  }
}

function nextTurn<V>(value: V): Promise<V> {
  return new Promise<V>((resolve) => setImmediate(resolve, value));
}
