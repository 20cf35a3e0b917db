/**
 * Worker thread entry of ReplayWriter (src/infra/readmodel/sqlite/replayWriter.ts): commits each planned batch of a replay (its creations' rows
 * and its checkpoint) in one transaction on this thread's own connection, and answers once committed.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../infra/sqlite/openDatabase';
import { CreationTables } from '../infra/readmodel/sqlite/creationTables';
import { COUNT_READ_CLASSES } from '../infra/readmodel/sqlite/readClassCounts';
import type { PlannedBatch, WriterReply, WriterRequest } from '../infra/readmodel/sqlite/replayWriter';

if (!parentPort) throw new Error('replayWriterThread runs as a worker thread (ReplayWriter starts it).');
const port = parentPort;
const { file } = workerData as { file: string };
const db = openDatabase(file);
// As the replay's own connection (src/cli/stores.ts): a large page cache, statement journals in memory, and the WAL
// copied back every 64 MiB. Commits need no fsync of their own, as every read-model batch (sqliteReadModel.ts): the
// events were fsynced when appended, and a batch lost with its checkpoint is replayed again.
db.pragma('temp_store = MEMORY');
db.pragma('cache_size = -65536');
db.pragma('wal_autocheckpoint = 16384');
db.pragma('synchronous = NORMAL');

const tables = new CreationTables(db);
const saveCheckpoint = db.prepare(
  `INSERT INTO rm_checkpoints (projection, position) VALUES (?, ?) ON CONFLICT(projection) DO UPDATE
    SET position = excluded.position`,
);
const commit = db.transaction((batch: PlannedBatch) => {
  if (batch.rows) tables.write(batch.rows);
  saveCheckpoint.run(batch.projection, batch.position);
});

/** Set by the first failure: nothing commits after it (a later checkpoint would skip the failed batch). */
let failure: string | null = null;
port.on('message', (request: WriterRequest) => {
  let reply: WriterReply = { ok: true };
  if (failure === null) {
    try {
      if (request.kind === 'batch') commit.immediate(request);
      else reply = { readClasses: db.prepare(COUNT_READ_CLASSES).raw(true).all() as unknown[][] };
    } catch (error) {
      failure = error instanceof Error ? (error.stack ?? error.message) : String(error);
    }
  }
  port.postMessage(failure === null ? reply : { error: failure });
});
