import path from 'node:path';
import fs from 'node:fs';
import pino from 'pino';
import type { Config } from './config';
import type { Services } from './services';
import { openDatabase, type SqliteDatabase } from './infra/sqlite/openDatabase';
import { SqliteEventStore } from './infra/eventstore/sqlite/sqliteEventStore';
import { SqliteReadModel } from './infra/readmodel/sqlite/sqliteReadModel';
import { HookBus } from './bus/hooks';
import { Projector } from './projections/projector';
import { readModelProjection } from './projections';
import { CommandRunner } from './commands/commandContext';
import { FsBlobStore } from './infra/blobs/fs/fsBlobStore';
import { PartialUploads } from './infra/blobs/fs/partialUploads';
import { sweepStorage } from './commands/storageSweep';
import { Notifications } from './bus/notifications';
import { ProgressService } from './bus/progress';
import { SqliteNotificationStore } from './infra/readmodel/sqlite/notificationsStore';

export const VERSION: string = (JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;

export interface Runtime {
  services: Services;
  db: SqliteDatabase;
  close(): Promise<void>;
}

/** The composition root: opens the stores of the configured deployment, starts the projector, wires services. */
export async function bootstrap(config: Config): Promise<Runtime> {
  const logger = pino({ level: config.logLevel });
  fs.mkdirSync(config.dataDir, { recursive: true });
  const db = openDatabase(path.join(config.dataDir, 'folder-service.sqlite'));
  const eventStore = new SqliteEventStore(db);
  const readModel = new SqliteReadModel(db);
  const projector = new Projector(eventStore, readModel, readModelProjection, logger);
  await projector.start();
  // Progress notifications: operational state in `ops_notifications` of the same file, never in the event log.
  const notifications = new Notifications(new SqliteNotificationStore(db));
  const services: Services = {
    config,
    version: VERSION,
    logger,
    eventStore,
    readModel,
    projector,
    commands: new CommandRunner(eventStore, projector),
    hooks: new HookBus(),
    notifications,
    progress: new ProgressService(notifications),
    blobs: new FsBlobStore(path.join(config.dataDir, 'blobs')),
    partialUploads: new PartialUploads(path.join(config.dataDir, 'uploads')),
  };
  // The read models are caught up and no request is served yet: drop unreferenced blobs and stale upload bytes.
  await sweepStorage(services);
  return {
    services,
    db,
    async close() {
      notifications.dispose();
      await projector.stop();
      await eventStore.dispose();
      await readModel.dispose();
      db.close();
    },
  };
}
