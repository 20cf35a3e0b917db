/**
 * The loop of an append worker thread (AppendWorker, appendWorker.ts): commits each group it is sent on this thread's
 * own connection (synchronous=FULL: the commit returns after its fsync) and answers only then. An entry calls it once;
 * `projectWith`, when given, makes the group's transaction project what it appended (groupCommit.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase, type SqliteDatabase } from '../../sqlite/openDatabase';
import { GroupCommit, type ProjectAppended } from './groupCommit';
import type { LeaseFence } from '../../../ports/readModel';
import { WorkerCheckpoints } from '../../sqlite/walCheckpoints';
import type { CommitReply, CommitRequest, WireResult } from './appendWorker';
import { serializeError } from '../../threadErrors';

export function serveAppendCommits(projectWith?: (db: SqliteDatabase) => ProjectAppended): void {
  if (!parentPort) throw new Error('an append worker runs as a worker thread (AppendWorker starts it).');
  const port = parentPort;
  const { file, lockWaitMs } = workerData as { file: string; lockWaitMs: number };
  const db = openDatabase(file);
  // Waiting here blocks only this thread: an append may outwait another process's long bulk commit (config.ts).
  db.pragma(`busy_timeout = ${lockWaitMs}`);
  let project: ProjectAppended | undefined;
  const groupCommit = new GroupCommit(db, (appended, fence) => project?.(appended, fence));
  // Checkpoints run here, between groups, not on the service's event loop (walCheckpoints.ts).
  const checkpoints = new WorkerCheckpoints(db);

  /**
   * The projection, built before the first group that asks for it and outside its transaction (it sets up the
   * connection and the read model's statements): by then the service has opened and migrated the read models. Should
   * that fail, the group is committed without it, and the projector applies its events.
   */
  const projectionReady = (request: CommitRequest): LeaseFence | undefined => {
    if (!request.fence || !projectWith) return undefined;
    try {
      project ??= projectWith(db);
      return request.fence;
    } catch {
      return undefined;
    }
  };

  port.on('message', (request: CommitRequest) => {
    let reply: CommitReply;
    try {
      const { results, projectedThrough } = groupCommit.commit(request.group, projectionReady(request));
      reply = {
        id: request.id,
        results: results.map((r): WireResult => ('error' in r ? { error: serializeError(r.error) } : r)),
        ...(projectedThrough === undefined ? {} : { projectedThrough }),
      };
    } catch (error) {
      reply = { id: request.id, failed: serializeError(error) };
    }
    port.postMessage(reply);
    checkpoints.afterCommit();
  });
}
