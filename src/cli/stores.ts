import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import type { EventStore } from '../ports/eventStore';
import type { ReadModel } from '../ports/readModel';
import { openDatabase, type SqliteDatabase } from '../infra/sqlite/openDatabase';
import { createEventStore } from './createEventStore';
import { createReadModel, mongoStandInMode } from '../infra/readmodel/createReadModel';
import { MongoReadModel } from '../infra/readmodel/mongodb/mongoReadModel';

export const DB_FILE = 'folder-service.sqlite';

/** The stores of the configured deployment, as the service opens them (EVENT_STORE, READ_MODEL), for a command. */
export interface CommandStores {
  eventStore: EventStore;
  readModel: ReadModel;
  /** The SQLite file under DATA_DIR, when the event store or the read model lives in it. */
  db: SqliteDatabase | null;
  /** Where the data is, for messages: DATA_DIR, or the MongoDB database. */
  describe(): string;
  close(): Promise<void>;
}

/** Whether the configured deployment keeps anything in DATA_DIR's SQLite file. */
function usesSqliteFile(config: Config): boolean {
  return config.eventStore === 'sqlite' || (config.readModel === 'sqlite' && mongoStandInMode() === null);
}

/**
 * Opens the configured event store and read model. `verb` words the error when DATA_DIR holds no SQLite file that
 * the configuration needs ("No data to rebuild: …"). `replay`: the command replays the log into these read models.
 */
export async function openCommandStores(
  config: Config,
  verb: string,
  options: { replay?: boolean } = {},
): Promise<CommandStores> {
  let db: SqliteDatabase | null = null;
  if (usesSqliteFile(config)) {
    const file = path.join(config.dataDir, DB_FILE);
    if (!fs.existsSync(file)) throw new Error(`No data to ${verb}: ${file} does not exist (set DATA_DIR).`);
    db = openDatabase(file);
    // A replay runs every statement inside a batch transaction, so each write with triggers keeps a statement journal
    // (the original of every page it touches, to undo that statement alone). Past 64 KiB SQLite spills it to a temp
    // file: ~15 page writes per folder created, more than the read models' own. In memory it is a copy; set before
    // any TEMP object exists, since changing temp_store drops them.
    if (options.replay) {
      db.pragma('temp_store = MEMORY');
      // The replay reads the whole log and writes every read-model page, on this connection only (the command exits
      // after it). SQLite's default 2 MiB page cache re-read evicted pages with a pread each and spilled dirty pages
      // before the commit; the log is read through a memory map instead of a pread per page; and the WAL is copied
      // back into the file every 64 MiB instead of every 4 MiB (each copy is two fsyncs). On a 100k-event log that
      // halved the rebuild's I/O system calls (225k → ~110k). Nothing here changes what is committed, nor when.
      db.pragma('cache_size = -65536');
      db.pragma('mmap_size = 1073741824');
      db.pragma('wal_autocheckpoint = 16384');
    }
  }
  let eventStore: EventStore | null = null;
  try {
    eventStore = await createEventStore(config, db);
    const readModel = await createReadModel(config, db);
    const store = eventStore;
    return {
      eventStore: store,
      readModel,
      db,
      describe: () =>
        readModel instanceof MongoReadModel ? `MongoDB database ${readModel.databaseName}` : config.dataDir,
      async close() {
        await store.dispose();
        await readModel.dispose();
        db?.close();
      },
    };
  } catch (error) {
    await eventStore?.dispose();
    db?.close();
    throw error;
  }
}
