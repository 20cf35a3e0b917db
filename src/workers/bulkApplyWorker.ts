/**
 * Worker thread entry of SqliteBulkApply (src/infra/readmodel/sqlite/bulkApply.ts): applies one large subtree event
 * at a time to the embedded read model on this thread's own connection, so the service's event loop never waits on
 * it. It is a wiring entry (src/workers/), not part of the adapter, because it wires the read model and the projections
 * together.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../infra/sqlite/openDatabase';
import { SqliteReadModel } from '../infra/readmodel/sqlite/sqliteReadModel';
import { SqliteLeases } from '../infra/readmodel/sqlite/leasesStore';
import { readModelProjection } from '../projections';
import { writerOf } from '../projections/projection';
import { BulkRowCounter } from '../infra/readmodel/sqlite/bulkRowCounter';
import type { BulkJob, BulkReply } from '../infra/readmodel/sqlite/bulkApply';

if (!parentPort) throw new Error('bulkApplyWorker runs as a worker thread (SqliteBulkApply starts it).');
const port = parentPort;
/** 256 MiB: the pages a 100k-folder operation touches, on a file of about half a gigabyte. */
const BULK_CACHE_KIB = 262_144;
const { file } = workerData as { file: string };
const db = openDatabase(file);
tuneForBulkWork(db);
const readModel = new SqliteReadModel(db);
const leases = new SqliteLeases(db);
const rowCounter = new BulkRowCounter(db);

async function run(job: BulkJob): Promise<BulkReply> {
  const { event, lease } = job;
  // Planned on this connection before the transaction: the main thread holds the write gate and every earlier event
  // is applied, so nothing changes in between (src/projections/projection.ts).
  const write = await writerOf(readModelProjection, event, readModel.projectionReads);
  let leaseRenewedAt: number | undefined;
  const keepLease = () => {
    if (!lease) return;
    const at = Date.now();
    if (!leases.renewNow(lease.name, lease.holderId, lease.ttlMs)) {
      throw new Error('the projector lease passed to another process; the bulk write is rolled back');
    }
    leaseRenewedAt = at;
  };
  const apply = () =>
    readModel.applyNow(job.checkpoint, event.position, (tx) => {
      keepLease();
      write(tx);
      keepLease();
    });
  // Progress reports are posted while the transaction runs: the main thread gets them before this job's answer.
  const applied = job.progress
    ? rowCounter.during(
        job.progress.everyMs,
        (rows) => port.postMessage({ id: job.id, rows } satisfies BulkReply),
        apply,
      )
    : apply();
  // The pages cached for this job are of no use to the next one (another subtree): give the memory back.
  db.pragma('shrink_memory');
  if (applied) {
    checkpointWal();
    // The commit and the checkpoint can take longer than the lease lives on a loaded machine: renew once more, now
    // that they are done (an ordinary renewal: the lock is free again). Refused, the projector learns it at its next
    // renewal and stops.
    if (lease) {
      const at = Date.now();
      leaseRenewedAt = leases.renewNow(lease.name, lease.holderId, lease.ttlMs) ? at : undefined;
    }
  }
  return { id: job.id, ok: true, applied, ...(leaseRenewedAt !== undefined ? { leaseRenewedAt } : {}) };
}

/**
 * Page cache for one large subtree event. A 100k-folder copy or delete touches every page of a dozen tables and
 * indexes in random key order (ids are random) within one transaction: with SQLite's default 2 MiB cache nearly every
 * b-tree step misses (a read system call, a WAL-index lookup) and dirty pages are spilled to the WAL mid-transaction
 * and read back: a large part of why the cost per folder grew with the subtree (docs/performance.md "Bulk work"). The cache
 * is memory that grows only as pages are used, and `shrink_memory` gives it back after each job. Temp tables (the
 * working sets) and sorts stay in memory too.
 */
function tuneForBulkWork(connection: typeof db): void {
  connection.pragma(`cache_size = -${BULK_CACHE_KIB}`);
  connection.pragma('temp_store = MEMORY');
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Copies the operation's WAL frames into the database file here, on this thread. Left to SQLite's automatic
 * checkpoint, the hundreds of megabytes a 100k-folder operation writes would be copied by whichever connection
 * commits next once readers have let go of them: usually the main thread's, which would then stall for seconds.
 * A reader holding an older snapshot keeps some frames from being copied; they are short, so this retries briefly.
 */
function checkpointWal(): void {
  // At most ~200 ms: what is left is copied by the next automatic checkpoint, as before.
  for (let attempt = 0; attempt < 10; attempt++) {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)') as (
      { busy: number; log: number; checkpointed: number } | undefined
    )[];
    if (!result || result.checkpointed >= result.log) return;
    Atomics.wait(pause, 0, 0, 20);
  }
}

async function answer(job: BulkJob): Promise<void> {
  let reply: BulkReply;
  try {
    reply = await run(job);
  } catch (error) {
    const e = error as Error;
    reply = { id: job.id, ok: false, message: e.message, stack: e.stack };
  }
  port.postMessage(reply);
}

port.on('message', (job: BulkJob) => void answer(job));
