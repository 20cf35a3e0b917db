import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { OffLoopReads, ReadStatement } from '../../sqlite/offLoopReads';
import { prepared } from '../../sqlite/preparedStatements';

/**
 * The read models' queries whose cost grows with the rows they scan rather than with the page they return: listings
 * sorted on a key no index serves, and full-text filters and searches. Run on the read models' own connection until
 * the live service hands them a reader thread ({@link moveOffLoop}: src/infra/sqlite/offLoopReads.ts), then there, so
 * that they never hold the event loop.
 */
export class HeavyReads {
  private offLoop: OffLoopReads | null = null;

  constructor(private readonly db: SqliteDatabase) {}

  moveOffLoop(reads: OffLoopReads): void {
    this.offLoop = reads;
  }

  /** Each statement's rows (off the loop, read in one snapshot). */
  async all(statements: ReadStatement[]): Promise<unknown[][]> {
    // Inside a transaction of this connection, only this connection sees its writes.
    if (this.offLoop && !this.db.inTransaction) return this.offLoop.read(statements);
    return statements.map((statement) => prepared(this.db, statement.sql).all(...statement.args));
  }
}
