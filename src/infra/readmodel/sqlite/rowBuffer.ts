import { prepared } from '../../sqlite/preparedStatements';
import type { SqliteDatabase } from '../../sqlite/openDatabase';

/** Rows per multi-row INSERT: one statement run (and one trip into SQLite) writes this many. */
const ROWS_PER_STATEMENT = 64;

/**
 * Rows of one table collected in JS and written with multi-row `INSERT … VALUES (…), (…)` statements, in the order
 * they were added (a statement's rows are inserted in order). A row written alone costs a statement run of its own
 * (binding, VDBE setup and teardown, the call into the addon); sixty-four to a statement share that.
 */
export class RowBuffer {
  private values: unknown[] = [];
  private readonly full: string;
  private readonly single: string;

  constructor(
    private readonly db: SqliteDatabase,
    insert: string,
    private readonly columns: number,
  ) {
    const row = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
    this.full = `${insert} VALUES ${Array.from({ length: ROWS_PER_STATEMENT }, () => row).join(', ')}`;
    this.single = `${insert} VALUES ${row}`;
  }

  /** Adds one row (`columns` values). */
  add(...row: unknown[]): void {
    for (const value of row) this.values.push(value);
  }

  /** Hands over the rows added since the last write (for {@link write} on another connection's buffer). */
  take(): unknown[] {
    const { values } = this;
    this.clear();
    return values;
  }

  /** Writes the rows added since the last write (or `values`, rows taken from a buffer of the same table), in order. */
  write(values: unknown[] = this.take()): void {
    const { columns } = this;
    const rows = values.length / columns;
    let at = 0;
    if (rows >= ROWS_PER_STATEMENT) {
      const full = prepared(this.db, this.full);
      const width = ROWS_PER_STATEMENT * columns;
      for (; values.length - at >= width; at += width) full.run(values.slice(at, at + width));
    }
    if (at < values.length) {
      const single = prepared(this.db, this.single);
      for (; at < values.length; at += columns) single.run(values.slice(at, at + columns));
    }
  }

  /** Forgets the rows not written. */
  clear(): void {
    this.values = [];
  }
}
