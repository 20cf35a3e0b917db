import type { SqliteDatabase } from '../../src/infra/sqlite/openDatabase';
import { openReadModelFile, type ReadModelFile } from '../support/readModelFile';
import { SqliteReadModel } from '../../src/infra/readmodel/sqlite/sqliteReadModel';
import type { ReadModelTx } from '../../src/ports/readModel';
import { collection, folder, item } from './readModelContract';
import { dropSearchKeys } from '../support/oldSchema';

/**
 * The search rows' keys (src/infra/readmodel/sqlite/searchRows.ts): after every kind of write, each folder, item and
 * collection names in `search_rowid` the one search row holding its id, name and description, and no other search
 * row is left; VACUUM changes nothing to that; a file from before the keys gets them on open.
 */
const T = '2024-01-01T00:00:00.000000+00:00';
const TABLES = ['rm_folders', 'rm_items', 'rm_collections'] as const;
const ADMIN = { id: 'root', admin: true, groups: [] };
const PAGING = { limit: 0, offset: 0, sort: 'lowerName', sortdir: 1 as const };

type Db = SqliteDatabase;

/** Every live row and the search row its key names, side by side; and the number of search rows. */
function keyed(db: Db, table: (typeof TABLES)[number]) {
  const rows = db
    .prepare(
      `SELECT t.id, t.name, t.doc ->> '$.description' AS description,
        s.id AS search_id, s.name AS search_name, s.description AS search_description
       FROM ${table} t LEFT JOIN ${table}_fts s ON s.rowid = t.search_rowid ORDER BY t.id`,
    )
    .all() as Record<string, unknown>[];
  const searchRows = db.prepare(`SELECT COUNT(*) FROM ${table}_fts`).pluck().get() as number;
  return { rows, searchRows };
}

function expectKeyed(db: Db): void {
  for (const table of TABLES) {
    const { rows, searchRows } = keyed(db, table);
    expect({ table, rows: rows.map((r) => [r.search_id, r.search_name, r.search_description]) }).toEqual({
      table,
      rows: rows.map((r) => [r.id, r.name, r.description]),
    });
    expect({ table, searchRows }).toEqual({ table, searchRows: rows.length });
  }
}

async function found(rm: SqliteReadModel, text: string) {
  const [folders, items, collections] = await Promise.all([
    rm.folders.search({ text, viewer: ADMIN, paging: PAGING }),
    rm.items.search({ text, viewer: ADMIN, paging: PAGING }),
    rm.collections.list({ text, viewer: ADMIN, paging: PAGING }),
  ]);
  return {
    folders: folders.rows.map((f) => f._id),
    items: items.rows.map((i) => i._id),
    collections: collections.rows.map((c) => c._id),
  };
}

