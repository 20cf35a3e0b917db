/**
 * What an item listing's total costs in a folder of N items (default 1M): the per-page COUNT it used to run on the
 * event loop, against the whole page with the maintained count (rm_folder_item_counts). Rows are written straight into
 * a scratch read model (the triggers keep the count as any write would); docs/performance-history.md, "Tenth round".
 *   npx tsx bench/prof/itemCounts.ts [items]
 */
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { openDatabase } from '../../src/infra/sqlite/openDatabase';
import { SqliteReadModel } from '../../src/infra/readmodel/sqlite/sqliteReadModel';
import { pagingOf } from '../../src/http/params';

async function main() {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'item-counts-')), 'items.sqlite');
  const db = openDatabase(file);
  const rm = new SqliteReadModel(db);
  const N = Number(process.argv[2] ?? 1_000_000);
  const ins =
    db.prepare(`INSERT INTO rm_items (id, folder_id, name, lower_name, base_parent_type, base_parent_id, created, updated, size, doc)
    VALUES (?, 'f1', ?, ?, 'user', 'u1', '2026-01-01', '2026-01-01', 0, ?)`);
  db.pragma('synchronous = OFF');
  db.transaction(() => {
    for (let i = 0; i < N; i++) {
      const id = i.toString(16).padStart(24, '0');
      ins.run(id, `item ${i}`, `item ${i}`, JSON.stringify({ _id: id, name: `item ${i}`, folderId: 'f1' }));
    }
  })();
  const time = async (f: () => unknown) => {
    const t: number[] = [];
    for (let i = 0; i < 30; i++) {
      const s = performance.now();
      await f();
      t.push(performance.now() - s);
    }
    t.sort((a, b) => a - b);
    return t[15].toFixed(2);
  };
  const count = db.prepare('SELECT COUNT(*) AS n FROM rm_items i WHERE i.folder_id = ?');
  const counted = await time(() => count.get('f1'));
  const listed = await time(() => rm.items.listInFolder({ folderId: 'f1', paging: pagingOf({ limit: 50 }) }));
  console.log(
    `${N} items: counted per page (before) ${counted} ms; page with the maintained total (after) ${listed} ms`,
  );
  await rm.dispose();
  db.close();
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
}
void main();
