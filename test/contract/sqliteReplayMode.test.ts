import type { SqliteDatabase } from '../../src/infra/sqlite/openDatabase';
import { openReadModelFile, type ReadModelFile } from '../support/readModelFile';
import { SqliteReadModel } from '../../src/infra/readmodel/sqlite/sqliteReadModel';
import type { AccessList } from '../../src/domain/access';
import type { ReadModelTx } from '../../src/ports/readModel';
import { collection, folder } from './readModelContract';
import { ReplayWriter } from '../../src/infra/readmodel/sqlite/replayWriter';

/**
 * Replay mode (src/infra/readmodel/sqlite/replayMode.ts), used by `rebuild` only: writes applied with the counts,
 * the deferred indexes and the full-text tables left to a set-wise pass give exactly the tables, schema, search rows'
 * keys and search results of the live path, whether the pass runs at the end (`endReplay`) or on the next open (an
 * interrupted rebuild).
 */
const T = '2024-01-01T00:00:00.000000+00:00';
const access = (users: string[], groups: string[] = []): AccessList => ({
  users: users.map((id) => ({ id, level: 0 as const, flags: [] })),
  groups: groups.map((id) => ({ id, level: 0 as const, flags: [] })),
});

async function writes(rm: SqliteReadModel): Promise<void> {
  let position = 0n;
  const apply = (write: (tx: ReadModelTx) => void) => rm.apply('rm', ++position, write);
  await apply((tx) => {
    tx.collections.put(collection('c', 'C'));
    tx.collections.put(collection('c2', 'Second collection'));
    tx.folders.insert(folder('top', 'Top', { type: 'collection', id: 'c' }, { access: access(['alice'], ['g1']) }));
    tx.folders.insert(folder('a', 'Alpha', { type: 'folder', id: 'top' }, { access: access(['alice'], ['g1']) }));
    tx.folders.insert(folder('b', 'Beta', { type: 'folder', id: 'top' }, { access: access(['alice']) }));
    tx.folders.insert(
      folder('p', 'Public things', { type: 'folder', id: 'top' }, { public: true, access: access([]) }),
    );
    tx.folders.insert(folder('a1', 'A1', { type: 'folder', id: 'a' }, { access: access(['alice'], ['g2']) }));
    tx.folders.insert(folder('lone', 'Lone', { type: 'folder', id: 'b' }));
  });
  await apply((tx) =>
    tx.folders.update('b', { name: 'Beta renamed', description: 'edited text', access: access(['dave']), updated: T }),
  );
  await apply((tx) => tx.folders.move('a1', 'folder', 'top', T));
  await apply((tx) => tx.folders.move('lone', 'collection', 'c2', T));
  await apply((tx) => tx.folders.delete('p'));
  await apply((tx) => tx.subtree.deleteFolder('a', position));
}

/**
 * Writes in batches of several events, as `rebuild` applies them: batches of folder creations under known folders
 * (planned, committed by the writer thread) between batches of other writes (replayed on the main thread), with
 * creations under a folder a batch before moved, and after a delete of the newest folder.
 */
async function batchedWrites(rm: SqliteReadModel): Promise<void> {
  let position = 0n;
  const batch = (...writes: ((tx: ReadModelTx) => void)[]) =>
    rm.applyBatch(
      'rm',
      writes.map((write) => ({ position: ++position, write })),
    );
  const under = (id: string, name: string, parent: string) => (tx: ReadModelTx) =>
    tx.folders.insert(folder(id, name, { type: 'folder', id: parent }, { access: access(['alice'], ['g1']) }));
  await batch(
    (tx) => tx.collections.put(collection('c', 'C')),
    (tx) => tx.folders.insert(folder('top', 'Top', { type: 'collection', id: 'c' }, { access: access(['alice']) })),
  );
  await batch(under('a', 'Alpha', 'top'), under('b', 'Beta', 'top'), under('a1', 'A1', 'a'));
  await batch(under('x', 'X', 'b'), under('y', 'Y', 'a1'), under('y1', 'Y1', 'y'));
  await batch(
    (tx) => tx.folders.move('a1', 'folder', 'b', T),
    (tx) => tx.folders.update('b', { name: 'Beta renamed', updated: T }),
  );
  await batch(under('z', 'Zed', 'a1'), under('z1', 'Zed one', 'z'));
  await batch(under('w', 'W', 'a1'), under('w1', 'W one', 'z'));
  // The newest folder goes with the delete: the creations after it reuse its search key, as the live inserts do.
  await batch(under('v', 'V', 'a'));
  await batch((tx) => tx.subtree.deleteFolder('a', position));
  await batch(under('u', 'U', 'y'), under('t', 'T', 'top'));
}

