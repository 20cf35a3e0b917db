/**
 * Worker thread entry of OffLoopReads (src/infra/sqlite/offLoopReads.ts): answers each call with the rows of its statements, read in
 * one transaction on this thread's own connection, which refuses writes (`query_only`).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../infra/sqlite/openDatabase';
import { readRows } from '../infra/sqlite/preparedStatements';
import { serializeError } from '../infra/threadErrors';
import type { ReadReply, ReadRequest, ReadStatement } from '../infra/sqlite/offLoopReads';

if (!parentPort) throw new Error('the off-loop reader runs as a worker thread (OffLoopReads starts it).');
const port = parentPort;
const db = openDatabase((workerData as { file: string }).file);
db.pragma('query_only = ON');
const snapshot = db.transaction((statements: ReadStatement[]) =>
  statements.map((statement) => readRows(db, statement)),
);

port.on('message', (request: ReadRequest) => {
  let reply: ReadReply;
  try {
    reply = { id: request.id, rows: snapshot(request.statements) };
  } catch (error) {
    reply = { id: request.id, failed: serializeError(error) };
  }
  port.postMessage(reply);
});
