import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/infra/sqlite/openDatabase';
import { SqliteReadModel } from '../../src/infra/readmodel/sqlite/sqliteReadModel';
import type { ReadModelTx } from '../../src/ports/readModel';
import { collection, file, folder, item, moveFolder, readModelContract } from './readModelContract';
import { createUnder } from '../../src/projections/lateEvents';
import { leaseContract } from './leaseContract';

readModelContract('SqliteReadModel (temp file)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-service-rm-'));
  const db = openDatabase(path.join(dir, 'rm.sqlite'));
  const readModel = new SqliteReadModel(db);
  return {
    readModel,
    async dispose() {
      await readModel.dispose();
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});

leaseContract('SqliteReadModel (two connections to one file)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-service-lease-'));
  const file = path.join(dir, 'rm.sqlite');
  const dbs = [openDatabase(file), openDatabase(file)];
  return {
    first: new SqliteReadModel(dbs[0]),
    second: new SqliteReadModel(dbs[1]),
    async dispose() {
      for (const db of dbs) db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('SqliteReadModel: deleting everything under a collection', () => {
  let dir: string;
  let db: ReturnType<typeof openDatabase>;
  let rm: SqliteReadModel;
  let position = 0n;
  const apply = (write: (tx: ReadModelTx) => void) => rm.apply('rm', ++position, write);

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-service-rm-'));
    db = openDatabase(path.join(dir, 'rm.sqlite'));
    rm = new SqliteReadModel(db);
    position = 0n;
    await apply((tx) => {
      tx.collections.put(collection('c1', 'Doomed'));
      tx.collections.put(collection('c2', 'Kept'));
      tx.folders.insert(folder('a', 'A', { type: 'collection', id: 'c1' }));
      tx.folders.insert(folder('b', 'B', { type: 'folder', id: 'a' }));
      tx.folders.insert(folder('k', 'K', { type: 'collection', id: 'c2' }));
      tx.items.insert(item('ia', 'in a', 'a'));
      tx.items.insert(item('ib', 'in b', 'b'));
      tx.items.insert(item('ik', 'in k', 'k'));
      tx.files.insert(file('fa', 'ia', 3, '1'.repeat(64)));
      tx.files.insert(file('fb', 'ib', 4, '2'.repeat(64)));
      tx.files.insert(file('fk', 'ik', 5, '2'.repeat(64)));
      tx.items.addSize('ia', 3);
      tx.items.addSize('ib', 4);
      tx.items.addSize('ik', 5);
    });
  });
  afterEach(async () => {
    await rm.dispose();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('removes the folders, items and files rooted there in one write, with history rows', async () => {
    expect(await rm.files.blobIdsUnderRoot('c1')).toEqual(expect.arrayContaining(['1'.repeat(64), '2'.repeat(64)]));
    await apply((tx) => {
      tx.subtree.deleteUnderRoot('collection', 'c1', position);
      tx.collections.delete('c1');
    });
    expect(await rm.folders.getMany(['a', 'b', 'k'])).toHaveLength(1);
    expect([await rm.items.get('ia'), await rm.items.get('ib')]).toEqual([null, null]);
    expect([await rm.files.get('fa'), await rm.files.get('fb')]).toEqual([null, null]);
    expect(await rm.files.isBlobReferenced('1'.repeat(64))).toBe(false);
    expect(await rm.files.isBlobReferenced('2'.repeat(64))).toBe(true);
    expect(await rm.files.blobIdsUnderRoot('c1')).toEqual([]);
    for (const id of ['a', 'b']) {
      expect((await rm.subtree.subtreeOpsFor(id)).map((o) => [o.operation, o.rootId, o.position])).toEqual([
        ['deleted', 'c1', position],
      ]);
    }
    expect(await rm.subtree.subtreeOpsFor('k')).toEqual([]);
    expect((await rm.collections.get('c2'))?.size).toBe(5);
  });

  it('treats a folder created or moved under the collection after its delete (in log order) as deleted with it', async () => {
    await apply((tx) => {
      tx.subtree.deleteUnderRoot('collection', 'c1', position);
      tx.collections.delete('c1');
    });
    await apply((tx) =>
      createUnder(tx, 'collection', 'c1', (tx) =>
        tx.folders.insert(folder('late', 'Late', { type: 'collection', id: 'c1' })),
      ),
    );
    expect(await rm.folders.get('late')).toBeNull();
    await apply((tx) => moveFolder(tx, 'k', { parentType: 'collection', parentId: 'c1' }));
    expect(await rm.folders.get('k')).toBeNull();
    expect(await rm.items.get('ik')).toBeNull();
    expect((await rm.collections.get('c2'))?.size).toBe(0);
  });
});
