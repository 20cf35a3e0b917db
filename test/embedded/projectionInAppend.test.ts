import { openDatabase, type SqliteDatabase } from '../../src/infra/sqlite/openDatabase';
import { GroupCommit, type PreparedAppend } from '../../src/infra/eventstore/sqlite/groupCommit';
import type { SqliteReadModel } from '../../src/infra/readmodel/sqlite/sqliteReadModel';
import { openReadModelFile, type ReadModelFile } from '../support/readModelFile';
import { projectAppendedOn } from '../../src/workers/projectAppended';
import { PROJECTOR_LEASE, READ_MODELS_CHECKPOINT } from '../../src/projections/projector';
import { readModelProjection } from '../../src/projections';
import { combineProjections } from '../../src/projections/projection';
import type { LeaseFence } from '../../src/ports/readModel';
import { WrongExpectedVersionError } from '../../src/ports/eventStore';

/**
 * Appends projected in their own transaction (src/ports/projectionInAppend.ts), on the group commit the service's
 * append worker runs (src/workers/appendProjectingWorker.ts), here on the test's thread: what the transaction projects,
 * and every case where it must leave the events to the projector while the appends still commit.
 */

const T0 = '2024-01-01T00:00:00.000Z';
const NO_ACCESS = { users: [], groups: [] };
const META = JSON.stringify({ userId: null, requestId: null, correlationId: null, causationId: null, at: T0 });

const event = (type: string, data: object) => ({
  id: `${type}-${Math.random()}`,
  type,
  data: JSON.stringify(data),
  metadata: META,
});
const createCollection = (id: string): PreparedAppend => ({
  streamId: `collection-${id}`,
  expectedState: 'no_stream',
  events: [
    event('CollectionCreated', {
      collectionId: id,
      name: id,
      description: '',
      public: false,
      creatorId: null,
      created: T0,
      access: NO_ACCESS,
    }),
  ],
});
const createFolder = (id: string, collectionId: string): PreparedAppend => ({
  streamId: `folder-${id}`,
  expectedState: 'no_stream',
  events: [
    event('FolderCreated', {
      folderId: id,
      parentType: 'collection',
      parentId: collectionId,
      name: id,
      description: '',
      creatorId: null,
      created: T0,
      access: NO_ACCESS,
      meta: {},
    }),
  ],
});
const deleteFolder = (id: string, collectionId: string): PreparedAppend => ({
  streamId: `folder-${id}`,
  expectedState: 'any',
  events: [
    event('FolderDeleted', { folderId: id, parentType: 'collection', parentId: collectionId, name: id, opId: 'op' }),
  ],
});

let store: ReadModelFile;
/** The test's reads (the service's main connection). */
let db: SqliteDatabase;
/** The appends' connection (the append worker's). */
let appendDb: SqliteDatabase;
let readModel: SqliteReadModel;
let fence: LeaseFence;

beforeEach(async () => {
  store = openReadModelFile('in-append');
  ({ db, readModel } = store);
  expect(await readModel.leases.acquire(PROJECTOR_LEASE, 'this process', 60_000)).toBe(true);
  fence = { lease: PROJECTOR_LEASE, epoch: (await readModel.leases.get(PROJECTOR_LEASE))!.epoch };
  appendDb = openDatabase(store.file);
});
afterEach(async () => {
  appendDb.close();
  await store.remove();
});

const checkpoint = () => readModel.checkpoint(READ_MODELS_CHECKPOINT);
const folderStored = async (id: string) => (await readModel.folders.get(id)) !== null;
const logged = (streamId: string) =>
  (db.prepare('SELECT COUNT(*) FROM es_events WHERE stream_id = ?').pluck().get(streamId) as number) > 0;

