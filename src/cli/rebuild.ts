import path from 'node:path';
import type { Config } from '../config';
import { openDatabase } from '../infra/sqlite/openDatabase';
import { SqliteEventStore } from '../infra/eventstore/sqlite/sqliteEventStore';
import { SqliteReadModel } from '../infra/readmodel/sqlite/sqliteReadModel';
import { rebuild } from '../projections/rebuild';

/** `npm run cli -- rebuild`: empties the read models and replays the whole log into them. */
export async function rebuildReadModels(config: Config, _args: string[]): Promise<void> {
  const db = openDatabase(path.join(config.dataDir, 'folder-service.sqlite'));
  const store = new SqliteEventStore(db);
  const readModel = new SqliteReadModel(db);
  const started = Date.now();
  const count = await rebuild(store, readModel, (n) => process.stdout.write(`\rreplayed ${n} events`));
  const seconds = (Date.now() - started) / 1000;
  process.stdout.write(`\rreplayed ${count} events in ${seconds.toFixed(1)} s (${Math.round(count / Math.max(seconds, 0.001))} events/s)\n`);
  await store.dispose();
  db.close();
}
