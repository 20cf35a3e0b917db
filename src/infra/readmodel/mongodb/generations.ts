import type { ClientSession, Collection, Db } from 'mongodb';
import { GenerationCollections, META_COLLECTION, type CollectionName, type StoredDoc } from './collections';
import { markCounted } from './childCounts';

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
}

/** Where queries read: the current generation's collections. */
export interface ReadSource {
  get(name: CollectionName): Promise<Collection<StoredDoc>>;
  /** Bytes one statement's `$in` lists may take (./boundedIn.ts). */
  readonly inBudget: number;
}

export class Generations implements ReadSource {
  private cached: { generation: number; at: number } | null = null;

  constructor(
    private readonly db: Db,
    private readonly cacheMs: number,
    readonly inBudget: number,
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
    this.cached = { generation: alias.current, at: Date.now() };
    return alias;
  }

  /** The current generation, re-read from the alias (writers use this, so they follow a switch at once). */
  async current(session?: ClientSession): Promise<number> {
    return (await this.alias(session)).current;
  }

  /** The current generation as readers see it: the alias is re-read at most every `cacheMs`. */
  async readable(): Promise<number> {
    if (this.cached && Date.now() - this.cached.at < this.cacheMs) return this.cached.generation;
    return this.current();
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
