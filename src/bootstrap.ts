import path from 'node:path';
import { createEventStore } from './cli/createEventStore';
import { compareReadModelsWithLog } from './cli/verify';
import fs from 'node:fs';
import pino from 'pino';
import type { Config } from './config';
import type { Services } from './services';
import { openDatabase, type SqliteDatabase } from './infra/sqlite/openDatabase';
import { createReadModel as openReadModel, databaseName, notificationStoreOf } from './infra/readmodel/createReadModel';
import { HookBus } from './bus/hooks';
import { LogTail } from './infra/logging/logTail';
import { Projector } from './projections/projector';
import { readModelProjection } from './projections';
import type { Projection } from './projections/projection';
import { CommandRunner } from './commands/commandRunner';
import { AssetstoreBlobs } from './infra/blobs/assetstoreBlobs';
import { assetstoreAdapters, probeAssetstore } from './infra/blobs/assetstoreAdapters';
import { assetstoresNow } from './queries/assetstoreViews';
import { assetstoreDecider, AssetstoreType, DEFAULT_PERMS, type AssetstoreSettings } from './domain/assetstore';
import { PartialUploads } from './infra/blobs/fs/partialUploads';
import { sweepStorage } from './commands/storageSweep';
import { startRetentionPurge } from './commands/blobReclaim';
import { DomainEvents } from './bus/domainEvents';
import { StorageFaults } from './bus/storageFaults';
import { smtpMailer } from './infra/mail/smtpMailer';
import { AccountCache } from './queries/accountCache';
import { Notifications } from './bus/notifications';
import { BulkProgressBus } from './bus/bulkProgress';
import { ProgressService } from './bus/progress';
import type { ReadModel } from './ports/readModel';
import { SqliteReadModel } from './infra/readmodel/sqlite/sqliteReadModel';
import { SqliteBulkApply } from './infra/readmodel/sqlite/bulkApply';
import { WriteGate } from './infra/sqlite/writeGate';
import { tuneLiveConnection } from './infra/sqlite/liveConnection';
import { NoWaitWrites } from './infra/sqlite/noWaitWrites';
import { OffLoopReads } from './infra/sqlite/offLoopReads';
import { ProjectionInAppend } from './ports/projectionInAppend';

/**
 * About how long one live projection transaction may hold the event loop on the embedded read model (requests and
 * lease renewals wait meanwhile): the read model sizes its transactions to fit (src/infra/readmodel/sqlite/
 * batchBudget.ts).
 */
const LIVE_BATCH_BUDGET_MS = 20;

const VERSION: string = (
  JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }
).version;

/**
 * What the composition root hands back: route handlers, commands and queries receive `Services`, whose `readModel` is
 * the queries role only; the root itself (and tools and tests driving it) keeps the whole adapter, every role.
 */
type RuntimeServices = Services & { readModel: ReadModel };

export interface Runtime {
  services: RuntimeServices;
  db: SqliteDatabase;
  /** Ends the open event streams and notification sockets cleanly (shutdown, before the last requests finish). */
  endStreams(): void;
  close(): Promise<void>;
}

export interface BootstrapOptions {
  /**
   * The projections the projector runs (default: every read model's, src/projections/index.ts). Tests pass the
   * default combined with one that fails on purpose, to see how the service reports a projection that throws.
   */
  projection?: Projection;
  /** Where log lines go instead of stdout (tests read what the service logs, test/support/testServer.ts). */
  logDestination?: pino.DestinationStream;
}

