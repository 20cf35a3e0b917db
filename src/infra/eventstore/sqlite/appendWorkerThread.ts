/**
 * Worker thread entry of AppendWorker (appendWorker.ts): commits each group it is sent on this thread's own
 * connection (synchronous=FULL: the commit returns after its fsync) and answers only then.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../../sqlite/openDatabase';
import { GroupCommit } from './groupCommit';
import { serializeError, type CommitReply, type CommitRequest, type WireResult } from './appendWorker';

const { file } = workerData as { file: string };
const groupCommit = new GroupCommit(openDatabase(file));

parentPort!.on('message', (request: CommitRequest) => {
  let reply: CommitReply;
  try {
    const results = groupCommit.commit(request.group);
    reply = { id: request.id, results: results.map((r): WireResult => ('error' in r ? { error: serializeError(r.error) } : r)) };
  } catch (error) {
    reply = { id: request.id, failed: serializeError(error) };
  }
  parentPort!.postMessage(reply);
});
