import type { BulkProgressReports } from '../ports/bulkProgress';

/**
 * How far a large subtree event has got while it is applied off the event loop
 * (src/infra/readmodel/sqlite/bulkApply.ts),
 * for the request that caused it: the bulk worker reports the subtree entries (folders and items) it has processed,
 * keyed by the `requestId` of the event's metadata, and the route running that request (following it through its
 * progress context, src/bus/progress.ts) turns them into a moving `current`.
 *
 * In process only: a report is a hint for a progress bar, never state; nobody following means nothing is reported
 * (the worker then does not even count).
 */
export type BulkProgressListener = (entriesDone: number) => void;

export class BulkProgressBus implements BulkProgressReports {
  private readonly listeners = new Map<string, Set<BulkProgressListener>>();

  /** Calls `listener` with each report for `requestId` until the returned function is called. */
  follow(requestId: string, listener: BulkProgressListener): () => void {
    let set = this.listeners.get(requestId);
    if (!set) this.listeners.set(requestId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(requestId) === set) this.listeners.delete(requestId);
    };
  }

  /** Whether a report for `requestId` would reach anyone. */
  wanted(requestId: string): boolean {
    return this.listeners.has(requestId);
  }

  report(requestId: string, entriesDone: number): void {
    for (const listener of this.listeners.get(requestId) ?? []) listener(entriesDone);
  }
}
