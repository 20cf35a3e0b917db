import type { ClientSession, Db, MongoClient } from 'mongodb';
import type {
  BatchedWrite,
  LeaseFence,
  ProjectionReads,
  ReadModel,
  ReadModelTx,
  RowRef,
} from '../../../ports/readModel';
import { MongoApiKeys, MongoTokens, MongoUsers, apiKeyWrites, tokenWrites, userWrites } from './accountsStore';
import { MongoCollections, collectionWrites } from './collectionsStore';
import { MongoGroups, groupWrites } from './groupsStore';
import { MongoFolders, folderWrites } from './foldersStore';
import { MongoFiles, MongoItems, fileWrites, itemWrites } from './itemsStore';
import { MongoSubtree, subtreeWrites } from './subtreeStore';
import { MongoHistory, historyWrites } from './historyStore';
import { Generations, barrierOf, type ReadSource } from './generations';
import type { CollectionName, GenerationCollections } from './mongoCollections';
import { OperationLog, runOperations, type PresenceCheck } from './writes';
import { moveCheckpoint, readCheckpoint } from './checkpoints';
import { applyInSteps, reachesMoreThan, type StepwiseTarget } from './stepwiseApply';
import { dumpGeneration } from './dump';
import { MongoLeases } from './leasesStore';
import { inListBudget } from './boundedIn';
import { consistentReads, type AsyncMethodsOnly } from './consistentReads';

export interface MongoReadModelOptions {
  /**
   * Apply each event in a transaction: `'auto'` (default) when the deployment supports them (a replica-set member
   * or mongos answers `hello` with `setName` / `msg: 'isdbgrid'`), else the idempotent non-transactional path.
   */
  transactions?: 'auto' | boolean;
  /**
   * How long readers may use the current generation before re-reading the alias (ms, default 1000). The same in
   * every process on one database: an event applied in steps begins to write twice this long after its barrier, which
   * is what readers of other processes count on (./consistentReads.ts).
   */
  aliasCacheMs?: number;
  /**
   * An event whose subtree operations reach more folders and items than this is applied in steps behind a barrier
   * instead of in one transaction (./stepwiseApply.ts; default 10,000: each reached document brings a few writes,
   * well inside what a transaction of the server's 60 s lifetime and cache share can take).
   */
  stepwiseAbove?: number;
  /**
   * The most documents one step of an event applied in steps writes (default 1,000): each step is a transaction of
   * its own, which checks the projector's lease fence before its writes.
   */
  documentsPerStep?: number;
  /** How long a reader waits for an event applied in steps before it answers 503 (ms, default 10,000). */
  barrierWaitMs?: number;
  /** Called by dispose() (e.g. to close a client the read model owns). */
  onDispose?: () => Promise<void>;
}

/**
 * The read models in MongoDB (official driver), as documents shaped like Girder's (mongoCollections.ts lists them and
 * their indexes).
 *
 * - Queries filter permissions and text inside the query (`$or` of public / user / group ACL entries, `$text`).
 * - Projection writes are recorded synchronously and run by `apply` (writes.ts): every write is guarded by a
 *   per-document stamp and the checkpoint document moves last, so replaying an event changes nothing even without a
 *   transaction; when the deployment supports transactions, each event's writes and checkpoint commit atomically.
 * - `reset()` starts a blue/green rebuild (generations.ts): the replay fills a new generation of collections while
 *   readers keep the current one, and the alias switches once the new one has caught up. Run a rebuild from its own
 *   process (or while this instance's projector is idle): after `reset()`, every `apply` of this instance goes to the
 *   generation being built.
 * - Subtree operations are set-wise over `ancestors` (subtreeStore.ts); history (removed documents, placement and
 *   sizes over time, restore) is kept like the SQLite adapter keeps it (historyStore.ts). An event whose subtree
 *   operations reach more than `stepwiseAbove` documents is too large for one transaction: it is applied in steps
 *   behind a barrier that readers wait for (stepwiseApply.ts).
 * - Each event's writes go out as ordered `bulkWrite`s (one per run of writes to the same collection, flushed before
 *   each read); events are not batched together, since every event's writes derive from the state the previous one
 *   left and its checkpoint must move with them.
 */
