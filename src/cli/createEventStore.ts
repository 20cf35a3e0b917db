import type pino from 'pino';
import type { Config } from '../config';
import type { EventStore } from '../ports/eventStore';
import type { SqliteDatabase } from '../infra/sqlite/openDatabase';
import { SqliteEventStore, type SqliteEventStoreOptions } from '../infra/eventstore/sqlite/sqliteEventStore';
import { SERVICE_STREAM_PREFIXES } from '../infra/eventstore/kurrentdb/streamPrefixes';

/** The configured event store: the embedded SQLite log, or KurrentDB (probed within the connect timeout). */
export async function createEventStore(
  config: Config,
  db: SqliteDatabase | null,
  logger?: pino.Logger,
  sqlite: SqliteEventStoreOptions = {},
): Promise<EventStore> {
  switch (config.eventStore) {
    case 'sqlite':
      if (!db) throw new Error('EVENT_STORE=sqlite needs the SQLite file under DATA_DIR.');
      return new SqliteEventStore(db, sqlite);
    case 'kurrentdb': {
      // Loaded only when configured: the gRPC client costs start-up time and memory the embedded default never uses.
      const { KurrentDbEventStore } =
        require('../infra/eventstore/kurrentdb/kurrentdbEventStore') as typeof import('../infra/eventstore/kurrentdb/kurrentdbEventStore');
      // loadConfig refuses EVENT_STORE=kurrentdb without KURRENTDB_URL.
      if (!config.kurrentdbUrl) throw new Error('EVENT_STORE=kurrentdb needs KURRENTDB_URL.');
      return KurrentDbEventStore.connect(config.kurrentdbUrl, {
        timeoutMs: config.kurrentdbConnectTimeoutMs,
        streamPrefixes: SERVICE_STREAM_PREFIXES,
        logger,
      });
    }
  }
}
