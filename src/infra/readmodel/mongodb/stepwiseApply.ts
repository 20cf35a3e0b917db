import type { ClientSession } from 'mongodb';
import type { LeaseFence } from '../../../ports/readModel';
import type { GenerationCollections } from './mongoCollections';
import { barrierOf, type Barrier, type Generations } from './generations';
import type { MongoLeases } from './leasesStore';
import { countIn } from './boundedIn';
import { runOperations, type OperationLog, type Reach, type Steps } from './writes';
import { moveCheckpoint, readCheckpoint } from './checkpoints';

/**
 * Events too large for one MongoDB transaction (issue 32): the copy, move or delete of a subtree of 100,000 folders
 * would pass the server's 60 s transaction lifetime and its cache share, be retried until the driver gives up, and
 * stop the projector on that event at every restart. Such an event is applied in steps behind a barrier:
 *
 *  1. A small transaction raises the barrier on the generation (`rm_meta.alias.applying`, ./generations.ts) with the
 *     event's position, after checking that the checkpoint is before it and the lease fence holds.
 *  2. Readers stop: each query first resolves the generation to read (`Generations.readable`), and while a barrier
 *     stands on it the query waits until it falls, or answers 503 with `Retry-After` after `barrierWaitMs`
 *     (ReadModelBusyError), as writes do when the projector lags. A reader cannot tell which documents an event
 *     reaches without reading them (a copy shows in text search, sizes, counts and history before its root exists),
 *     so every reader waits, for as long as the event takes. Readers hold the alias for up to `aliasCacheMs`; the
 *     first write waits twice that, so that a read that resolved the alias before the barrier rose and ends within
 *     `2 * aliasCacheMs` of that resolution has read nothing of the event. A read that takes longer (a slow query,
 *     a paused process) could have: every call to a query store looks at the alias again after such a read, and
 *     when a barrier rose meanwhile it is read again, after the barrier falls (`Generations.consistent`,
 *     ./consistentReads.ts).
 *  3. The event's operations run on the adapter's path built to be interrupted (./writes.ts): every document is
 *     written on its own, stamped and guarded by the event's position, and each operation writes what it derived its
 *     other writes from last. The writes go out in steps of at most `documentsPerStep` documents, each step a small
 *     transaction that checks the lease fence first (`MongoLeases.checkFence`, a write to the lease document): a
 *     takeover that commits first makes the step fail with FencedOffError, one that comes later waits for the step.
 *     So a projector that lost its lease in the middle of an event (paused, then resumed) writes nothing after the
 *     takeover. A crash, a lost lease or a stopped projector leaves the barrier up; the next projector (this one
 *     restarted, or a standby that took the lease) resumes the same event, meets the barrier of that position and
 *     runs the same operations again: what was written is skipped, the rest is written once.
 *  4. A small transaction moves the checkpoint and lowers the barrier together, after checking the fence again.
 *
 * Why this design, and not the others considered: writing a new generation of the reached documents and switching,
 * or marking written documents pending, needs every query (and every counter) to skip unfinished changes; the
 * barrier needs one check, in the one place every query resolves where to read. Why a transaction per step, when
 * the barrier already hides the steps from readers: only a transaction makes the fence check and the writes after it
 * one unit. What it costs: readers wait while a large event applies (seconds for tens of thousands of documents),
 * each step takes two round trips more than its writes (the fence check and the commit), and events below
 * `stepwiseAbove` keep their single transaction, so only large ones pay the barrier and its pause.
 *
 * Why every reader waits, not only readers of what the event reaches (considered, not built): the barrier could
 * carry the event's roots, and a reader of documents outside them go on. But what an event changes is more than its
 * subtree: the sizes of the destination's and the source's ancestors and of their collection or user, child counts,
 * listings and text search over the destination, history rows, blob references. Each of the stores' queries
 * (filters by text, name prefix, assetstore, blob, position) would need its own proof that its answer cannot include
 * any of those, and a query that got it wrong would show a torn event with nothing to notice it. Nor can a read check
 * afterwards what it saw: the event's writes are stamped (`_rev`), but a deleted document leaves no stamp, and a count
 * or a sum carries none. Writing the event into a new generation of the reached documents only means every query
 * merging two generations. Both are large changes for a pause that large events alone cause, and that a reader can
 * retry after (503 with `Retry-After`).
 */