describe('SqliteReadModel: search rows keyed by search_rowid', () => {
  let store: ReadModelFile;
  let db: Db;
  let rm: SqliteReadModel;
  let position = 0n;
  const apply = (write: (tx: ReadModelTx) => void) => rm.apply('rm', ++position, write);

  /** Collections c and c2; c: top (Top) ─ a (Apple, "orchard") ─ a1 (Acorn); top ─ b (Berry, public); an item in
   * each folder but top. */
  async function tree(): Promise<void> {
    await apply((tx) => {
      tx.collections.put(collection('c', 'Comets', { description: 'tails' }));
      tx.collections.put(collection('c2', 'Second'));
      tx.folders.insert(folder('top', 'Top', { type: 'collection', id: 'c' }));
      tx.folders.insert(folder('a', 'Apple', { type: 'folder', id: 'top' }, { description: 'orchard' }));
      tx.folders.insert(folder('a1', 'Acorn', { type: 'folder', id: 'a' }));
      tx.folders.insert(folder('b', 'Berry', { type: 'folder', id: 'top' }, { public: true }));
      tx.items.insert(item('i1', 'Invoice', 'a', { description: 'paper' }));
      tx.items.insert(item('i2', 'Ivy', 'a1'));
      tx.items.insert(item('i3', 'Iris', 'b'));
    });
  }

  beforeEach(() => {
    store = openReadModelFile('search');
    ({ db, readModel: rm } = store);
    position = 0n;
  });
  afterEach(() => store.remove());

  it('hold after creations, renames, moves, copies, deletes, restores and root deletes', async () => {
    await tree();
    expectKeyed(db);

    await apply((tx) => tx.folders.update('a', { name: 'Apricot', updated: T }));
    await apply((tx) => tx.folders.update('b', { description: 'bramble', updated: T }));
    await apply((tx) => tx.folders.update('b', { meta: { x: 1 }, updated: T }));
    await apply((tx) => tx.items.update('i1', { name: 'Receipt', updated: T }));
    await apply((tx) => tx.items.move('i3', 'a1', 'Iris moved', T));
    await apply((tx) => tx.collections.update('c', { name: 'Planets', description: 'orbits' }));
    expectKeyed(db);
    expect(await found(rm, 'apple')).toEqual({ folders: [], items: [], collections: [] });
    expect(await found(rm, 'orchard')).toEqual({ folders: ['a'], items: [], collections: [] });
    expect(await found(rm, 'apricot')).toEqual({ folders: ['a'], items: [], collections: [] });
    expect(await found(rm, 'bramble')).toEqual({ folders: ['b'], items: [], collections: [] });
    expect(await found(rm, 'invoice')).toEqual({ folders: [], items: [], collections: [] });
    expect(await found(rm, 'moved')).toEqual({ folders: [], items: ['i3'], collections: [] });
    expect(await found(rm, 'comets')).toEqual({ folders: [], items: [], collections: [] });
    expect(await found(rm, 'orbit')).toEqual({ folders: [], items: [], collections: ['c'] });

    const copyOf = (opId: string, folderId: string, admin: boolean) =>
      apply((tx) =>
        tx.subtree.copyFolder(
          {
            opId,
            sourceId: 'top',
            folderId,
            parentType: 'collection',
            parentId: 'c2',
            name: `Copy ${opId}`,
            description: 'duplicate',
            access: { users: [{ id: 'carol', level: 2, flags: [] }], groups: [] },
            creatorId: 'carol',
            created: T,
            meta: {},
            copier: { id: admin ? 'root' : 'carol', admin, groups: [] },
          },
          position,
        ),
      );
    await copyOf('op1', 'copy1', true);
    await copyOf('op2', 'copy2', false);
    expectKeyed(db);
    // Carol (not an admin) copies what she may read: top and the public b.
    expect((await found(rm, 'apricot')).folders).toHaveLength(2);
    expect((await found(rm, 'bramble')).folders).toHaveLength(3);
    expect((await found(rm, 'duplicate')).folders.sort()).toEqual(['copy1', 'copy2']);

    await apply((tx) => {
      tx.history.keepRemoved('a', false, position, T);
      tx.subtree.deleteFolder('a', position);
    });
    const deletedAt = position;
    await apply((tx) => tx.items.delete('i1'));
    await apply((tx) => tx.folders.delete('b'));
    expectKeyed(db);
    // Only the copy is left.
    expect((await found(rm, 'apricot')).folders).toHaveLength(1);
    expect((await found(rm, 'apricot')).folders).not.toContain('a');
    expect((await found(rm, 'acorn')).folders).not.toContain('a1');

    await apply((tx) =>
      tx.history.restoreFolder(
        { folderId: 'a', deletedPosition: deletedAt, parentType: 'folder', parentId: 'top', name: 'Avocado' },
        position,
      ),
    );
    expectKeyed(db);
    expect((await found(rm, 'avocado')).folders).toEqual(['a']);
    expect((await found(rm, 'acorn')).folders).toContain('a1');
    expect((await found(rm, 'ivy')).items).toContain('i2');

    await apply((tx) => tx.subtree.clearContents('top', position));
    await apply((tx) => tx.subtree.deleteUnderRoot('collection', 'c2', position));
    await apply((tx) => tx.collections.delete('c2'));
    expectKeyed(db);
    expect(await found(rm, 'duplicate')).toEqual({ folders: [], items: [], collections: [] });

    await apply((tx) => {
      tx.folders.insert(folder('z', 'Zinnia', { type: 'folder', id: 'top' }));
      tx.items.insert(item('iz', 'Zucchini', 'z'));
    });
    await apply((tx) => {
      tx.items.deleteUnderRoot('c');
      tx.folders.deleteUnderRoot('c');
    });
    expectKeyed(db);
    expect(db.prepare('SELECT COUNT(*) FROM rm_folders').pluck().get()).toBe(0);
  });

  it('hold after a VACUUM, and renames and deletes still find their own rows', async () => {
    await tree();
    // Holes below the highest keys, then a VACUUM that may renumber rows without an INTEGER PRIMARY KEY.
    await apply((tx) => tx.items.delete('i1'));
    await apply((tx) => tx.folders.delete('a1'));
    db.exec('VACUUM');
    expectKeyed(db);
    await apply((tx) => tx.folders.update('b', { name: 'Blackberry', updated: T }));
    await apply((tx) => tx.items.update('i3', { name: 'Orchid', updated: T }));
    await apply((tx) => tx.items.delete('i2'));
    await apply((tx) => tx.folders.insert(folder('n', 'Newcomer', { type: 'folder', id: 'top' })));
    expectKeyed(db);
    expect((await found(rm, 'newcomer')).folders).toEqual(['n']);
    expect((await found(rm, 'blackberry')).folders).toEqual(['b']);
    expect((await found(rm, 'berry')).folders).toEqual([]);
    expect((await found(rm, 'orchid')).items).toEqual(['i3']);
    expect((await found(rm, 'iris')).items).toEqual([]);
    expect((await found(rm, 'ivy')).items).toEqual([]);
  });

  it('are added to a file from before them on open, whatever rowids its search rows had', async () => {
    await tree();
    await apply((tx) => tx.folders.update('a', { name: 'Apricot', updated: T }));
    // The old schema: no key column, and search rows numbered unlike the live rows (deleted and re-added by id).
    dropSearchKeys(db, 101);
    rm = new SqliteReadModel(db);
    expectKeyed(db);

    await apply((tx) => tx.folders.update('a', { name: 'Avocado', updated: T }));
    await apply((tx) => tx.items.update('i2', { description: 'climbing', updated: T }));
    await apply((tx) => tx.folders.delete('b'));
    await apply((tx) => tx.collections.update('c', { name: 'Planets' }));
    await apply((tx) => tx.folders.insert(folder('n', 'Newcomer', { type: 'folder', id: 'top' })));
    expectKeyed(db);
    expect((await found(rm, 'apricot')).folders).toEqual([]);
    expect((await found(rm, 'avocado')).folders).toEqual(['a']);
    expect((await found(rm, 'climbing')).items).toEqual(['i2']);
    expect((await found(rm, 'berry')).folders).toEqual([]);
    expect((await found(rm, 'planets')).collections).toEqual(['c']);
    expect((await found(rm, 'newcomer')).folders).toEqual(['n']);
  });
});