export class MongoReadModel implements ReadModel {
  readonly users: MongoUsers;
  readonly groups: MongoGroups;
  readonly tokens: MongoTokens;
  readonly apiKeys: MongoApiKeys;
  readonly collections: MongoCollections;
  readonly folders: MongoFolders;
  readonly items: MongoItems;
  readonly files: MongoFiles;
  readonly subtree: MongoSubtree;
  readonly history: MongoHistory;
  readonly leases: MongoLeases;
  /** Plans read the generation writes go to (a rebuild's, while one is filling), not the one readers use. */
  readonly projectionReads: ProjectionReads;
  private readonly generations: Generations;
  /** The generation this instance's `reset()` is filling, until it becomes current. */
  private building: number | null = null;

  private constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
    readonly transactional: boolean,
    /** Bytes one statement's `$in` lists may take (./boundedIn.ts), from the server's `maxBsonObjectSize`. */
    private readonly inBudget: number,
    private readonly options: MongoReadModelOptions,
  ) {
    this.generations = new Generations(db, options.aliasCacheMs ?? 1000, inBudget, options.barrierWaitMs ?? 10_000);
    const source = this.generations;
    // Each call to a query store sees an event applied in steps whole or not at all (./consistentReads.ts).
    const consistent = <T extends AsyncMethodsOnly<T>>(store: T) => consistentReads(store, this.generations);
    this.users = consistent(new MongoUsers(source));
    this.groups = consistent(new MongoGroups(source));
    this.tokens = consistent(new MongoTokens(source));
    this.apiKeys = consistent(new MongoApiKeys(source));
    this.collections = consistent(new MongoCollections(source));
    this.folders = consistent(new MongoFolders(source));
    this.items = consistent(new MongoItems(source, () => this.generations.readable()));
    this.files = consistent(new MongoFiles(source, () => this.generations.readable()));
    this.subtree = consistent(new MongoSubtree(source));
    this.history = consistent(new MongoHistory(source));
    this.leases = new MongoLeases(db);
    const written: ReadSource = { get: async (name) => (await this.writeGeneration()).get(name), inBudget };
    this.projectionReads = {
      folders: new MongoFolders(written),
      collections: new MongoCollections(written),
      users: new MongoUsers(written),
    };
  }

  /** Opens the read models in `db` (creating the alias and the first generation's indexes on a fresh database). */
  static async open(client: MongoClient, db: Db, options: MongoReadModelOptions = {}): Promise<MongoReadModel> {
    const wanted = options.transactions ?? 'auto';
    const server = await serverFacts(db);
    const transactional = wanted === 'auto' ? server.transactions : wanted;
    const model = new MongoReadModel(client, db, transactional, inListBudget(server.maxBsonObjectSize), options);
    await model.generations.init();
    return model;
  }

  /** The generation writes go to: the one being built by this instance, else the current one (re-read). */
  private async writeGeneration(session?: ClientSession): Promise<GenerationCollections> {
    return this.generations.collections(this.building ?? (await this.generations.current(session)));
  }

  async checkpoint(projection: string): Promise<bigint> {
    return readCheckpoint(await this.writeGeneration(), projection);
  }

  /** What applying an event in steps needs of this read model (./stepwiseApply.ts). */
  private get stepwise(): StepwiseTarget {
    return {
      generations: this.generations,
      leases: this.leases,
      inBudget: this.inBudget,
      documentsPerStep: this.options.documentsPerStep ?? DEFAULT_DOCUMENTS_PER_STEP,
      building: () => this.building,
      inTransaction: (work) => this.withSession(async (session) => work(session as ClientSession)),
    };
  }

  /** Whether an event's writes are too large for one transaction (only transactions have a size to keep to). */
  private async tooLargeForOneTransaction(log: OperationLog): Promise<boolean> {
    if (!this.transactional || log.reaches.length === 0) return false;
    const limit = this.options.stepwiseAbove ?? DEFAULT_STEPWISE_ABOVE;
    return reachesMoreThan(await this.writeGeneration(), log.reaches, limit, this.inBudget);
  }

  async apply(
    projection: string,
    position: bigint,
    write: (tx: ReadModelTx) => void,
    fence?: LeaseFence,
  ): Promise<boolean> {
    const log = new OperationLog();
    write(transactionOf(log));
    if (await this.tooLargeForOneTransaction(log))
      return this.afterApply(await applyInSteps(this.stepwise, projection, position, log, fence));
    // Set inside the (possibly retried) transaction: an object, so the check after it is not narrowed away.
    const outcome = { applied: false, inSteps: false };
    const attempt = async (session?: ClientSession) => {
      outcome.applied = false;
      const { collections, barrier } = await this.writeTarget(session);
      if ((await readCheckpoint(collections, projection, session)) >= position) return;
      // An event applied in steps was interrupted (./stepwiseApply.ts): it is this one, to be resumed in steps.
      outcome.inSteps = barrier;
      if (barrier) return;
      if (fence) await this.leases.checkFence(fence, position, session);
      await runOperations(log.operations, {
        collections,
        session,
        transactional: this.transactional,
        position,
        inBudget: this.inBudget,
      });
      // The checkpoint moves last (outside a transaction: only once every write of the event is in).
      await moveCheckpoint(collections, projection, position, session);
      outcome.applied = true;
    };
    await this.withSession(attempt);
    if (outcome.inSteps) return this.afterApply(await applyInSteps(this.stepwise, projection, position, log, fence));
    return this.afterApply(outcome.applied);
  }

  /** A rebuild switches once its generation has caught up (checked after each event it applied). */
  private async afterApply(applied: boolean): Promise<boolean> {
    if (applied && this.building !== null) await this.switchWhenCaughtUp();
    return applied;
  }

  /**
   * The generation writes go to (the one being built by this instance, else the current one, re-read) and whether a
   * barrier stands on it (an event applied in steps, interrupted).
   */
  private async writeTarget(
    session?: ClientSession,
  ): Promise<{ collections: GenerationCollections; barrier: boolean }> {
    const alias = await this.generations.alias(session);
    const generation = this.building ?? alias.current;
    return { collections: this.generations.collections(generation), barrier: !!barrierOf(alias, generation) };
  }

  /**
   * On a replica set, the whole batch in one transaction: the generation, the checkpoint and the fence read and
   * checked once, every event's writes (bulk writes per event, each stamped with its position), then one checkpoint
   * write, instead of all of that per event. A failure writes nothing of the batch (the projector then applies its
   * events one by one to find the failing one). Without transactions, one event after the other, each with its own
   * checkpoint move (what {@link apply} does), which keeps a crash between two events harmless.
   */
  async applyBatch(projection: string, events: BatchedWrite[], fence?: LeaseFence): Promise<number> {
    const oneByOne = async () => {
      let applied = 0;
      for (const { position, write } of events) if (await this.apply(projection, position, write, fence)) applied++;
      return applied;
    };
    if (!this.transactional || events.length <= 1) return oneByOne();
    const logs = events.map(({ position, write }) => {
      const log = new OperationLog();
      write(transactionOf(log));
      return { position, log };
    });
    // An event too large for one transaction cannot share one (measured on the state before the batch).
    for (const { log } of logs) if (await this.tooLargeForOneTransaction(log)) return oneByOne();
    const outcome = { applied: 0, inSteps: false };
    await this.withSession(async (session) => {
      outcome.applied = 0;
      const { collections, barrier } = await this.writeTarget(session);
      const checkpoint = await readCheckpoint(collections, projection, session);
      const pending = logs.filter((l) => l.position > checkpoint);
      if (pending.length === 0) return;
      // The first pending event was being applied in steps: it resumes alone (apply), and the rest follow it.
      outcome.inSteps = barrier;
      if (barrier) return;
      const last = pending[pending.length - 1].position;
      if (fence) await this.leases.checkFence(fence, last, session);
      for (const { position, log } of pending)
        await runOperations(log.operations, {
          collections,
          session,
          transactional: true,
          position,
          inBudget: this.inBudget,
        });
      await moveCheckpoint(collections, projection, last, session);
      outcome.applied = pending.length;
    });
    if (outcome.inSteps) return oneByOne();
    if (outcome.applied > 0 && this.building !== null) await this.switchWhenCaughtUp();
    return outcome.applied;
  }

  /** Runs `work` in a transaction when the deployment supports them, else directly. */
  private async withSession(work: (session?: ClientSession) => Promise<void>): Promise<void> {
    if (!this.transactional) return work();
    const session = this.client.startSession();
    try {
      await session.withTransaction(() => work(session));
    } finally {
      await session.endSession();
    }
  }

  /**
   * Starts a blue/green rebuild: the following `apply` calls of this instance fill a new, empty generation, while
   * readers keep the current one until the new one has caught up (see generations.ts).
   */
  async reset(): Promise<void> {
    this.building = await this.generations.beginBuild();
    await this.switchWhenCaughtUp();
  }

  /** Makes the generation being built current once every checkpoint of the current one is matched. */
  private async switchWhenCaughtUp(): Promise<void> {
    const building = this.building;
    if (building === null) return;
    const outcome = { switched: false };
    await this.withSession(async (session) => {
      outcome.switched = false;
      const current = this.generations.collections(await this.generations.current(session));
      const next = this.generations.collections(building);
      const options = session ? { session } : {};
      const live = await current.get('checkpoints').find({}, options).toArray();
      for (const checkpoint of live) {
        if ((await readCheckpoint(next, checkpoint._id, session)) < BigInt(checkpoint.position as string)) return;
      }
      outcome.switched = await this.generations.switchTo(building, session);
    });
    if (outcome.switched) {
      this.building = null;
      await this.generations.current();
    }
  }

  /** The database the read models live in (operational state such as notifications lives there too). */
  get database(): Db {
    return this.db;
  }

  /** The name of the database the read models live in. */
  get databaseName(): string {
    return this.db.databaseName;
  }

  /** The generation readers use now. */
  async currentGeneration(): Promise<number> {
    return this.generations.current();
  }

  /** The generation this instance's `reset()` is filling, until it becomes current (null: none). */
  get rebuildGeneration(): number | null {
    return this.building;
  }

  /**
   * For a rebuild that has replayed everything it read: makes the generation being built current if it has caught
   * up (`switched`), or says it has not yet (`waiting`: the live projector got further meanwhile; replay on), or that
   * another rebuild started since and this one's generation was abandoned (`superseded`).
   */
  async completeRebuild(): Promise<'switched' | 'waiting' | 'superseded'> {
    const building = this.building;
    if (building === null) return 'switched';
    if ((await this.generations.alias()).building !== building) {
      this.building = null;
      return 'superseded';
    }
    await this.switchWhenCaughtUp();
    return this.building === null ? 'switched' : 'waiting';
  }

  /**
   * A read model in another, empty database of the same deployment (same client), dropped when it is disposed: where
   * `verify` replays the log without touching the live read models.
   */
  async openScratch(databaseName: string): Promise<MongoReadModel> {
    const db = this.client.db(databaseName);
    return MongoReadModel.open(this.client, db, {
      transactions: this.transactional,
      onDispose: async () => {
        await db.dropDatabase();
      },
    });
  }

  async dump(): Promise<Record<string, unknown[]>> {
    return dumpGeneration(this.generations.collections(await this.generations.current()));
  }

  async dispose(): Promise<void> {
    await this.options.onDispose?.();
  }
}

