import path from 'node:path';
import type { Db, MongoClient } from 'mongodb';
import type { ReadModel } from '../../ports/readModel';
import type { SqliteDatabase } from '../sqlite/openDatabase';
import { SqliteReadModel } from './sqlite/sqliteReadModel';
import type { MongoReadModel } from './mongodb/mongoReadModel';
import { SqliteNotificationStore } from './sqlite/notificationsStore';
import { gateWrites, type WriteGate } from '../sqlite/writeGate';
import type { NotificationStore } from '../../ports/notificationStore';

/**
 * Opens the configured read model (called by src/bootstrap.ts):
 *  - `sqlite` (default): tables in the embedded SQLite file, the same one the embedded event store uses;
 *  - `mongodb`: the MongoDB adapter on `MONGODB_URL` (database from the URL's path, else `folder_service`);
 *  - test runs only: with `TEST_READ_MODEL=mongodb-standin` (or `mongodb-standin-standalone`, without transactions)
 *    in the environment and NODE_ENV=test (ignored otherwise), the MongoDB adapter over the in-memory driver
 *    stand-in of test/support/mongoStandIn.ts, whatever READ_MODEL says. It is how the HTTP suite runs on the MongoDB
 *    adapter where no mongod can run (`npm run test:mongo`, jest project `http-mongo`). It is a separate variable so
 *    that READ_MODEL keeps its production values (and processes the tests spawn, which load the configuration, never
 *    meet a stand-in value). Each call gets a fresh stand-in, except that read models opened for the same DATA_DIR
 *    while another one for it is still open share it, as processes sharing one MONGODB_URL share a server (two
 *    service instances on one DATA_DIR, or the rebuild and verify commands run in-process next to a service); the
 *    stand-in goes away with the last of them.
 */
export interface ReadModelSettings {
  readModel: 'sqlite' | 'mongodb';
  mongodbUrl: string | undefined;
  /** Only used to share a test stand-in between read models opened for the same DATA_DIR (see above). */
  dataDir?: string;
}

export const STANDIN_VARIABLE = 'TEST_READ_MODEL';
/** The stand-in as a replica-set member (transactions), or as a standalone server (the non-transactional path). */
const STANDIN_VALUES = { 'mongodb-standin': true, 'mongodb-standin-standalone': false } as const;

/**
 * Whether this (test) process runs its read models on the MongoDB stand-in, and with transactions or not (null: no
 * stand-in). Outside NODE_ENV=test the variable is ignored: a service process a test spawns (with
 * NODE_ENV=development, say) inherits the test runner's environment, and an in-memory stand-in could not outlive that
 * process anyway.
 */
export function mongoStandInMode(env: NodeJS.ProcessEnv = process.env): { transactions: boolean } | null {
  const wanted = env[STANDIN_VARIABLE];
  if (wanted === undefined || wanted === '' || env.NODE_ENV !== 'test') return null;
  if (!Object.hasOwn(STANDIN_VALUES, wanted))
    throw new Error(`${STANDIN_VARIABLE} must be one of ${Object.keys(STANDIN_VALUES).join(', ')}, got "${wanted}".`);
  return { transactions: STANDIN_VALUES[wanted as keyof typeof STANDIN_VALUES] };
}

