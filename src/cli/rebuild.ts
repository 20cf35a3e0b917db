import type { Config } from '../config';
import type { EventStore } from '../ports/eventStore';
import type { ReadModel } from '../ports/readModel';
import { MongoReadModel } from '../infra/readmodel/mongodb/mongoReadModel';
import { rebuild } from '../projections/rebuild';
import { ReplayMeter, type RebuildProgress } from '../projections/replayProgress';
import { PROJECTOR_LEASE, Projector, READ_MODELS_CHECKPOINT } from '../projections/projector';
import { readModelProjection } from '../projections';
import { takeLease } from '../projections/leaseHolder';
import { holderStarted, holderStopped, newHolderId } from '../ports/holderIdentity';
import { openCommandStores } from './stores';

/** Events per read-model transaction while replaying into SQLite. */
const BATCH_SIZE = 2000;
/** Pause before looking again for events when a MongoDB rebuild waits for the live projector's position. */
const CATCH_UP_PAUSE_MS = 100;

const describe = (p: RebuildProgress) =>
  `replayed ${p.events} events in ${p.seconds.toFixed(1)} s (${Math.round(p.eventsPerSecond)} events/s)`;

/**
 * The projections are not split: one dispatch table (src/projections/index.ts) feeds every read model under one
 * checkpoint, so `--projection` accepts only that one name.
 */
const PROJECTION_NAMES = [READ_MODELS_CHECKPOINT] as const;

/** `[--projection NAME]` (or `--projection=NAME`). */
function checkRebuildArgs(args: string[]): void {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    let name: string | undefined;
    if (arg === '--projection') name = args.at(++i);
    else if (arg.startsWith('--projection=')) name = arg.slice('--projection='.length);
    else throw new Error(`Unknown argument "${arg}". Usage: rebuild [--projection ${PROJECTION_NAMES.join('|')}].`);
    if (!name || !(PROJECTION_NAMES as readonly string[]).includes(name)) {
      throw new Error(
        `Unknown projection "${name ?? ''}". The read models are one projection, "${READ_MODELS_CHECKPOINT}" (one checkpoint): rebuild rebuilds them all.`,
      );
    }
  }
}

/**
 * `npm run cli -- rebuild [--projection read-models]`: replays the whole event log into the configured read models
 * (EVENT_STORE, READ_MODEL), printing progress (events and events/s) about once a second.
 *  - SQLite read models are emptied and refilled in place, so no service may project into them meanwhile: the
 *    command holds the projector lease while it runs, and refuses to start while a live service holds it.
 *  - MongoDB read models are rebuilt blue/green (src/infra/readmodel/mongodb/generations.ts) and the service may keep
 *    running: the replay fills a new generation while readers and the live projector (the lease holder) keep the
 *    current one; once the new generation has caught up with the live one, the alias switches to it and the live
 *    projector goes on there. On a MongoDB without transactions (standalone) the command holds the lease instead,
 *    as for SQLite.
 */
