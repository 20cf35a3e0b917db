/**
 * The projection an append's own transaction runs on the embedded deployment (src/ports/projectionInAppend.ts): the
 * {@link ProjectAppended} of the service's append worker (appendProjectingWorker.ts).
 */
import { tuneProjectingConnection } from '../infra/sqlite/liveConnection';
import { EVENTS_SCHEMA, type AppendedEvent, type ProjectAppended } from '../infra/eventstore/sqlite/groupCommit';
import type { SqliteDatabase } from '../infra/sqlite/openDatabase';
import { SqliteReadModel } from '../infra/readmodel/sqlite/sqliteReadModel';
import { touchesSubtree } from '../infra/readmodel/sqlite/bulkApply';
import { readModelProjection } from '../projections';
import { needsPlan, unplannedWriterOf, type Projection } from '../projections/projection';
import { READ_MODELS_CHECKPOINT } from '../projections/projector';
import type { EventMetadata, RecordedEvent } from '../ports/eventStore';
import type { BatchedWrite } from '../ports/readModel';

/**
 * Builds the read model on `db` (the worker's connection) and returns what projects a group's appends in its
 * transaction. Projects only in order (every earlier event reflected already), only events that need neither a plan
 * nor the background, and in a savepoint: a failure leaves the appends to commit and the events to the projector.
 */
export function projectAppendedOn(db: SqliteDatabase, projection: Projection = readModelProjection): ProjectAppended {
  tuneProjectingConnection(db);
  db.exec(EVENTS_SCHEMA);
  const readModel = new SqliteReadModel(db);
  const checkpointStmt = db
    .prepare<[string], bigint>('SELECT position FROM rm_checkpoints WHERE projection = ?')
    .pluck()
    .safeIntegers(true);
  const lastBeforeStmt = db
    .prepare<[bigint], bigint | null>('SELECT max(position) FROM es_events WHERE position < ?')
    .pluck()
    .safeIntegers(true);

  return (appended, fence) => {
    // Only in order: every event before this group must be reflected already (else the projector has a backlog to
    // apply first, and it applies these too).
    const checkpoint = checkpointStmt.get(READ_MODELS_CHECKPOINT) ?? 0n;
    if (checkpoint < (lastBeforeStmt.get(appended[0].position) ?? 0n)) return undefined;
    const writes: BatchedWrite[] = [];
    for (const appendedEvent of appended) {
      const event = recorded(appendedEvent);
      // A planned event reads the read models first, asynchronously, and a subtree event may belong in the
      // background: both end what is projected here, and the projector takes over from them.
      if (needsPlan(projection, event) || touchesSubtree(event)) break;
      writes.push({ position: event.position, write: unplannedWriterOf(projection, event) });
    }
    if (writes.length === 0) return undefined;
    try {
      readModel.applyBatchNow(READ_MODELS_CHECKPOINT, writes, fence);
    } catch {
      // Rolled back to its savepoint, the appends stay: the projector meets the same events, and reports a failure
      // (or a lease taken over) as it always does.
      return undefined;
    }
    return writes[writes.length - 1].position;
  };
}

function recorded(event: AppendedEvent): RecordedEvent {
  return {
    id: event.id,
    streamId: event.streamId,
    revision: event.revision,
    position: event.position,
    type: event.type,
    data: JSON.parse(event.data) as unknown,
    metadata: JSON.parse(event.metadata) as EventMetadata,
  };
}