export async function createReadModel(
  settings: ReadModelSettings,
  sqlite: SqliteDatabase | null,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ReadModel> {
  const standIn = mongoStandInMode(env);
  if (standIn) return openOverStandIn(standIn.transactions, settings.dataDir);
  switch (settings.readModel) {
    case 'sqlite':
      if (!sqlite) throw new Error('READ_MODEL=sqlite needs the SQLite file under DATA_DIR.');
      return withRelaxedSync(sqlite, () => new SqliteReadModel(sqlite));
    case 'mongodb':
      if (!settings.mongodbUrl) throw new Error('READ_MODEL=mongodb needs MONGODB_URL.');
      return openMongoReadModel(settings.mongodbUrl);
  }
}

/**
 * Runs `work` with synchronous=NORMAL: creating the read models' schema on a fresh file is some fifty statements,
 * each its own commit, and with synchronous=FULL each paid an fsync (a few hundred milliseconds of the cold start on
 * this disk). The schema is derived (IF NOT EXISTS, recreated on the next start if power fails before the next fsync
 * of the WAL, which the first append's commit makes), and WAL with NORMAL stays consistent after a crash.
 */
function withRelaxedSync<T>(db: SqliteDatabase, work: () => T): T {
  const previous = db.pragma('synchronous', { simple: true }) as number;
  db.pragma('synchronous = NORMAL');
  try {
    return work();
  } finally {
    db.pragma(`synchronous = ${previous}`);
  }
}

/**
 * Where progress notifications live: next to the read models, so that every process sharing them lists and streams
 * the same records (`ops_notifications` in the SQLite file, or in the MongoDB read model's database).
 */
export function notificationStoreOf(readModel: ReadModel, sqlite: SqliteDatabase, gate?: WriteGate): NotificationStore {
  if (readModel instanceof SqliteReadModel) {
    // The service's writes wait while bulk work in the worker holds the file's write lock
    // (src/infra/sqlite/writeGate.ts).
    const store = new SqliteNotificationStore(sqlite);
    return gate ? gateWrites(store, ['save', 'deleteExpired'], gate) : store;
  }
  const { MongoNotificationStore } =
    require('./mongodb/notificationsStore') as typeof import('./mongodb/notificationsStore');
  // Not SQLite, so the MongoDB read model (the only other adapter).
  const { database } = readModel as ReadModel & Pick<MongoReadModel, 'database'>;
  return new MongoNotificationStore(database);
}

/** Connects to MongoDB and opens the read models there; the read model owns (and on dispose closes) the client. */
async function openMongoReadModel(url: string): Promise<MongoReadModel> {
  // The driver and the adapter load only when configured: the embedded default starts without them.
  const { MongoClient } = require('mongodb') as typeof import('mongodb');
  const { MongoReadModel } = require('./mongodb/mongoReadModel') as typeof import('./mongodb/mongoReadModel');
  const client = new MongoClient(url);
  try {
    await client.connect();
  } catch (error) {
    await client.close().catch(() => undefined);
    throw new Error(
      `Cannot reach MongoDB at ${maskCredentials(url)}: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  }
  try {
    return await MongoReadModel.open(client, client.db(databaseName(url)), { onDispose: () => client.close() });
  } catch (error) {
    await client.close();
    throw error;
  }
}

/** What the stand-in module offers (typed here so that src never imports the test tree). */
interface StandInModule {
  MongoStandIn: new (options: { transactions: boolean }) => {
    db(name: string): { asDb(): Db };
    asClient(): MongoClient;
  };
}

type StandIn = InstanceType<StandInModule['MongoStandIn']>;

/** Stand-ins in use, by DATA_DIR, with how many open read models use each. */
const sharedStandIns = new Map<string, { standIn: StandIn; transactions: boolean; users: number }>();

async function openOverStandIn(transactions: boolean, shareKey: string | undefined): Promise<MongoReadModel> {
  const { MongoReadModel } = require('./mongodb/mongoReadModel') as typeof import('./mongodb/mongoReadModel');
  // Loaded from the test tree at run time, so that production builds (src only) never contain it.
  const { MongoStandIn } = require(
    path.join(__dirname, '..', '..', '..', 'test', 'support', 'mongoStandIn'),
  ) as StandInModule;
  let shared = shareKey !== undefined ? sharedStandIns.get(shareKey) : undefined;
  if (shared?.transactions !== transactions) {
    shared = { standIn: new MongoStandIn({ transactions }), transactions, users: 0 };
    if (shareKey !== undefined) sharedStandIns.set(shareKey, shared);
  }
  const entry = shared;
  entry.users += 1;
  const release = async () => {
    entry.users -= 1;
    if (entry.users === 0 && shareKey !== undefined && sharedStandIns.get(shareKey) === entry)
      sharedStandIns.delete(shareKey);
  };
  try {
    return await MongoReadModel.open(entry.standIn.asClient(), entry.standIn.db('folder_service').asDb(), {
      onDispose: release,
    });
  } catch (error) {
    await release();
    throw error;
  }
}

/** The database named in a MongoDB URL's path, else `folder_service`. */
export function databaseName(url: string): string {
  const match = /^mongodb(?:\+srv)?:\/\/[^/]+\/([^?]+)/.exec(url.trim());
  return match ? decodeURIComponent(match[1]) : 'folder_service';
}

/** A MongoDB URL with any user and password replaced by `***`. */
function maskCredentials(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
