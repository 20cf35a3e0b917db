import type { SqliteDatabase } from '../../sqlite/openDatabase';

/** The tables whose rows measure how far a subtree event has got, and the changes counted on each. */
const COUNTED: [table: string, changes: ('INSERT' | 'DELETE' | 'UPDATE')[]][] = [
  ['rm_folders', ['INSERT', 'DELETE', 'UPDATE']],
  ['rm_items', ['INSERT', 'DELETE', 'UPDATE']],
  ['rm_deleted_folders', ['INSERT']],
  ['rm_deleted_items', ['INSERT']],
];

/** Rows between two looks at the clock. */
const CHECK_EVERY_ROWS = 64;

const triggerName = (table: string, change: string) => `bulk_rows_${table}_${change.toLowerCase()}`;

/**
 * Counts the folder and item rows a subtree event writes on the bulk worker's connection, while it runs as a few
 * set-wise statements, and reports the count every `everyMs`: the progress of a long copy or delete (see
 * src/bus/bulkProgress.ts). TEMP triggers (this connection only, never stored in the file) call a function of this
 * thread per row; they exist only while a followed event is applied, so an event nobody follows pays nothing.
 */
export class BulkRowCounter {
  private rows = 0;
  private lastReport = 0;
  private everyMs = 0;
  private report: ((rows: number) => void) | null = null;

  constructor(private readonly db: SqliteDatabase) {
    db.function('rm_bulk_row', { deterministic: false }, () => {
      this.count();
      return null;
    });
  }

  /** Counts the rows `work` writes, calling `report` with the count so far at most every `everyMs`. */
  during<T>(everyMs: number, report: (rows: number) => void, work: () => T): T {
    this.rows = 0;
    this.lastReport = Date.now();
    this.everyMs = everyMs;
    this.report = report;
    this.setTriggers(true);
    try {
      return work();
    } finally {
      this.report = null;
      this.setTriggers(false);
    }
  }

  private count(): void {
    this.rows += 1;
    if (this.rows % CHECK_EVERY_ROWS !== 0 || !this.report) return;
    const now = Date.now();
    if (now - this.lastReport < this.everyMs) return;
    this.lastReport = now;
    this.report(this.rows);
  }

  private setTriggers(on: boolean): void {
    for (const [table, changes] of COUNTED) {
      for (const change of changes) {
        const name = triggerName(table, change);
        this.db.exec(
          on
            ? `CREATE TEMP TRIGGER IF NOT EXISTS ${name} AFTER ${change} ON main.${table} BEGIN SELECT rm_bulk_row(); END`
            : `DROP TRIGGER IF EXISTS temp.${name}`,
        );
      }
    }
  }
}
