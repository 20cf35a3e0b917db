import type { SqliteDatabase } from './openDatabase';

/** How often, at most, a checkpoint runs while commits go on (and how long after the last commit the final one). */
const EVERY_MS = 200;

/**
 * WAL checkpoints run by the append worker's thread, between groups, rather than inside a commit.
 *
 * By default a commit that grows the WAL past 1,000 pages runs a checkpoint inside that commit: it copies the WAL
 * into the database file and fsyncs twice. On the main thread (a projection batch, a lease renewal) that stood the
 * event loop still; in the worker it delayed the answer to a whole group of writers. The main connection's threshold
 * is therefore high (src/infra/sqlite/liveConnection.ts: a safety bound only), and the worker turns automatic
 * checkpoints off and runs a PASSIVE one (it never waits for a lock, and copies what no reader still needs) after it
 * has answered a group, at most every {@link EVERY_MS}, and once more that long after the last commit. The answered
 * writers go on while it runs; only the next group waits for it.
 */
export class WorkerCheckpoints {
  private lastRun = 0;
  private pending: NodeJS.Timeout | undefined;

  constructor(private readonly db: SqliteDatabase) {
    db.pragma('wal_autocheckpoint = 0');
  }

  /** Called after each group's answer was sent. */
  afterCommit(): void {
    if (Date.now() - this.lastRun >= EVERY_MS) this.run();
    else this.pending ??= setTimeout(() => this.run(), EVERY_MS);
  }

  private run(): void {
    clearTimeout(this.pending);
    this.pending = undefined;
    this.lastRun = Date.now();
    try {
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // A checkpoint that cannot write (a full disk: SQLITE_FULL) leaves the WAL as it was, every commit in it: the
      // next one retries. Thrown here it would end the worker thread, and fail the next writer with "the append
      // worker exited" instead of the fault its own commit would name.
    }
  }
}
