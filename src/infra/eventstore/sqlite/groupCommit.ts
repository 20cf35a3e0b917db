import type { Statement, Transaction } from 'better-sqlite3';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import { WrongExpectedVersionError, expectationMet, type ExpectedState } from '../../../ports/eventStore';

/**
 * The write half of the embedded event store: one group commit on one SQLite connection, synchronously. It runs on
 * the service's append worker thread (appendWorker.ts) or, for tools and tests, on the calling thread
 * (sqliteEventStore.ts); either way the same transaction, the same expectations, the same positions.
 */

export const EVENTS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS es_events (
    position  INTEGER PRIMARY KEY AUTOINCREMENT,
    stream_id TEXT    NOT NULL,
    revision  INTEGER NOT NULL,
    event_id  TEXT    NOT NULL,
    type      TEXT    NOT NULL,
    data      TEXT    NOT NULL,
    metadata  TEXT    NOT NULL,
    UNIQUE (stream_id, revision)
  );
`;

/** One event ready for insertion: JSON already serialised (and measured). */
export interface PreparedEvent {
  id: string;
  type: string;
  data: string;
  metadata: string;
}

export interface PreparedAppend {
  streamId: string;
  expectedState: ExpectedState;
  events: PreparedEvent[];
}

export interface StreamOutcome {
  streamId: string;
  /** Revision of the stream's last event after the append; -1n when the stream still has none. */
  revision: bigint;
  /** Position of the stream's last event after the append; undefined when the stream still has none. */
  position: bigint | undefined;
}

export interface AppendOutcome {
  streams: StreamOutcome[];
  /** Position of the last event written, or undefined when nothing was written. */
  lastPosition: bigint | undefined;
}

/** One append request's fate in a group: written, or refused alone (its savepoint rolled back). */
export type GroupResult = { outcome: AppendOutcome } | { error: unknown };

interface StreamHeadRow {
  revision: bigint;
  position: bigint;
}

export class GroupCommit {
  private readonly streamHeadStmt: Statement<[string], StreamHeadRow>;
  private readonly insertStmt: Statement<[string, bigint, string, string, string, string]>;
  private readonly appendTx: Transaction<(appends: PreparedAppend[]) => AppendOutcome>;
  private readonly groupTx: Transaction<(group: PreparedAppend[][]) => GroupResult[]>;

  constructor(db: SqliteDatabase) {
    db.exec(EVENTS_SCHEMA);
    this.streamHeadStmt = db
      .prepare<[string], StreamHeadRow>(
        'SELECT revision, position FROM es_events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1',
      )
      .safeIntegers(true);
    this.insertStmt = db
      .prepare<[string, bigint, string, string, string, string]>(
        'INSERT INTO es_events (stream_id, revision, event_id, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .safeIntegers(true);
    this.appendTx = db.transaction((appends: PreparedAppend[]) => this.appendInTransaction(appends));
    this.groupTx = db.transaction((group: PreparedAppend[][]) => group.map((appends) => this.appendAlone(appends)));
  }

  /**
   * Writes every append request of `group` in one IMMEDIATE transaction, each in a savepoint of its own (a request
   * whose expectation fails rolls back alone and is refused alone), and pays one commit, hence one fsync
   * (synchronous=FULL): when this returns, what it reports written is on disk. Positions follow the order of `group`.
   * Throws when the transaction itself fails (lock timeout, I/O error): then nothing of the group was written.
   */
  commit(group: PreparedAppend[][]): GroupResult[] {
    return this.groupTx.immediate(group);
  }

  private appendAlone(appends: PreparedAppend[]): GroupResult {
    try {
      return { outcome: this.appendTx(appends) };
    } catch (error) {
      return { error };
    }
  }

  /** Runs inside the write transaction: checks every expectation first, then writes. Throwing rolls back. */
  private appendInTransaction(appends: PreparedAppend[]): AppendOutcome {
    const current = appends.map((a) => this.streamHeadStmt.get(a.streamId));
    appends.forEach((a, i) => {
      const actual = current[i]?.revision ?? 'no_stream';
      if (!expectationMet(a.expectedState, actual))
        throw new WrongExpectedVersionError(a.streamId, a.expectedState, actual);
    });
    let lastPosition: bigint | undefined;
    const streams = appends.map((a, i): StreamOutcome => {
      let revision = current[i]?.revision ?? -1n;
      let position = current[i]?.position;
      for (const e of a.events) {
        revision += 1n;
        const info = this.insertStmt.run(a.streamId, revision, e.id, e.type, e.data, e.metadata);
        position = BigInt(info.lastInsertRowid);
        lastPosition = position;
      }
      return { streamId: a.streamId, revision, position };
    });
    return { streams, lastPosition };
  }
}
