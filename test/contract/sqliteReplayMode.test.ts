import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/infra/sqlite/openDatabase';
import { SqliteReadModel } from '../../src/infra/readmodel/sqlite/sqliteReadModel';
import type { AccessList } from '../../src/domain/access';
import type { ReadModelTx } from '../../src/ports/readModel';
import { collection, folder } from './readModelContract';

/**
 * Replay mode (src/infra/readmodel/sqlite/replayMode.ts), used by `rebuild` only: writes applied with the counts,
 * the deferred indexes and the full-text tables left to a set-wise pass give exactly the tables, schema and search
 * results of the live path, whether the pass runs at the end (`endReplay`) or on the next open (an interrupted
 * rebuild).
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

const schema = (db: ReturnType<typeof openDatabase>) =>
  db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all();
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
  let dir: string;
  let db: ReturnType<typeof openDatabase>;
  let rm: SqliteReadModel;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-service-replay-'));
    db = openDatabase(path.join(dir, 'rm.sqlite'));
    rm = new SqliteReadModel(db);
    await writes(rm);
  });
  afterEach(async () => {
    await rm.dispose();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('gives the live tables, schema and search results after endReplay', async () => {
    const live = { dump: await rm.dump(), schema: schema(db), search: await searches(rm) };
    expect(live.dump.rm_folder_child_counts).toContain(JSON.stringify({ parent_id: 'b', parent_type: 'folder', n: 0 }));
    await rm.reset();
    await rm.beginReplay();
    await writes(rm);
    await rm.endReplay();
    expect({ dump: await rm.dump(), schema: schema(db), search: await searches(rm) }).toEqual(live);
  });

  it('completes an interrupted replay when the read models are next opened', async () => {
    const live = { dump: await rm.dump(), schema: schema(db), search: await searches(rm) };
    await rm.reset();
    await rm.beginReplay();
    await writes(rm);
    rm = new SqliteReadModel(db);
    expect({ dump: await rm.dump(), schema: schema(db), search: await searches(rm) }).toEqual(live);
  });
});