/** The collection of each kind of row a projection write may be conditional on (`ReadModelTx.ifPresent`). */
const COLLECTION_OF: Record<RowRef['kind'], CollectionName> = {
  folder: 'folders',
  collection: 'collections',
  item: 'items',
  file: 'files',
};

/** A fresh write side recording into `log` (what projections call, synchronously). */
function transactionOf(log: OperationLog): ReadModelTx {
  const tx: ReadModelTx = {
    // Both branches are recorded, each guarded on the one presence check (writes.ts).
    ifPresent: (row, then, orElse) => {
      const check: PresenceCheck = { name: COLLECTION_OF[row.kind], id: row.id };
      log.guarded({ check, present: true }, () => then(tx));
      if (orElse) log.guarded({ check, present: false }, () => orElse(tx));
    },
    users: userWrites(log),
    groups: groupWrites(log),
    tokens: tokenWrites(log),
    apiKeys: apiKeyWrites(log),
    collections: collectionWrites(log),
    folders: folderWrites(log),
    items: itemWrites(log),
    files: fileWrites(log),
    subtree: subtreeWrites(log),
    history: historyWrites(log),
  };
  return tx;
}

/** Folders and items an event may reach and still be applied in one transaction (see `stepwiseAbove`). */
const DEFAULT_STEPWISE_ABOVE = 10_000;
/** One step of an event applied in steps: far inside what one transaction can write, few enough round trips. */
const DEFAULT_DOCUMENTS_PER_STEP = 1000;

/** The server's default document limit, should `hello` not report one. */
const DEFAULT_MAX_BSON_OBJECT_SIZE = 16 * 1024 * 1024;

/**
 * What `hello` says the adapter depends on: whether transactions are possible (a replica-set member or a mongos) and
 * the largest document (and, give or take 16 KiB, statement) the server accepts.
 */
async function serverFacts(db: Db): Promise<{ transactions: boolean; maxBsonObjectSize: number }> {
  const hello = await db.command({ hello: 1 });
  const max: unknown = hello.maxBsonObjectSize;
  return {
    transactions: typeof hello.setName === 'string' || hello.msg === 'isdbgrid',
    maxBsonObjectSize: typeof max === 'number' && max > 0 ? max : DEFAULT_MAX_BSON_OBJECT_SIZE,
  };
}
