import type { EventStore, RecordedEvent } from '../ports/eventStore';
import type { ProjectorStore } from '../ports/readModel';
import { Projector } from './projector';
import { readModelProjection } from '.';

/** Events per read-model batch when the caller gives no durable batch size. */
const DEFAULT_CHUNK = 500;

export interface RebuildProgress {
  /** Events replayed so far. */
  events: number;
  /** Position of the last event replayed. */
  position: bigint;
  /** Seconds since the replay started. */
  seconds: number;
  /** Average replay rate so far. */
  eventsPerSecond: number;
}

/**
 * Groups the per-event read-model transactions of a replay into larger commits (the SQLite adapter's per-event
 * transactions become savepoints inside it), so a rebuild pays one durable commit per batch instead of per event.
 * Only for an exclusive replay (the CLI): work of other requests on the same connection would join the batch.
 */
export interface ReplayBatching {
  size: number;
  begin(): void;
  commit(): void;
  rollback(): void;
}

export interface RebuildOptions {
  /** Called about every `progressIntervalMs` (default 1 s) while replaying; the final figures are the return value. */
  onProgress?: (progress: RebuildProgress) => void;
  progressIntervalMs?: number;
  batching?: ReplayBatching;
}

/**
 * Empties the read models and replays the whole log through the projections, strictly in `$all` order, in batches
 * of consecutive events each applied with one checkpoint write (as the live projector does, so the result is the
 * live result).
 */
export async function rebuild(store: EventStore, readModel: ProjectorStore, options: RebuildOptions = {}): Promise<RebuildProgress> {
  const interval = options.progressIntervalMs ?? 1000;
  await readModel.reset();
  const projector = new Projector(store, readModel, readModelProjection);
  const started = performance.now();
  let lastReport = started;
  let events = 0;
  let position = 0n;
  const progress = (): RebuildProgress => {
    const seconds = (performance.now() - started) / 1000;
    return { events, position, seconds, eventsPerSecond: seconds > 0 ? events / seconds : 0 };
  };
  const batching = options.batching;
  const chunkSize = batching?.size ?? DEFAULT_CHUNK;
  let chunk: RecordedEvent[] = [];
  // One read-model batch per chunk (one transaction and one checkpoint write on SQLite), inside the caller's
  // durable batch when it gives one.
  const applyChunk = async () => {
    if (chunk.length === 0) return;
    if (batching) batching.begin();
    try {
      await projector.applyBatch(chunk);
      if (batching) batching.commit();
    } catch (error) {
      // What was committed stays: the checkpoint says where a later start (or rebuild) picks up.
      if (batching) batching.rollback();
      throw error;
    }
    events += chunk.length;
    position = chunk[chunk.length - 1]!.position;
    chunk = [];
    if (options.onProgress && performance.now() - lastReport >= interval) {
      lastReport = performance.now();
      options.onProgress(progress());
    }
  };
  for await (const event of store.readAll()) {
    chunk.push(event);
    if (chunk.length >= chunkSize) await applyChunk();
  }
  await applyChunk();
  return progress();
}