/** The composition root: opens the stores of the configured deployment, starts the projector, wires services. */
export async function bootstrap(config: Config, options: BootstrapOptions = {}): Promise<Runtime> {
  // Every line goes to stdout (or the test's destination) and to the in-memory tail `GET /system/log` reads; the
  // logger's level (changed at runtime by `PUT /system/log/level`) decides what is written, not the streams'.
  const logTail = new LogTail();
  const logger = pino(
    { level: config.logLevel },
    pino.multistream([
      { level: 'trace', stream: options.logDestination ?? pino.destination(process.stdout.fd) },
      { level: 'trace', stream: logTail },
    ]),
  );
  fs.mkdirSync(config.dataDir, { recursive: true });
  const file = path.join(config.dataDir, 'folder-service.sqlite');
  const db = openDatabase(file);
  tuneLiveConnection(db, { appendsElsewhere: config.eventStore === 'sqlite' });
  // Every main-thread writer to the SQLite file waits here while bulk work in a worker holds its write lock, and
  // waits asynchronously, never in the busy handler, while another process holds it.
  const gate = new WriteGate(new NoWaitWrites(db));
  // Appends commit on a worker thread, so that no request waits for their fsync (appendWorker.ts). With the embedded
  // read models and the service's own projections, the same transaction projects them (src/ports/projectionInAppend.ts).
  const inAppend =
    config.eventStore === 'sqlite' && config.readModel === 'sqlite' && !options.projection
      ? new ProjectionInAppend()
      : undefined;
  const eventStore = await createEventStore(config, db, logger, {
    gate,
    appendWorker: {
      lockWaitMs: config.appendLockWaitMs,
      ...(inAppend
        ? { projecting: { entry: path.join(__dirname, 'workers', 'appendProjectingWorker'), link: inAppend } }
        : {}),
    },
  });
  const readModel = await createReadModel(config, db);
  // Bulk work in the worker reports how far it got to the request that caused it (its progress notification).
  const bulkProgress = new BulkProgressBus();
  const background =
    readModel instanceof SqliteReadModel
      ? new SqliteBulkApply(db, {
          file,
          gate,
          minFolders: config.bulkWorkerMinFolders,
          progress: { bus: bulkProgress, everyMs: config.bulkProgressIntervalMs },
        })
      : undefined;
  if (readModel instanceof SqliteReadModel) {
    readModel.liveWrites({ gate, batchBudgetMs: LIVE_BATCH_BUDGET_MS });
    readModel.readHeavyOffLoop(new OffLoopReads(file));
  }
  const domainEvents = new DomainEvents();
  // One projector per read model across every process sharing it: the lease holder projects, others stand by.
  const projector = new Projector(eventStore, readModel, options.projection ?? readModelProjection, {
    logger,
    domainEvents,
    lease: { ttlMs: config.projectorLeaseTtlMs },
    ...(background ? { background } : {}),
    ...(inAppend ? { inAppend } : {}),
  });
  await projector.start();
  // Progress notifications: operational state next to the read models (shared by every process), never in the log.
  const notifications = new Notifications(notificationStoreOf(readModel, db, gate));
  const commands = new CommandRunner(eventStore, projector);
  const assetstores = assetstoreDecider(defaultAssetstore(config));
  const services: RuntimeServices = {
    config,
    version: VERSION,
    logger,
    logTail,
    checkReadModels: async () => (await compareReadModelsWithLog(config)).result,
    eventStore,
    readModel,
    projector,
    accounts: new AccountCache(readModel),
    commands,
    hooks: new HookBus(),
    notifications,
    progress: new ProgressService(notifications, { bulk: bulkProgress }),
    blobs: new AssetstoreBlobs(
      () => assetstoresNow({ eventStore, assetstores }),
      assetstoreAdapters(config),
      (settings) => probeAssetstore(settings, config),
    ),
    assetstores,
    partialUploads: new PartialUploads(path.join(config.dataDir, 'uploads')),
    domainEvents,
    storageFaults: new StorageFaults(),
    mailer: smtpMailer,
  };
  // The read models are caught up and no request is served yet: drop unreferenced blobs and stale upload bytes. Only
  // the lease holder knows its read models are caught up; a standby leaves the sweep to it (see README "Scaling out").
  if (projector.role === 'holder') await sweepStorage(services);
  else logger.info('storage sweep skipped: this process is a projector standby');
  // From now on, bytes of removed files whose retention ends are purged periodically (the sweep did the past).
  const stopRetentionPurge = startRetentionPurge(services);
  return {
    services,
    db,
    endStreams() {
      domainEvents.complete();
      notifications.dispose();
    },
    async close() {
      stopRetentionPurge();
      domainEvents.complete();
      notifications.dispose();
      await projector.stop();
      await background?.close();
      await eventStore.dispose();
      await readModel.dispose();
      await services.blobs.dispose();
      db.close();
    },
  };
}

// ---- adapter selection (configuration only: EVENT_STORE, READ_MODEL, BLOB_STORE) ---------------------------------

/**
 * The configured read model: SQLite, or MongoDB (READ_MODEL=mongodb, MONGODB_URL); see
 * src/infra/readmodel/createReadModel.ts (which also lets test runs put the MongoDB adapter over the driver stand-in).
 */
async function createReadModel(config: Config, db: SqliteDatabase): Promise<ReadModel> {
  return openReadModel(config, db);
}

/**
 * The assetstore a deployment starts with (DESIGN.md: `BLOB_STORE` names it): files under DATA_DIR/blobs, or GridFS
 * (BLOB_STORE=gridfs) in MONGODB_URL's database. Further stores are made through `/assetstore`.
 */
function defaultAssetstore(config: Config): AssetstoreSettings {
  switch (config.blobStore) {
    case 'fs':
      return { type: AssetstoreType.FILESYSTEM, root: path.join(config.dataDir, 'blobs'), perms: DEFAULT_PERMS };
    case 'gridfs':
      // loadConfig refuses BLOB_STORE=gridfs without MONGODB_URL; mongohost null means that URL.
      return {
        type: AssetstoreType.GRIDFS,
        db: databaseName(config.mongodbUrl ?? ''),
        mongohost: null,
        replicaset: null,
      };
  }
}
