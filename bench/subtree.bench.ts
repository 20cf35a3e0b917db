/**
 * Subtree operations at scale (issue 11): copy and delete of a large subtree through the HTTP API while a second
 * client reads one folder every 10 ms, against yardsticks measured in the same run.
 *
 *   full:  ≈106k folders + ≈98k items (docs/performance.md "Bulk work")
 *   quick: ≈3.3k folders + ≈3k items (`npm run bench -- --quick`, about 20 s)
 *   alone: npx tsx -e "import b from './bench/subtree.bench.ts'; b({quick:true}).then(console.table)"
 *   before the worker: BULK_WORKER_MIN_FOLDERS=1000000000 runs every subtree operation on the event loop again
 *   another size: SUBTREE_BENCH_FOLDERS=25000 (about that many folders, and nearly as many items)
 *
 * Rows:
 *  - copy, delete, recursive access change and "empty folder" times vs raw better-sqlite3 inserting as many rows as the
 * subtree holds (folders + items) in one
 *    transaction, into a table with a primary key and one secondary index, on a file in the same directory;
 *  - the event loop's longest stall (`perf_hooks.monitorEventLoopDelay`) during the copy and the delete, vs the same
 *    measure while only the reader runs;
 *  - the reader's p99 latency and failed requests during the copy, vs its p99 while nothing else runs;
 *  - whether this process still holds the projector lease after the copy and the delete;
 *  - how many intermediate `current` values the copy's and the delete's progress notifications published.
 *
 * The service runs in this process (so the loop measured is the service's) on a throwaway DATA_DIR, listening on
 * 127.0.0.1; the tree is built through the API: `width` folders holding one item with one file each, then the root
 * copied into itself until the target size (a copy landing in its source is never copied again). The benchmark
 * stops by itself.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { loadConfig } from '../src/config';
import { bootstrap, type Runtime } from '../src/bootstrap';
import { createApp } from '../src/http/app';
import { applyServerTimeouts } from '../src/http/serverTimeouts';
import { PROJECTOR_LEASE } from '../src/projections/projector';
import type { BenchRow, Benchmark } from './lib/benchRow';

const READ_EVERY_MS = 10;

class Client {
  constructor(
    private readonly base: string,
    private readonly token: string,
  ) {}

  async call(method: string, url: string, form: Record<string, string> = {}, body?: Buffer): Promise<any> {
    const query = new URLSearchParams(form).toString();
    const headers: Record<string, string> = { 'Service-Token': this.token };
    if (body) headers['Content-Type'] = 'application/octet-stream';
    const res = await fetch(`${this.base}${url}${query ? `?${query}` : ''}`, {
      method,
      headers,
      ...(body ? { body } : {}),
    });
    const json = await res.json();
    if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }
}

async function timed<T>(what: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await what();
  return { ms: performance.now() - started, value };
}

/** 200k-style yardstick: `rows` rows inserted by raw better-sqlite3 in one transaction (WAL, synchronous=FULL). */
function rawInsertMs(dir: string, rows: number): number {
  const db = new Database(path.join(dir, 'raw-insert.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(
    'CREATE TABLE t (id TEXT PRIMARY KEY, parent_id TEXT NOT NULL, name TEXT NOT NULL, doc TEXT NOT NULL) WITHOUT ROWID',
  );
  db.exec('CREATE INDEX t_parent ON t (parent_id, name)');
  const insert = db.prepare('INSERT INTO t (id, parent_id, name, doc) VALUES (?, ?, ?, ?)');
  const started = performance.now();
  db.transaction(() => {
    for (let i = 0; i < rows; i++) {
      const id = `${((i * 2654435761) % 4294967296).toString(16).padStart(8, '0')}${i.toString(16).padStart(16, '0')}`;
      insert.run(id, `p${i >> 4}`, `node ${i}`, `{"_id":"${id}","name":"node ${i}"}`);
    }
  })();
  const ms = performance.now() - started;
  db.close();
  return ms;
}

/** Reads one folder every 10 ms over a keep-alive connection until stopped; records latencies and failures. */
function startReader(
  client: Client,
  folderId: string,
): { stop(): Promise<{ latencies: number[]; failures: number; firstFailure?: string }> } {
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  let running = true;
  // A named function, not an IIFE: `stop()` clears `running` while the loop awaits.
  const read = async () => {
    while (running) {
      const started = performance.now();
      try {
        await client.call('GET', `/folder/${folderId}`);
        latencies.push(performance.now() - started);
      } catch (error) {
        failures += 1;
        firstFailure ??= String((error as Error).cause ?? error);
      }
      const wait = READ_EVERY_MS - (performance.now() - started);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  };
  const loop = read();
  return {
    async stop() {
      running = false;
      await loop;
      return { latencies, failures, ...(firstFailure ? { firstFailure } : {}) };
    },
  };
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Runs `what` while measuring the event loop's longest delay (ms) and, with a reader, the reader's outcome. */
async function observed<T>(what: () => Promise<T>, reader?: () => ReturnType<typeof startReader>) {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  const r = reader?.();
  const result = await timed(what);
  const read = await r?.stop();
  histogram.disable();
  return { ...result, loopMaxMs: histogram.max / 1e6, read };
}

async function leaseKept(runtime: Runtime): Promise<boolean> {
  const { projector, readModel } = runtime.services;
  const lease = await readModel.leases.get(PROJECTOR_LEASE);
  return projector.role === 'holder' && lease?.holder === projector.holderId && projector.failed === null;
}

const row = (r: BenchRow): BenchRow => r;

/** The event loop's longest delay `during` something, against the same reader's alone: no step may hold it > 50 ms. */
const loopDelayRow = (during: string, maxMs: number, idleMaxMs: number): BenchRow => ({
  measure: during,
  value: maxMs,
  unit: 'ms',
  baselineName: 'event-loop delay max, reader alone (1 s)',
  baseline: idleMaxMs,
  ratio: maxMs / idleMaxMs,
  goal: '≤ 50 ms',
  met: maxMs <= 50,
});

/** Small subtree operations measured one at a time (after warm-up) while the store holds the whole tree twice. */
const SMALL_OPS = 20;

/**
 * A folder with one item created, then deleted, `SMALL_OPS` times in turn (after a warm-up): the mean latency of each,
 * and the event loop's longest stall over them all. A small delete runs on the event loop (below the bulk worker's
 * threshold): its cost must not grow with the store, as it did while its joins scanned every item of the store.
 */
async function smallDeletes(client: Client, parentId: string) {
  let createMs = 0;
  let deleteMs = 0;
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  for (let i = -10; i < SMALL_OPS; i++) {
    if (i === 0) histogram.enable();
    const created = await timed(() =>
      client.call('POST', '/folder', { parentType: 'folder', parentId, name: `small ${i}` }),
    );
    await client.call('POST', '/item', { folderId: created.value._id, name: 'item' });
    const deleted = await timed(() => client.call('DELETE', `/folder/${created.value._id}`));
    if (i < 0) continue; // warm-up
    createMs += created.ms;
    deleteMs += deleted.ms;
  }
  histogram.disable();
  return { createMs: createMs / SMALL_OPS, deleteMs: deleteMs / SMALL_OPS, loopMaxMs: histogram.max / 1e6 };
}

const subtreeBench: Benchmark = async ({ quick }) => {
  // SUBTREE_BENCH_FOLDERS overrides the size (a mid size for comparing two builds without the full run).
  const target = Number(process.env.SUBTREE_BENCH_FOLDERS) || (quick ? 3_000 : 100_000);
  // The tree: (1 + width)·2^doublings folders ≥ target, one item (with one file) in each but the root copies.
  let doublings = 0;
  while (2 ** (doublings + 1) * 8 <= target) doublings++;
  const width = Math.ceil(target / 2 ** doublings) - 1;
  const folders = (1 + width) * 2 ** doublings;
  const items = width * 2 ** doublings;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'subtree-bench-'));
  // The yardstick first, before the service starts: it holds this thread for its whole transaction.
  const rawMs = rawInsertMs(dataDir, folders + items);
  const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', NODE_ENV: 'production' };
  if (process.env.BULK_WORKER_MIN_FOLDERS) env.BULK_WORKER_MIN_FOLDERS = process.env.BULK_WORKER_MIN_FOLDERS;
  // A quick-size copy lasts a few hundred ms, about one default report interval (250 ms): report more often there,
  // so the row shows whether progress moves at all.
  const progressEveryMs = process.env.BULK_PROGRESS_INTERVAL_MS ?? (quick ? '25' : undefined);
  if (progressEveryMs !== undefined) env.BULK_PROGRESS_INTERVAL_MS = progressEveryMs;
  const runtime = await bootstrap(loadConfig(env));
  const server = await new Promise<Server>((resolve) => {
    const s = createApp(runtime.services).listen(0, '127.0.0.1', () => resolve(s));
  });
  applyServerTimeouts(server);
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  try {
    const anonymous = new Client(base, '');
    const user = await anonymous.call('POST', '/user', {
      login: 'bench',
      email: 'bench@example.com',
      firstName: 'B',
      lastName: 'B',
      password: 'password1',
    });
    const client = new Client(base, user.authToken.token);
    const mine = (await client.call('GET', '/folder', { parentType: 'user', parentId: user._id })) as {
      name: string;
      _id: string;
    }[];
    const privateId = mine.find((f) => f.name === 'Private')!._id;
    const publicId = mine.find((f) => f.name === 'Public')!._id;

    const root = await client.call('POST', '/folder', { parentType: 'folder', parentId: privateId, name: 'tree' });
    for (let i = 0; i < width; i++) {
      const folder = await client.call('POST', '/folder', {
        parentType: 'folder',
        parentId: root._id,
        name: `node ${i}`,
      });
      const item = await client.call('POST', '/item', { folderId: folder._id, name: `item ${i}` });
      const bytes = Buffer.from(`bytes of item ${i}`);
      await client.call(
        'POST',
        '/file',
        { parentType: 'item', parentId: item._id, name: 'data.txt', size: String(bytes.length) },
        bytes,
      );
    }
    const doubled = await observed(async () => {
      for (let n = 0; n < doublings; n++)
        await client.call('POST', `/folder/${root._id}/copy`, { parentType: 'folder', parentId: root._id });
    });
    console.error(
      `subtree bench: built by ${doublings} doublings in ${(doubled.ms / 1000).toFixed(1)} s, event-loop delay max ${doubled.loopMaxMs.toFixed(0)} ms`,
    );
    const rm = runtime.services.readModel;
    const entries = await rm.subtree.subtreeCount(root._id);
    if (entries !== folders + items) throw new Error(`the tree holds ${entries} entries, expected ${folders + items}`);
    const size = `${folders.toLocaleString('en')} folders + ${items.toLocaleString('en')} items`;

    // The other yardsticks: the reader and the event loop with nothing else going on.
    const idle = await observed(
      () => new Promise((resolve) => setTimeout(resolve, 1000)),
      () => startReader(client, publicId),
    );

    // Progress notifications of this user while the operations run: how many versions of each moved `current`.
    const moves = new Map<string, Set<number>>();
    const watch = runtime.services.notifications.changes$.subscribe((record) => {
      const { title, current, total, state } = record.data;
      if (state === 'active' && current > 0 && current < total)
        (moves.get(title) ?? moves.set(title, new Set()).get(title)!).add(current);
    });
    const stopWatching = () => watch.unsubscribe();
    const movesOf = (title: string) => moves.get(title)?.size ?? 0;

    const copy = await observed(
      () =>
        client.call('POST', `/folder/${root._id}/copy`, { parentType: 'folder', parentId: publicId, progress: 'true' }),
      () => startReader(client, publicId),
    );
    const copied = await rm.subtree.subtreeCount(copy.value._id);
    if (copied !== entries) throw new Error(`the copy holds ${copied} entries, the source ${entries}`);
    const leaseAfterCopy = await leaseKept(runtime);
    const small = await smallDeletes(client, publicId);
    // A recursive access change over the whole copy (every folder's ACL and document rewritten).
    const access = JSON.stringify({ users: [{ id: user._id, level: 2 }], groups: [] });
    const reaccess = await observed(() =>
      client.call('PUT', `/folder/${copy.value._id}/access`, { access, recurse: 'true', progress: 'true' }),
    );
    const del = await observed(
      () => client.call('DELETE', `/folder/${copy.value._id}`, { progress: 'true' }),
      () => startReader(client, publicId),
    );
    if ((await rm.subtree.subtreeCount(copy.value._id)) !== 0) throw new Error('the deleted copy is still there');
    // "Empty folder" on a second copy: everything under it goes, the folder stays.
    const second = await client.call('POST', `/folder/${root._id}/copy`, { parentType: 'folder', parentId: publicId });
    const emptied = await observed(() => client.call('DELETE', `/folder/${second._id}/contents`, { progress: 'true' }));
    if ((await rm.subtree.subtreeCount(second._id)) !== 1) throw new Error('the emptied copy still holds something');
    await client.call('DELETE', `/folder/${second._id}`);
    const leaseAfterDelete = await leaseKept(runtime);
    stopWatching();

    const copyRead = copy.read!;
    const idleP99 = percentile(idle.read!.latencies, 99);
    const copyP99 = percentile(copyRead.latencies, 99);
    if (copyRead.firstFailure) console.error(`reader failure during the copy: ${copyRead.firstFailure}`);
    const rawName = `raw better-sqlite3: ${entries.toLocaleString('en')} inserts in one transaction`;
    return [
      row({
        measure: `POST /folder/:id/copy (${size})`,
        value: copy.ms,
        unit: 'ms',
        baselineName: rawName,
        baseline: rawMs,
        ratio: copy.ms / rawMs,
        goal: '≤ 14× raw inserts (< 10 s at full size)',
        met: copy.ms / rawMs <= 14,
      }),
      row({
        measure: `DELETE /folder/:id (the copy, ${size})`,
        value: del.ms,
        unit: 'ms',
        baselineName: rawName,
        baseline: rawMs,
        ratio: del.ms / rawMs,
        goal: '≤ 7× raw inserts (< 5 s at full size)',
        met: del.ms / rawMs <= 7,
      }),
      row({
        measure: `DELETE /folder/:id of a folder holding one item, the store holding ${(2 * entries).toLocaleString('en')} entries (mean of ${SMALL_OPS})`,
        value: small.deleteMs,
        unit: 'ms',
        baselineName: 'POST /folder in the same store (mean)',
        baseline: small.createMs,
        ratio: small.deleteMs / small.createMs,
        goal: '≤ 3× a create, whatever the size of the store',
        met: small.deleteMs / small.createMs <= 3,
      }),
      loopDelayRow('event-loop delay max during those small creates and deletes', small.loopMaxMs, idle.loopMaxMs),
      row({
        measure: `PUT /folder/:id/access, recurse (the copy, ${folders.toLocaleString('en')} folders)`,
        value: reaccess.ms,
        unit: 'ms',
        baselineName: rawName,
        baseline: rawMs,
        ratio: reaccess.ms / rawMs,
        goal: 'at the scale of the copy (≤ 14× raw inserts)',
        met: reaccess.ms / rawMs <= 14,
      }),
      row({
        measure: `DELETE /folder/:id/contents (a second copy, ${size})`,
        value: emptied.ms,
        unit: 'ms',
        baselineName: rawName,
        baseline: rawMs,
        ratio: emptied.ms / rawMs,
        goal: 'as the delete (≤ 7× raw inserts)',
        met: emptied.ms / rawMs <= 7,
      }),
      row({
        measure: `progress: intermediate \`current\` values published during the copy / delete (a report every ${progressEveryMs ?? 250} ms)`,
        value: movesOf('Copying folder tree'),
        unit: 'values',
        baselineName: 'during the delete',
        baseline: movesOf(`Deleting folder ${copy.value.name}`),
        baselineUnit: 'values',
        ratio: Math.min(movesOf('Copying folder tree'), movesOf(`Deleting folder ${copy.value.name}`)),
        goal: 'moves while it runs (≥ 1 each)',
        met: movesOf('Copying folder tree') >= 1 && movesOf(`Deleting folder ${copy.value.name}`) >= 1,
      }),
      loopDelayRow('event-loop delay max during the copy', copy.loopMaxMs, idle.loopMaxMs),
      loopDelayRow('event-loop delay max during the delete', del.loopMaxMs, idle.loopMaxMs),
      row({
        measure: `GET /folder/:id every ${READ_EVERY_MS} ms during the copy: p99 (${copyRead.latencies.length} reads)`,
        value: copyP99,
        unit: 'ms',
        baselineName: 'same reader, nothing else running: p99',
        baseline: idleP99,
        ratio: copyP99 / idleP99,
        goal: 'p99 < 100 ms',
        met: copyP99 < 100,
      }),
      row({
        measure: 'GET /folder/:id during the copy: failed requests',
        value: copyRead.failures,
        unit: 'requests',
        baselineName: 'requests made',
        baseline: copyRead.latencies.length + copyRead.failures,
        baselineUnit: 'requests',
        ratio: copyRead.failures / Math.max(1, copyRead.latencies.length + copyRead.failures),
        goal: 'none fails',
        met: copyRead.failures === 0,
      }),
      row({
        measure: 'projector lease kept through the copy and the delete',
        value: leaseAfterCopy && leaseAfterDelete ? 1 : 0,
        unit: 'yes=1',
        baselineName: 'held before the copy',
        baseline: 1,
        ratio: leaseAfterCopy && leaseAfterDelete ? 1 : 0,
        goal: 'kept',
        met: leaseAfterCopy && leaseAfterDelete,
      }),
    ];
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await runtime.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
};

export default subtreeBench;
