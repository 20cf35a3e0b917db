import type { Db } from 'mongodb';
import type { MongoStandIn } from './mongoStandIn';

/**
 * The `mongodb` module with its MongoClient replaced by one that connects to the driver stand-in
 * (./mongoStandIn.ts) registered under its URL; any other URL fails as an unreachable server would. Everything else
 * (GridFSBucket, ObjectId…) is the real driver's. The test-only seam of HTTP tests of GridFS stores, where no mongod
 * runs:
 *
 *   const mockServers = new Map([[MONGOHOST, new MongoStandIn()]]);
 *   jest.mock('mongodb', () =>
 *     jest.requireActual<typeof import('../support/standInMongoClient')>('../support/standInMongoClient')
 *       .mongodbWithStandIns(() => mockServers));
 *
 * `servers` is read when a client is made, not when the mock is: jest hoists the mock above the test file's own
 * declarations.
 */
export function mongodbWithStandIns(servers: () => Map<string, MongoStandIn>): typeof import('mongodb') {
  const actual = jest.requireActual<typeof import('mongodb')>('mongodb');
  class StandInMongoClient {
    private readonly server: MongoStandIn;
    constructor(url: string) {
      const server = servers().get(url);
      if (!server) throw new Error(`No MongoDB stand-in registered for ${url}.`);
      this.server = server;
    }
    connect(): Promise<this> {
      return Promise.resolve(this);
    }
    db(name: string): Db {
      return this.server.db(name).asDb();
    }
    close(): Promise<void> {
      return Promise.resolve();
    }
  }
  return { ...actual, MongoClient: StandInMongoClient as unknown as typeof actual.MongoClient };
}
