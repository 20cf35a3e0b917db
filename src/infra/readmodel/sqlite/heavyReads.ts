import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type { OffLoopReads, ReadStatement } from '../../sqlite/offLoopReads';
import { readRows } from '../../sqlite/preparedStatements';
import type { Paging } from '../../../domain/paging';
import { beforeRowSql, pagingSql, type SortColumns } from './sqlHelpers';

/**
 * The offset from which a page leaves the event loop even when an index serves its sort: Girder pages by offset, and
 * reaching it walks that many index entries (~0.1 µs each on the development VM: ~5 ms at this offset, ~100 ms at
 * 1M). Below it the walk costs less than the hand-off to the reader thread adds to the caller's wait.
 */
const DEEP_OFFSET = 50_000;

/** Whether a listing's page reads much more than it returns: a sort none of `indexedSorts` serves, or a deep offset. */
function pageScans(paging: Paging, indexedSorts: ReadonlySet<string>): boolean {
  return !indexedSorts.has(paging.sort) || paging.offset >= DEEP_OFFSET;
}

/**
 * Whether a listing of a parent's children scans: never with an exact name (one row at most); with a text filter, or
 * a page that scans ({@link pageScans}).
 */
export function listingScans(
  filter: { name?: string; text?: string },
  paging: Paging,
  indexedSorts: ReadonlySet<string>,
): boolean {
  return filter.name === undefined && (filter.text !== undefined || pageScans(paging, indexedSorts));
}

/** A table as its listings read it: the row's columns (prefixed by `alias`) and the columns a sort may name. */
export interface ListedTable {
  table: string;
  alias: string;
  columns: string;
  sortColumns: SortColumns;
}

/**
 * The read models' queries whose cost grows with the rows they scan rather than with the page they return: listings
 * sorted on a key no index serves or paged to a deep offset ({@link pageScans}), full-text filters and searches. Run
 * on the read models' own connection until the live service hands them a reader thread ({@link moveOffLoop}:
 * src/infra/sqlite/offLoopReads.ts), then there, so that they never hold the event loop.
 */
export class HeavyReads {
  private offLoop: OffLoopReads | null = null;

  constructor(private readonly db: SqliteDatabase) {}

  moveOffLoop(reads: OffLoopReads): void {
    this.offLoop = reads;
  }

  /** Stops the reader thread, if any (with the read model). */
  async close(): Promise<void> {
    await this.offLoop?.close();
    this.offLoop = null;
  }

  /** Each statement's rows; when `heavy`, off the loop (read in one snapshot) once the service moved them there. */
  async all(statements: ReadStatement[], heavy = true): Promise<unknown[][]> {
    // Inside a transaction of this connection, only this connection sees its writes.
    if (heavy && this.offLoop && !this.db.inTransaction) return this.offLoop.read(statements);
    return statements.map((statement) => readRows(this.db, statement));
  }

  /** A listing's page and its total: `known.total` when the caller has it, `count`'s otherwise. */
  async page<Row>(
    page: ReadStatement,
    count: ReadStatement,
    known: { heavy: boolean; total?: number },
  ): Promise<{ rows: Row[]; total: number }> {
    const reads = known.total === undefined ? [page, count] : [page];
    const [rows, counted] = (await this.all(reads, known.heavy)) as [Row[], { n: number }[]?];
    return { rows, total: known.total ?? counted?.[0].n ?? 0 };
  }

  /** A page of `listed`'s rows under `where` (raw rows, `listed.columns` in order) and its total, as {@link page}. */
  async listing<Row>(
    listed: ListedTable,
    where: string,
    args: unknown[],
    paging: Paging,
    known: { heavy: boolean; total?: number },
  ): Promise<{ rows: Row[]; total: number }> {
    const from = `FROM ${listed.table} ${listed.alias} ${where}`;
    const page = pagingSql(paging, listed.sortColumns, listed.alias);
    return this.page<Row>(
      { sql: `SELECT ${listed.columns} ${from}${page.sql}`, args: [...args, ...page.args], raw: true },
      { sql: `SELECT COUNT(*) AS n ${from}`, args },
      known,
    );
  }

  /**
   * How many of `listed`'s rows under `clauses` come before row `id` in `paging`'s order (its limit and offset play no
   * part): the index `GET /folder/:id/position` answers. A count over the matching rows, so a heavy read.
   */
  async position(listed: ListedTable, clauses: string[], args: unknown[], paging: Paging, id: string): Promise<number> {
    const before = beforeRowSql(paging, listed.sortColumns, listed.table, listed.alias, id);
    const sql = `SELECT COUNT(*) AS n FROM ${listed.table} ${listed.alias} ${before.join}
      WHERE ${[...clauses, before.condition].join(' AND ')}`;
    const [rows] = (await this.all([{ sql, args: [...before.joinArgs, ...args, ...before.args] }])) as [
      { n: number }[],
    ];
    return rows[0]?.n ?? 0;
  }
}
