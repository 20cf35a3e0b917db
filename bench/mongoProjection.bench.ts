/**
 * Round trips per projected event on the MongoDB read model (issue 32): the projector's batches (one transaction per
 * batch of up to 500 events: generation, checkpoint and fence read once, each event's bulk writes, one checkpoint
 * write) against the same events applied one by one (each its own transaction), over the driver stand-in with a
 * latency per round trip, as a network between the service and MongoDB would add. On a real network the round trips
 * are what bounds the projector's rate (each is sequential: an event's writes depend on the reads before them); the
 * stand-in counts them exactly, where a rate measured over its simulated latency would mostly measure timers.
 *
 * The events are a real log: the embedded service records a mixed workload through the API (folders, items, renames,
 * metadata, moves, an access change), then the log is replayed into a fresh MongoDB read model per mode with the
 * service's own projections (`Projector.applyBatch`, as the live projector and the rebuild call it).
 *
 *   npm run bench -- mongoProjection      (MONGO_BENCH_FOLDERS=<n>, MONGO_BENCH_LATENCY_MS=<ms>; quick: 10 folders)
 */
import type { Benchmark } from './lib/benchRow';
import { startService } from './lib/serverProcess';
import { scenario } from './lib/scenario';
import { loadConfig } from '../src/config';
import { openCommandStores } from '../src/cli/stores';
import type { RecordedEvent } from '../src/ports/eventStore';
import type { EventStore } from '../src/ports/eventStore';
import { MongoReadModel } from '../src/infra/readmodel/mongodb/mongoReadModel';
import { Projector } from '../src/projections/projector';
import { readModelProjection } from '../src/projections';
import { MongoStandIn } from '../test/support/mongoStandIn';

/** The projector's batch size (src/projections/rebuild.ts, the live projector's catch-up). */
const BATCH = 500;

const bench: Benchmark = async ({ quick }) => {
  const folders = Number(process.env.MONGO_BENCH_FOLDERS ?? (quick ? 10 : 300));
  const latencyMs = Number(process.env.MONGO_BENCH_LATENCY_MS ?? 1);
  const events = await recordWorkload(folders);
  const oneByOne = await replay(events, latencyMs, 1);
  const batched = await replay(events, latencyMs, BATCH);
  const perEvent = (r: Replay) => r.roundTrips / events.length;
  const size = `${events.length.toLocaleString('en')} events of a mixed workload, ${latencyMs} ms per round trip`;
  return [
    {
      measure: `MongoDB projection: round trips per event, batches of ${BATCH} (stand-in, ${size})`,
      value: perEvent(batched),
      unit: 'round trips/event',
      baselineName: 'the same events applied one by one',
      baseline: perEvent(oneByOne),
      baselineUnit: 'round trips/event',
      ratio: perEvent(oneByOne) / perEvent(batched),
      goal: '≤ half the round trips of one by one',
      met: perEvent(oneByOne) >= 2 * perEvent(batched),
    },
  ];
};

/** The log of a mixed workload recorded by the embedded service, every event the read-model projections handle. */
async function recordWorkload(folders: number): Promise<RecordedEvent[]> {
  const service = await startService();
  try {
    const s = await scenario(service);
    const ids: string[] = [];
    for (let i = 0; i < folders; i++) {
      const parentId = i % 4 === 0 || ids.length === 0 ? s.publicFolderId : ids[ids.length - 1];
      const folder = await s.admin.ok<{ _id: string }>('POST', '/folder', {
        parentType: 'folder',
        parentId,
        name: `folder ${i}`,
      });
      ids.push(folder._id);
      await s.admin.ok('POST', '/item', { folderId: folder._id, name: `item ${i}` });
      await s.admin.ok('PUT', `/folder/${folder._id}`, { name: `renamed ${i}`, description: 'edited' });
      await s.admin.ok('PUT', `/folder/${folder._id}/metadata`, { metadata: JSON.stringify({ i }) });
      if (i % 5 === 4)
        await s.admin.ok('PUT', `/folder/${folder._id}`, { parentType: 'folder', parentId: s.publicFolderId });
    }
    await s.admin.ok('PUT', `/folder/${ids[0]}/access`, {
      access: JSON.stringify({ users: [{ id: s.userId, level: 0, flags: [] }], groups: [] }),
      recurse: 'true',
      public: 'false',
    });
    await service.stop();
    const config = loadConfig({ DATA_DIR: service.dataDir, LOG_LEVEL: 'warn', NODE_ENV: 'production' });
    const stores = await openCommandStores(config, 'measure');
    try {
      return await projectedEvents(stores.eventStore);
    } finally {
      await stores.close();
    }
  } finally {
    await service.remove();
  }
}

async function projectedEvents(store: EventStore): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  const onlyTypes = { types: Object.keys(readModelProjection.handlers), onSkipped: () => undefined };
  for await (const event of store.readAll({ onlyTypes })) events.push(event);
  return events;
}

interface Replay {
  roundTrips: number;
}

/** Replays `events` into a fresh MongoDB read model over a stand-in with `latencyMs`, `batch` events per call. */
async function replay(events: RecordedEvent[], latencyMs: number, batch: number): Promise<Replay> {
  const standIn = new MongoStandIn({ transactions: true });
  const readModel = await MongoReadModel.open(standIn.asClient(), standIn.db('bench').asDb());
  // The log is only read (above); the projector is used for its batching, not subscribed.
  const projector = new Projector(undefined as unknown as EventStore, readModel, readModelProjection);
  standIn.latencyMs = latencyMs;
  const before = standIn.roundTrips;
  for (let i = 0; i < events.length; i += batch) {
    const chunk = events.slice(i, i + batch);
    const applied = await projector.applyBatch(chunk);
    if (applied !== chunk.length) throw new Error(`applied ${applied} of ${chunk.length} events`);
  }
  const roundTrips = standIn.roundTrips - before;
  await readModel.dispose();
  return { roundTrips };
}

export default bench;
