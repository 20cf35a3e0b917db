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

/** Where queries read: the current generation's collections. */
export interface ReadSource {
  get(name: CollectionName): Promise<Collection<StoredDoc>>;
  /** Bytes one statement's `$in` lists may take (./boundedIn.ts). */
  readonly inBudget: number;
}

export class Generations implements ReadSource {
  private cached: { generation: number; barrier: boolean; at: number } | null = null;
  /** The one wait for a barrier to fall that every held reader shares. */
  private barrierWait: Promise<number> | null = null;

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
    const alias = await this.meta.findOne({ _id: 'alias' }, session ? { session } : {});
    if (!alias) throw new Error('MongoReadModel: the rm_meta alias document is missing (was the database dropped?).');
    this.cached = { generation: alias.current, barrier: !!barrierOf(alias, alias.current), at: Date.now() };
    return alias;
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
    const fresh = this.cached && Date.now() - this.cached.at < this.cacheMs ? this.cached : null;
    if (fresh && !fresh.barrier) return fresh.generation;
    if (!fresh) {
      const alias = await this.alias();
      if (!barrierOf(alias, alias.current)) return alias.current;
    }
    this.barrierWait ??= this.untilBarrierFalls().finally(() => (this.barrierWait = null));
    return this.barrierWait;
  }

  private async untilBarrierFalls(): Promise<number> {
    const started = Date.now();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, BARRIER_POLL_MS));
      const alias = await this.alias();
      if (!barrierOf(alias, alias.current)) return alias.current;
      if (Date.now() - started >= this.barrierWaitMs) throw new ReadModelBusyError(Date.now() - started);
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
      { $set: { [`applying.${barrierKey(generation)}`]: barrier } },
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