const schema = (db: SqliteDatabase) =>
  db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all();
/** Each row's search key (`dump()` leaves it out) and the id of the search row it names. */
const searchKeys = (db: SqliteDatabase) =>
  ['rm_folders', 'rm_items', 'rm_collections'].map((table) =>
    db
      .prepare(
        `SELECT t.id, t.search_rowid, s.id AS search_id FROM ${table} t
         LEFT JOIN ${table}_fts s ON s.rowid = t.search_rowid ORDER BY t.id`,
      )
      .all(),
  );
const searches = async (rm: SqliteReadModel) => [
  await rm.folders.search({
    text: 'beta',
    viewer: { id: 'root', admin: true, groups: [] },
    paging: { limit: 10, offset: 0, sort: 'lowerName', sortdir: 1 },
  }),
  await rm.folders.search({
    text: 'top',
    viewer: { id: 'root', admin: true, groups: [] },
    paging: { limit: 10, offset: 0, sort: 'lowerName', sortdir: 1 },
  }),
];

describe('SqliteReadModel: replay mode', () => {
  let store: ReadModelFile;
  let db: SqliteDatabase;
  let rm: SqliteReadModel;

  beforeEach(async () => {
    store = openReadModelFile('replay');
    ({ db, readModel: rm } = store);
    await writes(rm);
  });
  afterEach(() => store.remove());

  it('gives the live tables, schema and search results after endReplay', async () => {
    const live = { dump: await rm.dump(), schema: schema(db), keys: searchKeys(db), search: await searches(rm) };
    expect(live.dump.rm_folder_child_counts).toContain(JSON.stringify({ parent_id: 'b', parent_type: 'folder', n: 0 }));
    await rm.reset();
    await rm.beginReplay();
    await writes(rm);
    await rm.endReplay();
    expect({ dump: await rm.dump(), schema: schema(db), keys: searchKeys(db), search: await searches(rm) }).toEqual(
      live,
    );
  });

  it('completes an interrupted replay when the read models are next opened', async () => {
    const live = { dump: await rm.dump(), schema: schema(db), keys: searchKeys(db), search: await searches(rm) };
    await rm.reset();
    await rm.beginReplay();
    await writes(rm);
    rm = new SqliteReadModel(db);
    expect({ dump: await rm.dump(), schema: schema(db), keys: searchKeys(db), search: await searches(rm) }).toEqual(
      live,
    );
  });

  it('gives the live tables when batches of creations are committed by the writer thread', async () => {
    await rm.reset();
    await batchedWrites(rm);
    const live = { dump: await rm.dump(), schema: schema(db), keys: searchKeys(db), search: await searches(rm) };
    const sent = jest.spyOn(ReplayWriter.prototype, 'send');
    try {
      await rm.reset();
      await rm.beginReplay();
      await batchedWrites(rm);
      await rm.endReplay();
      expect(sent.mock.calls.length).toBeGreaterThanOrEqual(3);
    } finally {
      sent.mockRestore();
    }
    expect({ dump: await rm.dump(), schema: schema(db), keys: searchKeys(db), search: await searches(rm) }).toEqual(
      live,
    );
    expect(live.dump.rm_folders.length).toBeGreaterThan(5);
  });
});
