import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import { openDatabase } from '../infra/sqlite/openDatabase';
import { SqliteEventStore } from '../infra/eventstore/sqlite/sqliteEventStore';
import { SqliteReadModel } from '../infra/readmodel/sqlite/sqliteReadModel';
import { rebuild, type RebuildProgress } from '../projections/rebuild';

const DB_FILE = 'folder-service.sqlite';
/** Events per durable commit while replaying. */
const BATCH_SIZE = 2000;

const describe = (p: RebuildProgress) =>
  `replayed ${p.events} events in ${p.seconds.toFixed(1)} s (${Math.round(p.eventsPerSecond)} events/s)`;

/**
 * `npm run cli -- rebuild`: empties the read models of DATA_DIR and replays the whole event log into them, printing
 * progress (events and events/s) about once a second. Run it with the service stopped.
 */
export async function rebuildReadModels(config: Config, _args: string[], out: NodeJS.WriteStream = process.stdout): Promise<RebuildProgress> {
  const file = path.join(config.dataDir, DB_FILE);
  if (!fs.existsSync(file)) throw new Error(`No data to rebuild: ${file} does not exist (set DATA_DIR).`);
  const db = openDatabase(file);
  const store = new SqliteEventStore(db);
  const readModel = new SqliteReadModel(db);
  try {
    out.write(`Rebuilding the read models in ${config.dataDir} (event log head at position ${await store.headPosition()})\n`);
    let overwriting = false;
    const done = await rebuild(store, readModel, {
      batching: {
        size: BATCH_SIZE,
        begin: () => db.exec('BEGIN IMMEDIATE'),
        commit: () => db.exec('COMMIT'),
        rollback: () => db.exec('ROLLBACK'),
      },
      onProgress: (p) => {
        // On a terminal the progress line rewrites itself; in a log each report is its own line.
        out.write(out.isTTY ? `\r${describe(p)}` : `${describe(p)}\n`);
        overwriting = out.isTTY === true;
      },
    });
    if (overwriting) out.write('\n');
    out.write(`Rebuild complete: ${describe(done)}, read models at position ${done.position}.\n`);
    return done;
  } finally {
    await store.dispose();
    await readModel.dispose();
    db.close();
  }
}
