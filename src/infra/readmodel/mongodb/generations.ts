import type { ClientSession, Collection, Db } from 'mongodb';
import { GenerationCollections, META_COLLECTION, type CollectionName, type StoredDoc } from './mongoCollections';
import { markCounted } from './childCounts';
import { ReadModelBusyError } from '../../../ports/readModelBusy';
import { ownValue } from '../../../domain/ownMap';

/**
 * Blue/green generations of the read models.
 *
 * Every collection of the read models exists once per generation (`rm_folders_g1`, `rm_folders_g2`, …). The alias
 * document `rm_meta {_id: 'alias'}` names the generation readers use (`current`), the one a rebuild is filling
 * (`building`), the generations replaced by a rebuild and not dropped yet (`retired`) and the next free number.
 *
 * A rebuild (`MongoReadModel.reset()` followed by the replay) writes into a fresh generation while readers keep
 * reading the current one, complete and live. When the new generation has caught up with the current one (its
 * checkpoints are at or past the current generation's), the alias switches to it in one write: readers never see
 * a half-built read model. The replaced generation is kept (readers that resolved the alias just before the switch
 * may still be reading it) and dropped by the next rebuild.
 */
export interface AliasDoc {
  _id: 'alias';
  current: number;
  building: number | null;
  retired: number[];
  next: number;
  /** Barriers by generation: an event too large for one transaction is being applied there (./stepwiseApply.ts). */
  applying?: Record<string, Barrier>;
  /** Barriers raised so far, by generation: a read that saw the same count before and after met none. */
  raised?: Record<string, number>;
}

/** An event being applied in steps, from its barrier's transaction until the one that moves its checkpoint. */
export interface Barrier {
  projection: string;
  position: string;
}

/** A generation's key in `applying` (not a bare number, which a dotted path could take for an array index). */
const barrierKey = (generation: number) => `g${generation}`;

/** The barrier raised on `generation`, if any. */
export function barrierOf(alias: AliasDoc, generation: number): Barrier | undefined {
  return alias.applying ? ownValue(alias.applying, barrierKey(generation)) : undefined;
}

/** How often a reader held by a barrier looks again. */
const BARRIER_POLL_MS = 25;

/** What a reader knows of the alias: read at `at` (`performance.now()` before the read was sent). */
interface ReaderView {
  generation: number;
  barrier: boolean;
  /** Barriers raised on `generation` so far. */
  raised: number;
  at: number;
}

function viewOf(alias: AliasDoc, at: number): ReaderView {
  const key = barrierKey(alias.current);
  return {
    generation: alias.current,
    barrier: !!barrierOf(alias, alias.current),
    raised: alias.raised ? (ownValue(alias.raised, key) ?? 0) : 0,
    at,
  };
}

/** Where queries read: the current generation's collections. */
export interface ReadSource {
  get(name: CollectionName): Promise<Collection<StoredDoc>>;
  /** Bytes one statement's `$in` lists may take (./boundedIn.ts). */
  readonly inBudget: number;
}

export class Generations implements ReadSource {
  /**
   * The alias as readers last read it. A read in a writer's session does not replace it (its snapshot may be older
   * than a reader's read), but drops it when it names another generation: the projector follows a switch at once,
   * and a request that waits for its event to be projected must then read where the event was written.
   */
  private cached: ReaderView | null = null;
  /** The one wait for a barrier to fall that every held reader shares. */
  private barrierWait: Promise<ReaderView> | null = null;

  constructor(
    private readonly db: Db,
    readonly cacheMs: number,
    readonly inBudget: number,
    /** How long a reader waits for a barrier to fall before it gives up with {@link ReadModelBusyError}. */
    private readonly barrierWaitMs: number,
  ) {}

  private get meta(): Collection<AliasDoc> {
    return this.db.collection<AliasDoc>(META_COLLECTION);
  }

  collections(generation: number): GenerationCollections {
    return new GenerationCollections(this.db, generation);
  }

  /** Creates the alias on a fresh database (generation 1) and makes sure the current generation's indexes exist. */
  async init(): Promise<AliasDoc> {
    const created = await this.meta.updateOne(
      { _id: 'alias' },
      { $setOnInsert: { current: 1, building: null, retired: [], next: 2 } },
      { upsert: true },
    );
    const alias = await this.alias();
    await this.collections(alias.current).createIndexes();
    if (created.upsertedCount === 1) await markCounted(this.collections(alias.current));
    return alias;
  }

  async alias(session?: ClientSession): Promise<AliasDoc> {
    return (await this.readAlias(session)).alias;
  }

  private async readAlias(session?: ClientSession): Promise<{ alias: AliasDoc; view: ReaderView }> {
    const at = performance.now();
    const alias = await this.meta.findOne({ _id: 'alias' }, session ? { session } : {});
    if (!alias) throw new Error('MongoReadModel: the rm_meta alias document is missing (was the database dropped?).');
    const view = viewOf(alias, at);
    if (!session) this.cached = view;
    else if (this.cached && this.cached.generation !== view.generation) this.cached = null;
    return { alias, view };
  }

  /** The current generation, re-read from the alias (writers use this, so they follow a switch at once). */
  async current(session?: ClientSession): Promise<number> {
    return (await this.alias(session)).current;
  }