/** Whether an event's wide operations reach more than `limit` folders and items (measured before it is applied). */
export async function reachesMoreThan(
  collections: GenerationCollections,
  reaches: readonly Reach[],
  limit: number,
  inBudget: number,
): Promise<boolean> {
  let counted = 0;
  for (const reach of reaches) {
    if ('documents' in reach) counted += reach.documents;
    else if ('roots' in reach) {
      const under = { baseParentId: { $in: reach.roots } };
      counted += await collections.get('folders').countDocuments(under, { limit: limit + 1 });
      counted += await collections.get('items').countDocuments(under, { limit: limit + 1 });
    } else {
      const subtree = { $or: [{ _id: { $in: reach.folders } }, { ancestors: { $in: reach.folders } }] };
      // At most limit + 1 folders: past that the answer is known, and the ids fit the item count's statement.
      const folders = await collections
        .get('folders')
        .find(subtree, { projection: { _id: 1 }, limit: limit + 1 })
        .toArray();
      counted += folders.length;
      if (counted <= limit && folders.length > 0)
        counted += await countIn(collections.get('items'), { folderId: { $in: folders.map((f) => f._id) } }, inBudget);
    }
    if (counted > limit) return true;
  }
  return false;
}

/** What applying in steps needs of the read model. */
export interface StepwiseTarget {
  readonly generations: Generations;
  readonly leases: MongoLeases;
  readonly inBudget: number;
  /** The most documents one step (one small transaction) writes. */
  readonly documentsPerStep: number;
  /** The generation this instance's rebuild is filling (null: it writes the current one). */
  building(): number | null;
  /** Runs `work` in a transaction (retried on transient errors). */
  inTransaction(work: (session: ClientSession) => Promise<void>): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Applies one event in steps behind a barrier (see above). Returns false when the checkpoint was already at or past
 * it. Should a rebuild make another generation current between the barrier and the checkpoint, the event is applied
 * again there (the one it was written to is retired; readers never read it again).
 */
export async function applyInSteps(
  target: StepwiseTarget,
  projection: string,
  position: bigint,
  log: OperationLog,
  fence?: LeaseFence,
): Promise<boolean> {
  const barrier: Barrier = { projection, position: position.toString() };
  for (;;) {
    const raised = { collections: null as GenerationCollections | null, readersSee: false };
    await target.inTransaction(async (session) => {
      raised.collections = null;
      const alias = await target.generations.alias(session);
      const collections = target.generations.collections(target.building() ?? alias.current);
      if ((await readCheckpoint(collections, projection, session)) >= position) return;
      if (fence) await target.leases.checkFence(fence, position, session);
      if (!(await target.generations.raiseBarrier(collections.generation, barrier, session))) {
        const standing = barrierOf(alias, collections.generation);
        throw new Error(
          `MongoReadModel: the event at ${standing?.position ?? '?'} is still being applied to generation ${collections.generation}; ${position} cannot begin before it ends.`,
        );
      }
      raised.collections = collections;
      raised.readersSee = collections.generation === alias.current;
    });
    const collections = raised.collections;
    if (!collections) return false;
    if (raised.readersSee) await sleep(2 * target.generations.cacheMs);

    // Each step checks the fence in its own transaction: a projector that lost the lease (paused, then resumed)
    // meets FencedOffError at its next step, and none of its writes commits after the takeover.
    const steps: Steps = {
      documents: target.documentsPerStep,
      run: (write) =>
        target.inTransaction(async (session) => {
          if (fence) await target.leases.checkFence(fence, position, session);
          await write(session);
        }),
    };
    await runOperations(log.operations, {
      collections,
      transactional: false,
      steps,
      position,
      inBudget: target.inBudget,
    });

    const outcome = { moved: false };
    await target.inTransaction(async (session) => {
      const alias = await target.generations.alias(session);
      outcome.moved = (target.building() ?? alias.current) !== collections.generation;
      if (fence) await target.leases.checkFence(fence, position, session);
      if (!outcome.moved) await moveCheckpoint(collections, projection, position, session);
      await target.generations.lowerBarrier(collections.generation, barrier, session);
    });
    if (!outcome.moved) return true;
  }
}
