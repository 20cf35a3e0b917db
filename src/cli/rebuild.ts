import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import { openDatabase } from '../infra/sqlite/openDatabase';
import { SqliteEventStore } from '../infra/eventstore/sqlite/sqliteEventStore';
import { SqliteReadModel } from '../infra/readmodel/sqlite/sqliteReadModel';
import { rebuild, type RebuildProgress } from '../projections/rebuild';
import { READ_MODELS_CHECKPOINT } from '../projections/projector';

const DB_FILE = 'folder-service.sqlite';
/** Events per durable commit while replaying. */
const BATCH_SIZE = 2000;

const describe = (p: RebuildProgress) =>
  `replayed ${p.events} events in ${p.seconds.toFixed(1)} s (${Math.round(p.eventsPerSecond)} events/s)`;

/**
 * The projections are not split: one dispatch table (src/projections/index.ts) feeds every read model under one
 * checkpoint, so `--projection` accepts only that one name.
 */
export const PROJECTION_NAMES = [READ_MODELS_CHECKPOINT] as const;

/** `[--projection NAME]` (or `--projection=NAME`). */
function checkRebuildArgs(args: string[]): void {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    let name: string | undefined;
    if (arg === '--projection') name = args[++i];
    else if (arg.startsWith('--projection=')) name = arg.slice('--projection='.length);
    else throw new Error(`Unknown argument "${arg}". Usage: rebuild [--projection ${PROJECTION_NAMES.join('|')}].`);
    if (!name || !(PROJECTION_NAMES as readonly string[]).includes(name)) {
      throw new Error(
        `Unknown projection "${name ?? ''}". The read models are one projection, "${READ_MODELS_CHECKPOINT}" (one checkpoint): rebuild rebuilds them all.`,
      );
    }
  }
}

/**
 * `npm run cli -- rebuild [--projection read-models]`: empties the read models of DATA_DIR and replays the whole event
 * log into them, printing progress (events and events/s) about once a second. Run it with the service stopped.
 */
export async function rebuildReadModels(config: Config, args: string[], out: NodeJS.WriteStream = process.stdout): Promise<RebuildProgress> {
  checkRebuildArgs(args);
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
