import type { SqliteDatabase } from '../../src/infra/sqlite/openDatabase';
import { SqliteReadModel } from '../../src/infra/readmodel/sqlite/sqliteReadModel';
import { pagingOf } from '../../src/http/params';
import { openReadModelFile, type ReadModelFile } from '../support/readModelFile';

/**
 * The embedded read model's item count per folder (`rm_folder_item_counts`, itemsStore.ts): kept by triggers on
 * `rm_items` whatever writes it (row by row or set-wise), counted once for a file from before the table, and the
 * total of an unfiltered item listing.
 */

let scratch: ReadModelFile;
let db: SqliteDatabase;
let readModel: SqliteReadModel;

beforeEach(() => {
  scratch = openReadModelFile('item-counts');
  ({ db, readModel } = scratch);
});
afterEach(() => scratch.remove());

const insertItem = (id: string, folderId: string) =>
  db
    .prepare(
      `INSERT INTO rm_items (id, folder_id, name, lower_name, base_parent_type, base_parent_id, created, updated, size, doc)
        VALUES (?, ?, ?, ?, 'user', 'u1', '2026-01-01', '2026-01-01', 0, '{}')`,
    )
    .run(id, folderId, `item ${id}`, `item ${id}`);
const counts = () => db.prepare('SELECT folder_id, n FROM rm_folder_item_counts ORDER BY folder_id').raw().all();

it('follows inserts, moves and deletes, row by row and set-wise, and drops a folder with no item left', async () => {
  for (const id of ['a', 'b', 'c']) insertItem(id, 'f1');
  insertItem('d', 'f2');
  expect(counts()).toEqual([
    ['f1', 3],
    ['f2', 1],
  ]);
  db.prepare("UPDATE rm_items SET folder_id = 'f2' WHERE id = 'a'").run();
  db.prepare("UPDATE rm_items SET name = 'renamed' WHERE id = 'b'").run();
  db.prepare("DELETE FROM rm_items WHERE id = 'c'").run();
  expect(counts()).toEqual([
    ['f1', 1],
    ['f2', 2],
  ]);
  db.prepare("UPDATE rm_items SET folder_id = 'f3' WHERE folder_id = 'f2'").run();
  db.prepare("DELETE FROM rm_items WHERE folder_id = 'f1'").run();
  expect(counts()).toEqual([['f3', 2]]);
  expect(await readModel.items.countInFolder('f3')).toBe(2);
  expect(await readModel.items.countInFolder('f1')).toBe(0);
  const listing = await readModel.items.listInFolder({ folderId: 'f3', paging: pagingOf({ limit: 1 }) });
  expect(listing.total).toBe(2);
  expect(listing.rows).toHaveLength(1);
});

it('counts the items of a file from before the table once, on open', async () => {
  for (const id of ['a', 'b']) insertItem(id, 'f1');
  insertItem('c', 'f2');
  db.exec('DROP TABLE rm_folder_item_counts');
  // Opened again on the same file, as a service from before the table would be.
  readModel = new SqliteReadModel(db);
  expect(counts()).toEqual([
    ['f1', 2],
    ['f2', 1],
  ]);
  insertItem('d', 'f2');
  expect(await readModel.items.countInFolder('f2')).toBe(2);
  await readModel.dispose();
});
