/**
 * Worker thread entry of {@link SqliteBulkApply} (bulkApply.ts): applies one large subtree event at a time to the
 * embedded read model on this thread's own connection, so the service's event loop never waits on it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../../sqlite/openDatabase';
import { SqliteReadModel } from './sqliteReadModel';
import { SqliteLeases } from './leasesStore';
import { readModelProjection } from '../../../projections';
import type { BulkJob, BulkReply } from './bulkApply';

const { file } = workerData as { file: string };
const db = openDatabase(file);
const readModel = new SqliteReadModel(db);
const leases = new SqliteLeases(db);

function run(job: BulkJob): BulkReply {
  const { event, lease } = job;
  const handler = readModelProjection.handlers[event.type];
  let leaseRenewedAt: number | undefined;
  const keepLease = () => {
    if (!lease) return;
    const at = Date.now();
    if (!leases.renewNow(lease.name, lease.holderId, lease.ttlMs)) {
      throw new Error('the projector lease passed to another process; the bulk write is rolled back');
    }
    leaseRenewedAt = at;
  };
  const applied = readModel.applyNow(job.checkpoint, event.position, (tx) => {
    keepLease();
    handler?.(event, tx);
    keepLease();
  });
  return { id: job.id, ok: true, applied, leaseRenewedAt };
}

parentPort!.on('message', (job: BulkJob) => {
  let reply: BulkReply;
  try {
    reply = run(job);
  } catch (error) {
    const e = error as Error;
    reply = { id: job.id, ok: false, message: e.message, stack: e.stack };
  }
  parentPort!.postMessage(reply);
});
