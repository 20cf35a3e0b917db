import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import { prepared } from '../../sqlite/preparedStatements';
import { sqlLimit } from '../../sqlite/sqlLimit';
import {
  StreamNotFoundError,
  type EventMetadata,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
} from '../../../ports/eventStore';

/** Rows fetched per query by the paging readers and subscriptions. */
const PAGE_SIZE = 500;
const EVENT_COLUMNS = 'position, stream_id, revision, event_id, type, data, metadata';
const MAX_INT64 = 9223372036854775807n;

/**
 * One row of `es_events` as an array (statements in raw mode): better-sqlite3 builds an object per row otherwise,
 * which cost as much as the query itself when a rebuild reads the whole log.
 */
export type EventRow = [
  position: bigint,
  streamId: string,
  revision: bigint,
  eventId: string,
  type: string,
  data: string,
  metadata: string,
];

interface StreamHeadRow {
  revision: bigint;
  position: bigint;
}

/**
 * Reads of the event log (`es_events`) on one connection: a stream, `$all`, the head and a stream's revision.
 *
 * `position` is an AUTOINCREMENT rowid. SQLite admits one writer at a time (appends use BEGIN IMMEDIATE), so
 * positions are handed out in commit order and a reader that sees position N has seen every position below N;
 * that is what lets readers and subscriptions page by position without ever skipping an event.
 */
export class EventLogReads {
  private readonly streamHeadStmt: Statement<[string], StreamHeadRow>;
  private readonly headStmt: Statement<[], { head: bigint | null }>;
  private readonly streamRevisionAndHeadStmt: Statement<[string], { revision: bigint | null; head: bigint | null }>;

  constructor(private readonly db: SqliteDatabase) {
    this.streamHeadStmt = db
      .prepare<[string], StreamHeadRow>(
        'SELECT revision, position FROM es_events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1',
      )
      .safeIntegers(true);
    this.headStmt = db
      .prepare<[], { head: bigint | null }>('SELECT max(position) AS head FROM es_events')
      .safeIntegers(true);
    this.streamRevisionAndHeadStmt = db
      .prepare<[string], { revision: bigint | null; head: bigint | null }>(
        `SELECT (SELECT revision FROM es_events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1) AS revision,
          (SELECT max(position) FROM es_events) AS head`,
      )
      .safeIntegers(true);
  }

  async *readStream(streamId: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    const backwards = options.direction === 'backwards';
    let next = options.fromRevision ?? (backwards ? MAX_INT64 : 0n);
    let remaining = options.maxCount ?? Infinity;
    let first = true;
    while (remaining > 0) {
      const rows = this.eventRows(
        `SELECT ${EVENT_COLUMNS} FROM es_events WHERE stream_id = ? AND revision ${backwards ? '<=' : '>='} ? ` +
          `ORDER BY revision ${backwards ? 'DESC' : 'ASC'} ${sqlLimit(Math.min(PAGE_SIZE, remaining))}`,
      ).all(streamId, next);
      if (first && rows.length === 0 && this.streamHeadStmt.get(streamId) === undefined) {
        throw new StreamNotFoundError(streamId);
      }
      first = false;
      for (const row of rows) yield toRecordedEvent(row);
      remaining -= rows.length;
      if (rows.length < PAGE_SIZE) break;
      const last = rows[rows.length - 1][2];
      next = backwards ? last - 1n : last + 1n;
      if (next < 0n) break;
    }
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    const backwards = options.direction === 'backwards';
    const prefixes = normalisePrefixes(options.streamPrefixes);
    const from = options.fromPosition ?? 0n;
    let cursor = backwards && from === 0n ? MAX_INT64 : from;
    let remaining = options.maxCount ?? Infinity;
    if (options.onlyTypes && !backwards && prefixes.length === 0) {
      yield* this.readAllOfTypes(cursor, remaining, options.onlyTypes);
      return;
    }
    while (remaining > 0) {
      const limit = Math.min(PAGE_SIZE, remaining);
      const rows = this.readAllStatement(backwards, prefixes.length, limit).all(cursor, ...prefixParams(prefixes));
      for (const row of rows) yield toRecordedEvent(row);
      remaining -= rows.length;
      if (rows.length < limit) break;
      cursor = rows[rows.length - 1][0];
    }
  }

