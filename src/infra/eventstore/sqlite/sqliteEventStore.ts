import type { SqliteDatabase } from '../../sqlite/openDatabase';
import type {
  AppendResult,
  EventStore,
  ExpectedState,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  StreamAppend,
  SubscribeAllOptions,
  Subscription,
} from '../../../ports/eventStore';
import { EVENTS_SCHEMA } from './groupCommit';
import { GroupedAppends, type GroupedAppendOptions } from './groupedAppends';
import { EventLogReads } from './eventLogReads';
import { LiveSubscriptions } from './liveSubscriptions';

export type SqliteEventStoreOptions = GroupedAppendOptions;

/**
 * The embedded EventStore: one append-only table in the service's SQLite file, on one connection. Appends are
 * committed in groups (groupedAppends.ts), reads page the log by position (eventLogReads.ts), and subscriptions
 * catch up and then wait for the next commit (liveSubscriptions.ts).
 */
export class SqliteEventStore implements EventStore {
  private readonly appends: GroupedAppends;
  private readonly reads: EventLogReads;
  private readonly subscriptions: LiveSubscriptions;

  constructor(db: SqliteDatabase, options: SqliteEventStoreOptions = {}) {
    db.exec(EVENTS_SCHEMA);
    this.appends = new GroupedAppends(db, options, () => this.subscriptions.notifyAll());
    this.reads = new EventLogReads(db);
    this.subscriptions = new LiveSubscriptions(this.reads);
  }

  async appendToStream(
    streamId: string,
    events: NewEvent[],
    options: { expectedState: ExpectedState },
  ): Promise<AppendResult> {
    const outcome = await this.appends.append([{ streamId, expectedState: options.expectedState, events }]);
    const stream = outcome.streams[0];
    return {
      nextExpectedRevision: stream.revision,
      position: stream.position ?? this.reads.head(),
    };
  }

  async appendToStreams(appends: StreamAppend[]): Promise<{ position: bigint }> {
    const outcome = await this.appends.append(appends);
    return { position: outcome.lastPosition ?? this.reads.head() };
  }

  readStream(streamId: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    return this.reads.readStream(streamId, options);
  }

  readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    return this.reads.readAll(options);
  }

  streamRevision(streamId: string): Promise<bigint | 'no_stream'> {
    return this.reads.streamRevision(streamId);
  }

  async headPosition(): Promise<bigint> {
    return this.reads.head();
  }

  streamRevisionAndHead(streamId: string): Promise<{ revision: bigint | 'no_stream'; head: bigint }> {
    return this.reads.streamRevisionAndHead(streamId);
  }

  subscribeToAll(options: SubscribeAllOptions = {}): Subscription {
    return this.subscriptions.subscribeToAll(options);
  }

  async dispose(): Promise<void> {
    this.subscriptions.dispose();
    // Appends already requested are still written (and answered) before the worker stops.
    await this.appends.close();
  }
}
