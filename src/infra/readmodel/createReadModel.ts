import path from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import type { ReadModel } from '../../ports/readModel';
import type { SqliteDatabase } from '../sqlite/openDatabase';
import { SqliteReadModel } from './sqlite/sqliteReadModel';
import { MongoReadModel } from './mongodb/mongoReadModel';

/**
 * Opens the configured read model (called by src/bootstrap.ts):
 *  - `sqlite` (default): tables in the embedded SQLite file, the same one the embedded event store uses;
 *  - `mongodb`: the MongoDB adapter on `MONGODB_URL` (database from the URL's path, else `folder_service`);
 *  - test runs only: with `TEST_READ_MODEL=mongodb-standin` (or `mongodb-standin-standalone`, without transactions)
 *    in the environment and NODE_ENV=test (ignored otherwise), the MongoDB adapter over the in-memory driver
 *    stand-in of test/support/mongoStandIn.ts (a fresh one per call), whatever READ_MODEL says. It is how the HTTP suite runs on the MongoDB adapter where no mongod can run
 *    (`npm run test:mongo`, jest project `http-mongo`). It is a separate variable so that READ_MODEL keeps its
 *    production values (and processes the tests spawn, which load the configuration, never meet a stand-in value).
 */
export interface ReadModelSettings {
  readModel: 'sqlite' | 'mongodb';
  mongodbUrl: string | undefined;
}

export const STANDIN_VARIABLE = 'TEST_READ_MODEL';
/** The stand-in as a replica-set member (transactions), or as a standalone server (the non-transactional path). */
export const STANDIN_VALUES = { 'mongodb-standin': true, 'mongodb-standin-standalone': false } as const;

/**
 * Whether this (test) process runs its read models on the MongoDB stand-in, and with transactions or not (null: no
 * stand-in). Outside NODE_ENV=test the variable is ignored: a service process a test spawns (with
 * NODE_ENV=development, say) inherits the test runner's environment, and an in-memory stand-in could not outlive that
 * process anyway.
 */
export function mongoStandInMode(env: NodeJS.ProcessEnv = process.env): { transactions: boolean } | null {
  const wanted = env[STANDIN_VARIABLE];
  if (wanted === undefined || wanted === '' || env.NODE_ENV !== 'test') return null;
  if (!(wanted in STANDIN_VALUES)) throw new Error(`${STANDIN_VARIABLE} must be one of ${Object.keys(STANDIN_VALUES).join(', ')}, got "${wanted}".`);
  return { transactions: STANDIN_VALUES[wanted as keyof typeof STANDIN_VALUES] };
}

export async function createReadModel(settings: ReadModelSettings, sqlite: SqliteDatabase, env: NodeJS.ProcessEnv = process.env): Promise<ReadModel> {
  const standIn = mongoStandInMode(env);
  if (standIn) return openOverStandIn(standIn.transactions);
  switch (settings.readModel) {
    case 'sqlite':
      return new SqliteReadModel(sqlite);
    case 'mongodb':
      if (!settings.mongodbUrl) throw new Error('READ_MODEL=mongodb needs MONGODB_URL.');
      return openMongoReadModel(settings.mongodbUrl);
  }
}

/** Connects to MongoDB and opens the read models there; the read model owns (and on dispose closes) the client. */
export async function openMongoReadModel(url: string): Promise<MongoReadModel> {
  const client = new MongoClient(url);
  await client.connect();
  try {
    return await MongoReadModel.open(client, client.db(databaseName(url)), { onDispose: () => client.close() });
  } catch (error) {
    await client.close();
    throw error;
  }
}

/** What the stand-in module offers (typed here so that src never imports the test tree). */
interface StandInModule {
  MongoStandIn: new (options: { transactions: boolean }) => { db(name: string): { asDb(): Db }; asClient(): MongoClient };
}

async function openOverStandIn(transactions: boolean): Promise<MongoReadModel> {
  // Loaded from the test tree at run time, so that production builds (src only) never contain it.
  const { MongoStandIn } = require(path.join(__dirname, '..', '..', '..', 'test', 'support', 'mongoStandIn')) as StandInModule;
  const standIn = new MongoStandIn({ transactions });
  return MongoReadModel.open(standIn.asClient(), standIn.db('folder_service').asDb());
}

/** The database named in a MongoDB URL's path, else `folder_service`. */
export function databaseName(url: string): string {
  const match = /^mongodb(?:\+srv)?:\/\/[^/]+\/([^?]+)/.exec(url.trim());
  return match ? decodeURIComponent(match[1]) : 'folder_service';
}