  /**
   * The current generation as readers see it: the alias is re-read at most every `cacheMs`. While a barrier stands
   * on it (an event applied in steps, ./stepwiseApply.ts), readers wait until it falls, so that they see the event
   * whole or not at all; after `barrierWaitMs` they give up with {@link ReadModelBusyError} (HTTP 503). A reader
   * cannot tell which documents the event reaches without reading them, so every reader waits.
   */
  async readable(): Promise<number> {
    return (await this.view()).generation;
  }

  private async view(): Promise<ReaderView> {
    const cached = this.cached;
    if (cached && performance.now() - cached.at < this.cacheMs) {
      if (!cached.barrier) return cached;
    } else {
      const { view } = await this.readAlias();
      if (!view.barrier) return view;
    }
    this.barrierWait ??= this.untilBarrierFalls().finally(() => (this.barrierWait = null));
    return this.barrierWait;
  }

  private async untilBarrierFalls(): Promise<ReaderView> {
    const started = performance.now();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, BARRIER_POLL_MS));
      const { view } = await this.readAlias();
      if (!view.barrier) return view;
      if (performance.now() - started >= this.barrierWaitMs)
        throw new ReadModelBusyError(Math.round(performance.now() - started));
    }
  }

  /**
   * Runs `read` (the queries of one read-model call) so that it sees an event applied in steps whole or not at all,
   * even when it began before the event's barrier rose. The reader's view of the alias was read at `view.at`; a
   * barrier raised after that read delays the event's first write by `2 * cacheMs` (./stepwiseApply.ts), so a read
   * that has ended sooner than that after `view.at` read nothing of it. A read that took longer (a slow query, a
   * view near the end of its `cacheMs`, a paused process) looks at the alias again: when a barrier rose on its
   * generation meanwhile (or the generation changed), it may have read part of an event, and runs again, waiting for
   * the barrier to fall as every read does. One alias read more, only for reads slower than `2 * cacheMs`.
   */
  async consistent<T>(read: () => Promise<T>): Promise<T> {
    for (;;) {
      const view = await this.view();
      const result = await read();
      if (performance.now() - view.at < 2 * this.cacheMs) return result;
      const { view: now } = await this.readAlias();
      if (now.generation === view.generation && !now.barrier && now.raised === view.raised) return result;
    }
  }

  /**
   * Raises the barrier of `position` on `generation` in `session`'s transaction; false when another event's barrier
   * stands there (the event applied in steps before this one has not finished).
   */
  async raiseBarrier(generation: number, barrier: Barrier, session?: ClientSession): Promise<boolean> {
    const alias = await this.alias(session);
    const standing = barrierOf(alias, generation);
    if (standing) return standing.projection === barrier.projection && standing.position === barrier.position;
    await this.meta.updateOne(
      { _id: 'alias' },
      { $set: { [`applying.${barrierKey(generation)}`]: barrier }, $inc: { [`raised.${barrierKey(generation)}`]: 1 } },
      session ? { session } : {},
    );
    return true;
  }

  /** Takes the barrier of `barrier.position` off `generation` (in the transaction that moves its checkpoint). */
  async lowerBarrier(generation: number, barrier: Barrier, session?: ClientSession): Promise<void> {
    const field = `applying.${barrierKey(generation)}`;
    await this.meta.updateOne(
      { _id: 'alias', [`${field}.position`]: barrier.position, [`${field}.projection`]: barrier.projection },
      { $unset: { [field]: '' } },
      session ? { session } : {},
    );
  }

  async get(name: CollectionName): Promise<Collection<StoredDoc>> {
    return this.collections(await this.readable()).get(name);
  }

  /**
   * Allocates a new, empty generation for a rebuild: drops the retired generations and any abandoned build, creates
   * the new generation's indexes and records it as `building`.
   */
  async beginBuild(): Promise<number> {
    const alias = await this.meta.findOneAndUpdate(
      { _id: 'alias' },
      { $inc: { next: 1 } },
      { returnDocument: 'after' },
    );
    if (!alias) throw new Error('MongoReadModel: the rm_meta alias document is missing.');
    const generation = alias.next - 1;
    const stale = [...alias.retired, ...(alias.building !== null ? [alias.building] : [])].filter(
      (g) => g !== alias.current,
    );
    for (const old of stale) await this.collections(old).drop();
    await this.collections(generation).drop();
    await this.collections(generation).createIndexes();
    await markCounted(this.collections(generation));
    await this.meta.updateOne({ _id: 'alias' }, { $set: { building: generation }, $pullAll: { retired: stale } });
    return generation;
  }

  /**
   * Makes `generation` (the one being built) current. The old generation's checkpoint documents are written in the
   * same transaction, so that a live projector applying an event to the old generation at the same moment conflicts
   * with the switch and retries against the new one.
   */
  async switchTo(generation: number, session?: ClientSession): Promise<boolean> {
    const options = session ? { session } : {};
    const alias = await this.alias(session);
    if (alias.building !== generation) return false;
    await this.collections(alias.current)
      .get('checkpoints')
      .updateMany({}, { $set: { replacedBy: generation } }, options);
    const result = await this.meta.updateOne(
      { _id: 'alias', building: generation },
      { $set: { current: generation, building: null }, $push: { retired: alias.current } },
      options,
    );
    return result.modifiedCount === 1;
  }
}