  /**
   * Forward `$all` read of the events of some types only: the others never leave SQLite (in a replay, half the log
   * is `ValueClaimed`, which no projection reads). Each page and the count of what it passed over are read in one
   * transaction, so an append committed meanwhile is neither delivered nor counted by this page (the next one reads
   * it).
   */
  private async *readAllOfTypes(
    from: bigint,
    maxCount: number,
    { types, onSkipped }: NonNullable<ReadAllOptions['onlyTypes']>,
  ): AsyncIterable<RecordedEvent> {
    const typesJson = JSON.stringify(types);
    const pageOfTypes = (limit: number) =>
      this.eventRows(
        `SELECT ${EVENT_COLUMNS} FROM es_events
          WHERE position > ? AND type IN (SELECT value FROM json_each(?)) ORDER BY position ${sqlLimit(limit)}`,
      );
    const passedOver = prepared(
      this.db,
      'SELECT COUNT(*) AS events, MAX(position) AS last FROM es_events WHERE position > ? AND position <= ?',
    ).safeIntegers(true) as Statement<unknown[], { events: bigint; last: bigint | null }>;
    const readPage = this.db.transaction((cursor: bigint, limit: number) => {
      const rows = pageOfTypes(limit).all(cursor, typesJson);
      // A full page covers the log up to its last event; the last page covers the rest of it.
      const through = rows.length === limit ? rows[rows.length - 1][0] : MAX_INT64;
      const range = passedOver.get(cursor, through);
      return { rows, skipped: Number(range?.events ?? 0n) - rows.length, through: range?.last ?? cursor };
    });
    let cursor = from;
    let remaining = maxCount;
    while (remaining > 0) {
      const limit = Math.min(PAGE_SIZE, remaining);
      const { rows, skipped, through } = readPage(cursor, limit);
      for (const row of rows) yield toRecordedEvent(row);
      if (skipped > 0) onSkipped(skipped, through);
      remaining -= rows.length;
      if (rows.length < limit) break;
      cursor = rows[rows.length - 1][0];
    }
  }

  async streamRevision(streamId: string): Promise<bigint | 'no_stream'> {
    return this.streamHeadStmt.get(streamId)?.revision ?? 'no_stream';
  }

  async streamRevisionAndHead(streamId: string): Promise<{ revision: bigint | 'no_stream'; head: bigint }> {
    // One statement, so one read transaction: on the embedded deployment each costs a pair of lock calls.
    // Two scalar subqueries: always one row.
    const row = this.streamRevisionAndHeadStmt.get(streamId) as { revision: bigint | null; head: bigint | null };
    return { revision: row.revision ?? 'no_stream', head: row.head ?? 0n };
  }

  /** The last position committed (0 for an empty log). */
  head(): bigint {
    return this.headStmt.get()?.head ?? 0n;
  }

  /** A statement reading event rows (raw, 64-bit integers as bigints), compiled once per connection and text. */
  private eventRows(sql: string): Statement<unknown[], EventRow> {
    return prepared<unknown[], EventRow>(this.db, sql).safeIntegers(true).raw(true);
  }

  private readAllStatement(backwards: boolean, prefixCount: number, limit: number): Statement<unknown[], EventRow> {
    const filter = prefixCount
      ? ` AND (${Array.from({ length: prefixCount }, () => 'substr(stream_id, 1, length(?)) = ?').join(' OR ')})`
      : '';
    return this.eventRows(
      `SELECT ${EVENT_COLUMNS} FROM es_events WHERE position ${backwards ? '<' : '>'} ?${filter} ` +
        `ORDER BY position ${backwards ? 'DESC' : 'ASC'} ${sqlLimit(limit)}`,
    );
  }

  /**
   * One forward page of $all after `cursor`, bounded by the head read just before it. Every position up to that
   * head is committed, so when the page is not full the caller has seen everything up to `scannedTo`, including
   * the events the prefix filter dropped.
   */
  scanPage(cursor: bigint, prefixes: string[]): { rows: EventRow[]; scannedTo: bigint; full: boolean } {
    const head = this.head();
    if (head <= cursor) return { rows: [], scannedTo: cursor, full: false };
    const rows = this.readAllStatement(false, prefixes.length, PAGE_SIZE)
      .all(cursor, ...prefixParams(prefixes))
      .filter((row) => row[0] <= head);
    const full = rows.length === PAGE_SIZE;
    return { rows, scannedTo: full ? rows[rows.length - 1][0] : head, full };
  }
}

export function normalisePrefixes(prefixes: string[] | undefined): string[] {
  return prefixes ? [...new Set(prefixes)] : [];
}

function prefixParams(prefixes: string[]): string[] {
  return prefixes.flatMap((p) => [p, p]);
}

export function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    id: row[3],
    streamId: row[1],
    revision: row[2],
    position: row[0],
    type: row[4],
    data: JSON.parse(row[5]) as unknown,
    metadata: JSON.parse(row[6]) as EventMetadata,
  };
}
