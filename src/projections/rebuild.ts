import type { EventStore, RecordedEvent } from '../ports/eventStore';
import type { ProjectorStore } from '../ports/readModel';
import { Projector, READ_MODELS_CHECKPOINT } from './projector';
import { readModelProjection } from '.';
import { ReplayMeter, type RebuildProgress } from './replayProgress';

/** Events per read-model batch when the caller gives no durable batch size. */
const DEFAULT_CHUNK = 500;

export interface RebuildOptions {
  /** Called about every `progressIntervalMs` (default 1 s) while replaying; the final figures are the return value. */
  onProgress?: (progress: RebuildProgress) => void;
  progressIntervalMs?: number;
  /**
   * Events per read-model batch. Each batch is one `applyBatch`: on SQLite one top-level transaction with one
   * checkpoint write. Not inside a caller's BEGIN: that would make the batch a savepoint, and SQLite journals the
   * original of every page a savepoint touches into a sub-journal that spills to a temp file past 64 KiB, more page
   * writes than the read models' own.
   */
  chunkSize?: number;
}

/**
 * A replay found the checkpoint past events it had not applied yet: something else projected into the read models
 * while they were emptied and refilled in place (a running service's projector), and the result would lack those
 * events. The rebuild stops instead; run it again with no projector writing (stop the service, or let its projector
 * reach the head of the log first when nothing else appends).
 */
export class ConcurrentProjectionError extends Error {
  constructor(chunk: RecordedEvent[], applied: number) {
    const first = chunk[0].position;
    const last = chunk[chunk.length - 1].position;
    super(
      `The rebuild applied ${applied} of the ${chunk.length} events at positions ${first}..${last}: the read-model ` +
        'checkpoint moved past the replay, so another projector wrote to the read models while they were rebuilt. ' +
        'Rebuild again with no projector running on them.',
    );
    this.name = 'ConcurrentProjectionError';
  }
}

/** A read model that can defer derived state to the end of a replay (the SQLite one: replayMode.ts). */
interface ReplayAware {
  /** Empties the read models (as `reset()` does) and enters replay mode. */
  beginReplay(): Promise<void>;
  endReplay(): Promise<void>;
}
const replayAware = (readModel: ProjectorStore): ReplayAware | null =>
  typeof (readModel as Partial<ReplayAware>).beginReplay === 'function' ? (readModel as unknown as ReplayAware) : null;

/**
 * Empties the read models and replays the whole log through the projections, strictly in `$all` order, in batches
 * of consecutive events each applied with one checkpoint write (as the live projector does, so the result is the
 * live result).
 */
export async function rebuild(
  store: EventStore,
  readModel: ProjectorStore,
  options: RebuildOptions = {},
): Promise<RebuildProgress> {
  const replay = replayAware(readModel);
  if (replay) await replay.beginReplay();
  else await readModel.reset();
  const projector = new Projector(store, readModel, readModelProjection);
  const meter = new ReplayMeter(options.onProgress, options.progressIntervalMs);
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK;
  // Events no projection handles (half a typical log: `ValueClaimed`) may be left in the store; they count as
  // replayed, and the checkpoint moves past any of them at the end of the log, as the live projector's does.
  let skippedThrough = 0n;
  const onlyTypes = {
    types: Object.keys(readModelProjection.handlers),
    onSkipped: (count: number, through: bigint) => {
      meter.passed(count);
      if (through > skippedThrough) skippedThrough = through;
    },
  };
  let chunk: RecordedEvent[] = [];
  // One read-model batch per chunk (one transaction and one checkpoint write on SQLite). If one fails, what was
  // committed stays: the checkpoint says where a later start (or rebuild) picks up.
  const applyChunk = async () => {
    if (chunk.length === 0) return;
    const applied = await projector.applyBatch(chunk);
    // After the reset the replay is the only writer, so every event it reads is applied. One skipped means the
    // checkpoint moved past it meanwhile: another projector (a live service's, in this process or another) wrote to
    // the read models being refilled, and the rest of the log would be skipped as well, silently.
    if (applied < chunk.length) throw new ConcurrentProjectionError(chunk, applied);
    meter.reached(chunk[chunk.length - 1].position, chunk.length);
    chunk = [];
  };
  for await (const event of store.readAll({ onlyTypes })) {
    chunk.push(event);
    if (chunk.length >= chunkSize) await applyChunk();
  }
  await applyChunk();
  if (skippedThrough > meter.lastPosition) {
    await readModel.applyBatch(READ_MODELS_CHECKPOINT, [{ position: skippedThrough, write: () => undefined }]);
    meter.movedTo(skippedThrough);
  }
  // The derived state last, after the checkpoint of the last chunk: a replay stopped before this point completes it
  // when the read models are next opened.
  await replay?.endReplay();
  return meter.progress();
}
