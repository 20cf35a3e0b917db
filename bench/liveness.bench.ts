/**
 * Liveness while another process writes: the service must keep answering, and keep its projector lease, while a
 * second process appends folder creations back to back into the same DATA_DIR (bench/lib/seedProcess.ts, paced on
 * the service's projection like real writers are) and the service projects them.
 *
 * A client asks `GET /system/version` every 50 ms, first alone (the baseline, same run, same client), then for as
 * long as the seeding lasts; the rows compare the worst and the 99th-percentile answer times. The lease runs with a
 * 3 s time to live here (renewed every second, given up after two seconds without a renewal) so that a stall long
 * enough to lose it shows at the quick size too; it is kept when its epoch did not move (no other taking, no
 * stepping down) and this service still holds it.
 *
 *   npm run bench -- liveness          (LIVENESS_FOLDERS=<n> to change the size)
 */
import { fork } from 'node:child_process';
import path from 'node:path';
import type { Benchmark } from './lib/benchRow';
import { Api } from './lib/api';
import { startService } from './lib/serverProcess';
import { scenario } from './lib/scenario';
import type { SeedParent } from './lib/seedFolders';
import { openDatabase, type SqliteDatabase } from '../src/infra/sqlite/openDatabase';
import { PROJECTOR_LEASE } from '../src/projections/projector';

const POLL_EVERY_MS = 50;
const ALONE_MS = 2_000;
const LEASE_TTL_MS = 3_000;

interface Latencies {
  count: number;
  p99: number;
  max: number;
}

const bench: Benchmark = async ({ quick }) => {
  const folders = Number(process.env.LIVENESS_FOLDERS ?? (quick ? 10_000 : 300_000));
  const service = await startService({ PROJECTOR_LEASE_TTL_MS: String(LEASE_TTL_MS) });
  const db = openDatabase(path.join(service.dataDir, 'folder-service.sqlite'));
  try {
    const s = await scenario(service);
    const parent = await s.admin.ok('POST', '/folder', {
      parentType: 'user',
      parentId: s.adminId,
      name: 'liveness',
      public: 'false',
    });
    const leaseBefore = leaseOf(db);
    const aloneUntil = Date.now() + ALONE_MS;
    const alone = await pollVersion(s.admin, () => Date.now() >= aloneUntil);
    const seeding = seedFromAnotherProcess(
      service.dataDir,
      {
        id: parent._id as string,
        access: { users: [{ id: s.adminId, level: 2, flags: [] }], groups: [] },
        public: false,
        creatorId: s.adminId,
      },
      folders,
    );
    let seeded = false;
    const during = await pollVersion(
      s.admin,
      () => seeded,
      seeding.done.then(() => (seeded = true)),
    );
    const leaseAfter = leaseOf(db);
    const kept =
      leaseBefore !== undefined && leaseAfter?.epoch === leaseBefore.epoch && leaseAfter.holder === leaseBefore.holder;
    const size = `${folders.toLocaleString('en')} folders`;
    return [
      {
        measure: `GET /system/version every 50 ms while another process appends ${size}: worst (${during.count} GETs)`,
        value: during.max,
        unit: 'ms',
        baselineName: `same GETs alone, worst (${alone.count} GETs)`,
        baseline: alone.max,
        ratio: during.max / alone.max,
        goal: 'no answer blocked > 100 ms',
        met: during.max < 100,
      },
      {
        measure: `GET /system/version while another process appends ${size}: p99`,
        value: during.p99,
        unit: 'ms',
        baselineName: 'same GETs alone, p99',
        baseline: alone.p99,
        ratio: during.p99 / alone.p99,
        goal: 'p99 < 100 ms',
        met: during.p99 < 100,
      },
      {
        measure: `projector lease kept while another process appends ${size} (TTL ${LEASE_TTL_MS / 1000} s)`,
        value: kept ? 1 : 0,
        unit: 'yes=1',
        baselineName: 'held before the seeding',
        baseline: leaseBefore ? 1 : 0,
        ratio: kept ? 1 : 0,
        goal: 'kept',
        met: kept,
      },
    ];
  } finally {
    db.close();
    await service.remove();
  }
};

/** GETs every 50 ms (from the end of one answer) until `stop()`; `alongside` rejecting fails the run. */
async function pollVersion(api: Api, stop: () => boolean, alongside?: Promise<unknown>): Promise<Latencies> {
  let failure: Error | undefined;
  alongside?.catch((error: unknown) => (failure = error instanceof Error ? error : new Error(String(error))));
  const times: number[] = [];
  while (!stop()) {
    if (failure) throw failure;
    const started = performance.now();
    const { status } = await api.call('GET', '/system/version');
    if (status !== 200) throw new Error(`GET /system/version answered ${status}`);
    times.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, POLL_EVERY_MS));
  }
  if (failure) throw failure;
  times.sort((a, b) => a - b);
  return { count: times.length, p99: times[Math.floor(times.length * 0.99)], max: times[times.length - 1] };
}

/** Seeds `count` children of `parent` from a child process; `done` settles when it exits. */
function seedFromAnotherProcess(dataDir: string, parent: SeedParent, count: number): { done: Promise<void> } {
  const child = fork(path.join(__dirname, 'lib', 'seedProcess.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, SEED_ARGS: JSON.stringify({ dataDir, parent, count }) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // This benchmark's process ends (or is killed by the runner's time limit): the seeder must not outlive it.
  const stop = () => child.kill('SIGKILL');
  process.once('exit', stop);
  const done = new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => {
      process.off('exit', stop);
      if (code === 0) resolve();
      else reject(new Error(`the seeding process exited with ${code}`));
    });
  });
  return { done };
}

function leaseOf(db: SqliteDatabase): { holder: string; epoch: number } | undefined {
  return db.prepare('SELECT holder, epoch FROM ops_leases WHERE name = ?').get(PROJECTOR_LEASE) as
    { holder: string; epoch: number } | undefined;
}

export default bench;
