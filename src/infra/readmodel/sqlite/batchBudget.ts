/** Events in the first transaction, before any was measured: a handful of ordinary events take a few ms. */
const FIRST_LIMIT = 32;
/** Weight of the latest batch in the running cost per event (the rest is the history). */
const LATEST_WEIGHT = 0.3;

/**
 * How many events one live projection transaction may take so that it holds the event loop for about `budgetMs`.
 *
 * A transaction on the embedded read model runs synchronously: nothing else of the process runs until it commits.
 * What an event costs depends on the size of the tables (pages the cache no longer holds), on the machine's load and
 * on the kind of event, so a fixed count is either small for the common case or long at scale (500 creates took
 * 50–190 ms with 100k folders on a loaded 2-core machine). The limit follows the measured cost per event: a running
 * average of the latest transactions, so one slow event shrinks the next transactions for a while, not for good.
 */
export class BatchBudget {
  private msPerEvent = 0;

  constructor(private readonly budgetMs: number) {}

  /** Events the next transaction may take of `available` (a few until a cost was measured). */
  limit(available: number): number {
    if (this.msPerEvent === 0) return Math.min(available, FIRST_LIMIT);
    return Math.max(1, Math.min(available, Math.floor(this.budgetMs / this.msPerEvent)));
  }

  /** Records the synchronous time one transaction of `events` events took. */
  record(events: number, ms: number): void {
    if (events === 0) return;
    const cost = ms / events;
    this.msPerEvent = this.msPerEvent === 0 ? cost : LATEST_WEIGHT * cost + (1 - LATEST_WEIGHT) * this.msPerEvent;
  }
}