describe('a group commit that projects what it appended', () => {
  it('projects the group in its transaction: rows and checkpoint are there when the commit returns', async () => {
    const commit = new GroupCommit(appendDb, projectAppendedOn(appendDb));
    const { results, projectedThrough } = commit.commit([[createCollection('c1')], [createFolder('f1', 'c1')]], fence);
    expect(results.every((r) => 'outcome' in r)).toBe(true);
    expect(projectedThrough).toBe(2n);
    expect(await checkpoint()).toBe(2n);
    expect(await folderStored('f1')).toBe(true);
    expect((await readModel.collections.get('c1'))?.name).toBe('c1');
  });

  it('projects nothing without a fence (this process does not hold the lease), nor while the projector is behind', async () => {
    const commit = new GroupCommit(appendDb, projectAppendedOn(appendDb));
    expect(commit.commit([[createCollection('c1')]]).projectedThrough).toBeUndefined();
    expect(await checkpoint()).toBe(0n);
    // Event 1 is not projected yet: projecting event 2 now would apply it out of order.
    const behind = commit.commit([[createFolder('f1', 'c1')]], fence);
    expect(behind.projectedThrough).toBeUndefined();
    expect(await checkpoint()).toBe(0n);
    expect(await folderStored('f1')).toBe(false);
    expect(logged('folder-f1')).toBe(true);
  });

  it('leaves the events to the projector when the lease moved on (a stale fence), and still commits them', async () => {
    const commit = new GroupCommit(appendDb, projectAppendedOn(appendDb));
    const stale = { ...fence, epoch: fence.epoch - 1 };
    expect(commit.commit([[createCollection('c1')]], stale).projectedThrough).toBeUndefined();
    expect(await checkpoint()).toBe(0n);
    expect(logged('collection-c1')).toBe(true);
  });

  it('rolls back only its projection when a handler throws: the appends commit, the checkpoint stays', async () => {
    const poisoned = combineProjections(readModelProjection, {
      handlers: {
        FolderCreated: (e) => {
          if ((e.data as { name: string }).name === 'poison') throw new Error('disk full (injected)');
        },
      },
    });
    const commit = new GroupCommit(appendDb, projectAppendedOn(appendDb, poisoned));
    expect(commit.commit([[createCollection('c1')]], fence).projectedThrough).toBe(1n);
    const { results, projectedThrough } = commit.commit(
      [[createFolder('ok', 'c1')], [createFolder('poison', 'c1')]],
      fence,
    );
    expect(results.every((r) => 'outcome' in r)).toBe(true);
    expect(projectedThrough).toBeUndefined();
    expect(await checkpoint()).toBe(1n);
    // The whole projection of the group rolled back, the folder before the poisoned one too.
    expect(await folderStored('ok')).toBe(false);
    expect(logged('folder-ok') && logged('folder-poison')).toBe(true);
  });

  it('stops before an event that must be planned (a subtree event), and projects what came before it', async () => {
    const commit = new GroupCommit(appendDb, projectAppendedOn(appendDb));
    commit.commit([[createCollection('c1')]], fence);
    const { projectedThrough } = commit.commit(
      [[createFolder('f1', 'c1')], [deleteFolder('f1', 'c1')], [createFolder('f2', 'c1')]],
      fence,
    );
    expect(projectedThrough).toBe(2n);
    expect(await checkpoint()).toBe(2n);
    expect(await folderStored('f1')).toBe(true);
    expect(await folderStored('f2')).toBe(false);
  });

  it('projects only what was written: a request refused in the group has no rows', async () => {
    const commit = new GroupCommit(appendDb, projectAppendedOn(appendDb));
    commit.commit([[createCollection('c1')], [createFolder('f1', 'c1')]], fence);
    const { results, projectedThrough } = commit.commit(
      [[createFolder('f1', 'c1'), createCollection('c2')], [createFolder('f3', 'c1')]],
      fence,
    );
    expect('error' in results[0] && results[0].error).toBeInstanceOf(WrongExpectedVersionError);
    expect(projectedThrough).toBe(3n);
    expect(await readModel.collections.get('c2')).toBeNull();
    expect(await folderStored('f3')).toBe(true);
  });
});
