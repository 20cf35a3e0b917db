/**
 * Worker thread entry of AppendWorker (appendWorker.ts): commits each group it is sent on this thread's own
 * connection (synchronous=FULL: the commit returns after its fsync) and answers only then.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../../sqlite/openDatabase';
import { GroupCommit } from './groupCommit';
import { WorkerCheckpoints } from '../../sqlite/walCheckpoints';
import { serializeError, type CommitReply, type CommitRequest, type WireResult } from './appendWorker';

if (!parentPort) throw new Error('appendWorkerThread runs as a worker thread (AppendWorker starts it).');
const port = parentPort;
const { file, lockWaitMs } = workerData as { file: string; lockWaitMs: number };
const db = openDatabase(file);
// Waiting here blocks only this thread: an append may outwait another process's long bulk commit (config.ts).
db.pragma(`busy_timeout = ${lockWaitMs}`);
const groupCommit = new GroupCommit(db);
// Checkpoints run here, between groups, not on the service's event loop (walCheckpoints.ts).
const checkpoints = new WorkerCheckpoints(db);

port.on('message', (request: CommitRequest) => {
  let reply: CommitReply;
  try {
    const results = groupCommit.commit(request.group);
    reply = {
      id: request.id,
      results: results.map((r): WireResult => ('error' in r ? { error: serializeError(r.error) } : r)),
    };
  } catch (error) {
    reply = { id: request.id, failed: serializeError(error) };
  }
  port.postMessage(reply);
  checkpoints.afterCommit();
});
