import type { SqliteDatabase } from '../../src/infra/sqlite/openDatabase';
import { openReadModelFile, type ReadModelFile } from '../support/readModelFile';
import { SqliteReadModel } from '../../src/infra/readmodel/sqlite/sqliteReadModel';
import { ensureReadClassCounts } from '../../src/infra/readmodel/sqlite/readClassCounts';
import { readableSql } from '../../src/infra/readmodel/sqlite/sqlHelpers';
import type { AccessList, Viewer } from '../../src/domain/access';
import type { ReadModelTx } from '../../src/ports/readModel';
import { collection, folder } from './readModelContract';

/**
 * The maintained per-parent, per-read-class counts (readClassCounts.ts) behind an ordinary user's
 * `Girder-Total-Count`: after every kind of folder write they equal a recount from scratch, and each viewer's total
 * equals the count through the ACL filter that the listing used to run per request.
 */
const T = '2024-01-01T00:00:00.000000+00:00';
const access = (users: string[], groups: string[] = []): AccessList => ({
  users: users.map((id) => ({ id, level: 0 as const, flags: [] })),
  groups: groups.map((id) => ({ id, level: 0 as const, flags: [] })),
});
const viewers: (Viewer | null)[] = [
  null,
  { id: 'alice', admin: false, groups: [] },
  { id: 'bob', admin: false, groups: ['g1'] },
  { id: 'carol', admin: false, groups: ['g1', 'g2'] },
  { id: 'dave', admin: false, groups: [] },
];

describe('SqliteReadModel: per-read-class child counts', () => {
  let store: ReadModelFile;
  let db: SqliteDatabase;
  let rm: SqliteReadModel;
  let position = 0n;
  const apply = (write: (tx: ReadModelTx) => void) => rm.apply('rm', ++position, write);

  beforeEach(() => {
    store = openReadModelFile('rc');
    ({ db, readModel: rm } = store);
    position = 0n;
  });
  afterEach(() => store.remove());

  async function expectExact(): Promise<void> {
    const maintained = db
      .prepare('SELECT * FROM rm_folder_read_counts ORDER BY parent_id, parent_type, read_class')
      .all();
    db.exec('SAVEPOINT recount');
    // A table that does not exist yet is counted from rm_folders on open: the same rows as the triggers kept.
    db.exec('DROP TABLE rm_folder_read_counts');
    ensureReadClassCounts(db);
    const recounted = db
      .prepare('SELECT * FROM rm_folder_read_counts ORDER BY parent_id, parent_type, read_class')
      .all();
    db.exec('ROLLBACK TO recount; RELEASE recount');
    expect(maintained).toEqual(recounted);
    const parents = db.prepare('SELECT DISTINCT parent_id, parent_type FROM rm_folders').all() as {
      parent_id: string;
      parent_type: 'folder';
    }[];
    for (const { parent_id, parent_type } of parents) {
      for (const viewer of viewers) {
        const filter = readableSql('f', viewer);
        const counted = (
          db
            .prepare(
              `SELECT COUNT(*) AS n FROM rm_folders f WHERE f.parent_id = ? AND f.parent_type = ? AND ${filter.sql}`,
            )
            .get(parent_id, parent_type, ...filter.args) as { n: number }
        ).n;
        const listed = await rm.folders.listChildren({
          parentType: parent_type,
          parentId: parent_id,
          viewer,
          paging: { limit: 0, offset: 0, sort: 'lowerName', sortdir: 1 },
        });
        expect([parent_id, viewer?.id, listed.total, listed.rows.length]).toEqual([
          parent_id,
          viewer?.id,
          counted,
          counted,
        ]);
        expect(await rm.folders.countChildren({ parentType: parent_type, parentId: parent_id, viewer })).toBe(counted);
      }
    }
  }

  it('stay exact through creates, access changes, moves, copies, deletes and restores', async () => {
    await apply((tx) => {
      tx.collections.put(collection('c', 'C'));
      tx.folders.insert(folder('top', 'Top', { type: 'collection', id: 'c' }, { access: access(['alice'], ['g1']) }));
      tx.folders.insert(folder('a', 'A', { type: 'folder', id: 'top' }, { access: access(['alice'], ['g1']) }));
      tx.folders.insert(folder('b', 'B', { type: 'folder', id: 'top' }, { access: access(['alice']) }));
      tx.folders.insert(folder('p', 'P', { type: 'folder', id: 'top' }, { public: true, access: access([]) }));
      tx.folders.insert(folder('n', 'N', { type: 'folder', id: 'top' }));
      tx.folders.insert(folder('a1', 'A1', { type: 'folder', id: 'a' }, { access: access(['alice'], ['g2']) }));
      tx.folders.insert(folder('a2', 'A2', { type: 'folder', id: 'a' }, { access: access(['dave'], ['g1', 'g2']) }));
    });
    await expectExact();

    await apply((tx) => tx.folders.update('b', { access: access(['alice', 'dave'], ['g2']), updated: T }));
    await apply((tx) => tx.folders.update('n', { public: true, updated: T }));
    await apply((tx) => tx.folders.update('a', { meta: { x: 1 }, updated: T }));
    await expectExact();

    await apply((tx) => tx.folders.setAccess(['a', 'a1', 'a2'], { access: access(['dave']), public: false }));
    await expectExact();

    await apply((tx) => tx.folders.move('a1', 'folder', 'top', T));
    await apply((tx) => tx.folders.move('b', 'collection', 'c', T));
    await expectExact();

    await apply((tx) =>
      tx.subtree.copyFolder(
        {
          opId: 'op1',
          sourceId: 'top',
          folderId: 'copy',
          parentType: 'collection',
          parentId: 'c',
          name: 'Copy',
          description: '',
          access: access(['carol']),
          creatorId: 'carol',
          created: T,
          meta: {},
          copier: { id: 'root', admin: true, groups: [] },
        },
        position,
      ),
    );
    await expectExact();

    await apply((tx) => tx.subtree.deleteFolder('a', position));
    const deletedAt = position;
    await apply((tx) => tx.folders.delete('p'));
    await expectExact();

    await apply((tx) =>
      tx.history.restoreFolder(
        { folderId: 'a', deletedPosition: deletedAt, parentType: 'folder', parentId: 'top', name: 'A again' },
        position,
      ),
    );
    await apply((tx) => tx.subtree.clearContents('copy', position));
    await expectExact();
  });
});
