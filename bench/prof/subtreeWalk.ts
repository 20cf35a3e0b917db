/**
 * What a walk of a whole subtree costs (the progress total of a copy or delete, `subtreeCount`; the blob ids a delete
 * may free walk the same way): a tree of N folders (default 100k, fan-out 10, so most folders are leaves and the walk
 * reads one page of children per folder). Rows are written straight into a scratch read model;
 * docs/performance-history.md, "Eleventh round".
 *   npx tsx bench/prof/subtreeWalk.ts [folders]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/infra/sqlite/openDatabase';
import { SqliteReadModel } from '../../src/infra/readmodel/sqlite/sqliteReadModel';

const FAN_OUT = 10;

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'subtree-walk-'));
  const db = openDatabase(path.join(dir, 'walk.sqlite'));
  const readModel = new SqliteReadModel(db);
  const folders = Number(process.argv[2] ?? 100_000);
  const insert = db.prepare(
    `INSERT INTO rm_folders (id, parent_type, parent_id, name, lower_name, base_parent_type, base_parent_id, public,
      created, updated, size, doc)
     VALUES (?, ?, ?, ?, ?, 'user', 'u1', 1, '2026-01-01', '2026-01-01', 0, '{"access":{"users":[],"groups":[]}}')`,
  );
  db.transaction(() => {
    insert.run('root', 'user', 'u1', 'root', 'root');
    const parents = ['root'];
    for (let n = 0; n < folders;) {
      const parent = parents.shift() as string;
      for (let i = 0; i < FAN_OUT && n < folders; i++, n++) {
        insert.run(`f${n}`, 'folder', parent, `f${n}`, `f${n}`);
        parents.push(`f${n}`);
      }
    }
  })();
  try {
    for (let run = 1; run <= 3; run++) {
      const started = performance.now();
      const counted = await readModel.subtree.subtreeCount('root');
      console.log(`subtreeCount of ${counted} folders, run ${run}: ${(performance.now() - started).toFixed(0)} ms`);
    }
  } finally {
    await readModel.dispose();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
void main();
