import type { Statement, Transaction } from 'better-sqlite3';
import type { SqliteDatabase } from '../../sqlite/openDatabase';
import { WrongExpectedVersionError, expectationMet, type ExpectedState } from '../../../ports/eventStore';
import type { LeaseFence } from '../../../ports/readModel';

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

interface StreamOutcome {
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

/** An event as its append wrote it: what a projection in the same transaction needs. */
export interface AppendedEvent extends PreparedEvent {
  streamId: string;
  revision: bigint;
  position: bigint;
}

/**
 * Projects a group's events inside the group's own transaction (src/ports/projectionInAppend.ts): called after its
 * appends with the events written, in position order, and the projector's lease fence. Returns the position through
 * which it projected them (undefined: none). It keeps its own failures to itself (a savepoint of its own), so that the
 * appends commit whatever happens to their projection.
 */
export type ProjectAppended = (appended: AppendedEvent[], fence: LeaseFence) => bigint | undefined;

/** A group's fate: each request's, and how far the group's transaction projected (when asked to). */
export interface GroupOutcome {
  results: GroupResult[];
  projectedThrough?: bigint;
}

interface StreamHeadRow {
  revision: bigint;
  position: bigint;
}

export class GroupCommit {
  private readonly streamHeadStmt: Statement<[string], StreamHeadRow>;
  private readonly insertStmt: Statement<[string, bigint, string, string, string, string]>;
  private readonly appendTx: Transaction<(appends: PreparedAppend[]) => AppendOutcome>;
  private readonly groupTx: Transaction<(group: PreparedAppend[][], fence: LeaseFence | undefined) => GroupOutcome>;
  /** The events the current group wrote, for {@link ProjectAppended} (collected only when it will run). */
  private appended: AppendedEvent[] | null = null;

  constructor(
    db: SqliteDatabase,
    private readonly project?: ProjectAppended,
  ) {
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
    this.groupTx = db.transaction((group: PreparedAppend[][], fence: LeaseFence | undefined) =>
      this.commitInTransaction(group, fence),
    );
  }

  /**
   * Writes every append request of `group` in one IMMEDIATE transaction, each in a savepoint of its own (a request
   * whose expectation fails rolls back alone and is refused alone), and pays one commit, hence one fsync
   * (synchronous=FULL): when this returns, what it reports written is on disk. Positions follow the order of `group`.
   * Throws when the transaction itself fails (lock timeout, I/O error): then nothing of the group was written.
   *
   * With `fence` (and a {@link ProjectAppended} given to the constructor), the same transaction also projects what it
   * appended, under that fence.
   */
  commit(group: PreparedAppend[][], fence?: LeaseFence): GroupOutcome {
    return this.groupTx.immediate(group, fence);
  }

  private commitInTransaction(group: PreparedAppend[][], fence: LeaseFence | undefined): GroupOutcome {
    const project = this.project;
    if (!project || !fence) return { results: group.map((appends) => this.appendAlone(appends)) };
    this.appended = [];
    try {
      const results = group.map((appends) => this.appendAlone(appends));
      const appended = this.appended;
      const projectedThrough = appended.length > 0 ? project(appended, fence) : undefined;
      return projectedThrough === undefined ? { results } : { results, projectedThrough };
    } finally {
      this.appended = null;
    }
  }

  private appendAlone(appends: PreparedAppend[]): GroupResult {
    const collected = this.appended?.length;
    try {
      return { outcome: this.appendTx(appends) };
    } catch (error) {
      // Its savepoint rolled back: so do the events it had collected.
      if (collected !== undefined) this.appended?.splice(collected);
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
        this.appended?.push({ ...e, streamId: a.streamId, revision, position });
      }
      return { streamId: a.streamId, revision, position };
    });
    return { streams, lastPosition };
  }
}