export async function rebuildReadModels(
  config: Config,
  args: string[],
  out: NodeJS.WriteStream = process.stdout,
): Promise<RebuildProgress> {
  checkRebuildArgs(args);
  const stores = await openCommandStores(config, 'rebuild', { replay: true });
  try {
    const { eventStore, readModel, db } = stores;
    // Set by the progress callback while the rebuild runs (an object, so the check at the end is not narrowed away).
    const terminal = { overwriting: false };
    const onProgress = (p: RebuildProgress) => {
      // On a terminal the progress line rewrites itself; in a log each report is its own line.
      out.write(out.isTTY ? `\r${describe(p)}` : `${describe(p)}\n`);
      terminal.overwriting = out.isTTY;
    };
    const head = await eventStore.headPosition();
    let done: RebuildProgress;
    if (readModel instanceof MongoReadModel) {
      out.write(
        `Rebuilding the read models in ${stores.describe()} (event log head at position ${head}) into a new generation; ` +
          `readers keep generation ${await readModel.currentGeneration()} until it has caught up\n`,
      );
      const replay = () => rebuildBlueGreen(eventStore, readModel, onProgress);
      // Without transactions (a standalone server) the switch cannot fence off a live projector's last write to the
      // old generation, so the rebuild then keeps the projectors out with the lease instead.
      done = readModel.transactional
        ? await replay()
        : await withProjectorLease(readModel, config, stores.describe(), replay);
    } else {
      out.write(`Rebuilding the read models in ${stores.describe()} (event log head at position ${head})\n`);
      done = await withProjectorLease(readModel, config, stores.describe(), () =>
        rebuild(eventStore, readModel, { chunkSize: db ? BATCH_SIZE : undefined, onProgress }),
      );
    }
    if (terminal.overwriting) out.write('\n');
    const generation =
      readModel instanceof MongoReadModel ? `, generation ${await readModel.currentGeneration()} current` : '';
    out.write(`Rebuild complete: ${describe(done)}, read models at position ${done.position}${generation}.\n`);
    return done;
  } finally {
    await stores.close();
  }
}

/**
 * Holds the projector lease while `work` runs (renewed every third of its time to live), so that no service projects
 * into read models being emptied and refilled; a service started meanwhile stands by and takes over afterwards.
 */
async function withProjectorLease<T>(
  readModel: ReadModel,
  config: Config,
  where: string,
  work: () => Promise<T>,
): Promise<T> {
  const ttlMs = config.projectorLeaseTtlMs;
  const holder = newHolderId();
  holderStarted(holder);
  try {
    if (!(await takeLease(readModel.leases, PROJECTOR_LEASE, holder, ttlMs))) {
      const current = await readModel.leases.get(PROJECTOR_LEASE);
      const seconds = current ? Math.max(0, Math.ceil((current.expiresAt.getTime() - Date.now()) / 1000)) : 0;
      throw new Error(
        `A service is running on ${where}: ${current?.holder ?? 'another process'} holds the projector lease. ` +
          `Stop it before rebuilding the read models there; if it is already stopped, its lease expires within ${seconds} s.`,
      );
    }
    const timer = setInterval(
      () => {
        readModel.leases.renew(PROJECTOR_LEASE, holder, ttlMs).catch(() => undefined);
      },
      Math.max(1, Math.floor(ttlMs / 3)),
    );
    timer.unref();
    try {
      return await work();
    } finally {
      clearInterval(timer);
      await readModel.leases.release(PROJECTOR_LEASE, holder);
    }
  } finally {
    holderStopped(holder);
  }
}

/**
 * The MongoDB rebuild: `reset()` starts a new generation, the log is replayed into it, and the alias switches once it
 * has caught up with the current generation's checkpoint (MongoReadModel.apply checks after every event). The live
 * projector may move on meanwhile, so the replay goes on past the head it first saw until the switch; after the
 * switch it stops, leaving the new generation to the live projector (or to the next service start).
 */
async function rebuildBlueGreen(
  store: EventStore,
  readModel: MongoReadModel,
  onProgress: (progress: RebuildProgress) => void,
): Promise<RebuildProgress> {
  const projector = new Projector(store, readModel, readModelProjection);
  const meter = new ReplayMeter(onProgress);
  await readModel.reset();
  for (;;) {
    for await (const event of store.readAll({ fromPosition: meter.lastPosition })) {
      if (readModel.rebuildGeneration === null) break;
      await projector.applyEvent(event);
      meter.reached(event.position, 1);
    }
    const state = await readModel.completeRebuild();
    if (state === 'switched') return meter.progress();
    if (state === 'superseded')
      throw new Error('Another rebuild started while this one ran; its generation was abandoned.');
    await new Promise((resolve) => setTimeout(resolve, CATCH_UP_PAUSE_MS));
  }
}
