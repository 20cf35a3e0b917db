/**
 * `npm run cli -- rebuild` speed: a log of folder creations (seeded through the bulk event path, projected live by
 * the service, plus renames and metadata through the API) is replayed into emptied read models, against a baseline
 * measured in the same run: raw better-sqlite3 inserts of as many rows (one per event, a JSON document each, one
 * transaction per 2,000 rows) into a fresh file with the same pragmas. `verify` runs before the rebuild (the live,
 * batched projector ≡ a replay) and after it (the rebuild ≡ a replay); a difference fails the benchmark.
 *
 *   npm run bench -- rebuild          (REBUILD_FOLDERS=<n>; full: 500k folders ≈ 1M events)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import type { Benchmark } from './lib/benchRow';
import { startService } from './lib/serverProcess';
import { writeRebuildWorkload } from './lib/rebuildWorkload';
import { loadConfig } from '../src/config';
import { rebuildReadModels } from '../src/cli/rebuild';
import { verifyReadModels } from '../src/cli/verify';

const ROWS_PER_TRANSACTION = 2000;

const bench: Benchmark = async ({ quick }) => {
  const folders = Number(process.env.REBUILD_FOLDERS ?? (quick ? 5_000 : 500_000));
  const service = await startService();
  try {
    await writeRebuildWorkload(service, folders);
    await service.stop();
    const config = loadConfig({ DATA_DIR: service.dataDir, LOG_LEVEL: 'warn', NODE_ENV: 'production' });
    const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
    if ((await verifyReadModels(config, [], sink)) !== 0)
      throw new Error('verify: the live read models differ from a replay');
    const rebuilt = await rebuildReadModels(config, [], sink as NodeJS.WriteStream);
    if ((await verifyReadModels(config, [], sink)) !== 0)
      throw new Error('verify: the rebuilt read models differ from a replay');
    const raw = rawInsertRate(rebuilt.events);
    return [
      {
        measure: `rebuild (replay ${rebuilt.events.toLocaleString('en')} events into emptied read models)`,
        value: rebuilt.eventsPerSecond,
        unit: 'events/s',
        baselineName: 'raw better-sqlite3 inserts, one row per event',
        baseline: raw,
        baselineUnit: 'rows/s',
        ratio: rebuilt.eventsPerSecond / raw,
        goal: '≥ 50,000 events/s',
        met: rebuilt.eventsPerSecond >= 50_000,
      },
    ];
  } finally {
    await service.remove();
  }
};

/** Rows per second that better-sqlite3 alone inserts in this run: a folder-like row with a JSON document per event. */
function rawInsertRate(rows: number): number {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-raw-'));
  try {
    const db = new Database(path.join(dir, 'raw.sqlite'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(
      'CREATE TABLE t (id TEXT PRIMARY KEY, parent_id TEXT NOT NULL, lower_name TEXT NOT NULL, doc TEXT NOT NULL); CREATE INDEX t_parent ON t (parent_id, lower_name)',
    );
    const insert = db.prepare('INSERT INTO t (id, parent_id, lower_name, doc) VALUES (?, ?, ?, ?)');
    const batch = db.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const id = i.toString(16).padStart(24, '0');
        insert.run(
          id,
          'parent',
          `child ${i}`,
          JSON.stringify({ _id: id, name: `child ${i}`, description: '', meta: {}, created: new Date().toISOString() }),
        );
      }
    });
    const started = performance.now();
    for (let i = 0; i < rows; i += ROWS_PER_TRANSACTION) batch(i, Math.min(rows, i + ROWS_PER_TRANSACTION));
    const seconds = (performance.now() - started) / 1000;
    db.close();
    return rows / seconds;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export default bench;
