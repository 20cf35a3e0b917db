import type { AnyBulkWriteOperation, ClientSession, Document, Filter, FindOptions } from 'mongodb';
import type { CollectionName, GenerationCollections, StoredDoc } from './mongoCollections';
import { checkSplittable, splitIn } from './boundedIn';

/**
 * How projection writes reach MongoDB.
 *
 * Projection handlers call synchronous write methods and never read (src/projections/projection.ts). Here each such
 * call only RECORDS an operation (an async function); `MongoReadModel.apply` then runs the recorded operations in
 * order, and an operation may read what it needs (a parent's ancestry, an item's folder) before it writes.
 *
 * Every write is stamped and guarded, so that an event can be applied again without changing anything, even
 * without a transaction:
 *  - the stamp of an operation is `<position, 20 digits>:<operation index in the event, 6 digits>`, so stamps sort
 *    like (position, index);
 *  - each document stores the stamp of the last operation that wrote it in `_rev`, and every update or replace
 *    filters on `_rev < stamp` (inserts are guarded upserts), so an operation never applies twice to a document;
 *  - an operation writes each document at most once, and writes the document it derived its other writes from (its
 *    "subject", e.g. the moved item) last: when a crash interrupts an event, the replay either finds the subject
 *    written (the operation finished: it is skipped) or re-derives the same writes from unchanged inputs.
 * Deletes need no guard: deleting again deletes nothing.
 *
 * Writes are buffered and sent as ordered `bulkWrite`s (one per run of writes to the same collection); the buffer is
 * flushed before every read and at the end of the event, so an operation always reads the writes of the ones before.
 * An event applied in steps (./stepwiseApply.ts) sends them in fenced transactions of bounded size ({@link Steps}).
 *
 * A write conditional on a row's presence (`ReadModelTx.ifPresent`) records its branches' operations in place, each
 * guarded: it runs only when its guards hold. A guard is read once per run of the event's operations (by the first
 * operation it guards, so after the writes before it), not per operation, and not across runs: a retried transaction,
 * or a replay after an interruption, reads it again. Guards take no operation index, so stamps stay those of the
 * operations alone.
 */

const pad = (value: bigint | number, width: number) => value.toString().padStart(width, '0');

/** The stamp of an event position (what the checkpoint stores). */
export function positionStamp(position: bigint): string {
  return pad(position, 20);
}

function operationStamp(position: bigint, index: number): string {
  return `${positionStamp(position)}:${pad(index, 6)}`;
}

/** What an operation may do: read (after the earlier writes are flushed) and queue guarded writes. */
export interface WriteScope {
  /** The log position of the event being applied. */
  readonly position: bigint;
  /** This operation's stamp. */
  readonly stamp: string;
  /** Whether `doc` was already written by this operation (or a later one): the operation finished before. */
  wroteAlready(doc: Document | null): boolean;
  find(name: CollectionName, filter: Filter<StoredDoc>, options?: FindOptions): Promise<StoredDoc[]>;
  findOne(name: CollectionName, filter: Filter<StoredDoc>, options?: FindOptions): Promise<StoredDoc | null>;
  aggregate(name: CollectionName, pipeline: Document[]): Promise<Document[]>;
  /** Inserts or replaces the whole document (guarded upsert). */
  put(name: CollectionName, doc: StoredDoc): void;
  /** An update (operators or a pipeline) of the matching document(s), guarded per document. */
  update(name: CollectionName, filter: Filter<StoredDoc>, update: Document | Document[], many?: boolean): void;
  /** Adds `delta` to a numeric field of one document (nothing when the delta is 0). */
  increment(name: CollectionName, id: string, field: string, delta: number): void;
  remove(name: CollectionName, filter: Filter<StoredDoc>, many?: boolean): void;
  /** Adds `inc` to the numeric fields of a document, creating it with `set` when missing (guarded upsert). */
  accumulate(name: CollectionName, id: string, set: Record<string, unknown>, inc: Record<string, number>): void;
  /** Whether the row of an `ifPresent` is stored: read once per run, after the writes before it. */
  isPresent(check: PresenceCheck): Promise<boolean>;
}

export type Operation = (scope: WriteScope) => Promise<void>;

/** A row whose presence (`present`) or absence guards the operations recorded in a branch of `ifPresent`. */
export interface Guard {
  readonly check: PresenceCheck;
  readonly present: boolean;
}
/** One `ifPresent` call: the row it reads (the same object for both of its branches). */
export interface PresenceCheck {
  readonly name: CollectionName;
  readonly id: string;
}

/**
 * What an operation over a whole subtree reaches, so that the event's size can be measured before it is applied
 * (./stepwiseApply.ts): folder subtrees (each folder with everything below it), everything under users or
 * collections, or a number of documents named already.
 */
export type Reach = { folders: string[] } | { roots: string[] } | { documents: number };

/** Collects the operations of one event (the synchronous side the projections see). */
export class OperationLog {
  readonly operations: Operation[] = [];
  /** What the event's operations over whole subtrees reach (empty: none does). */
  readonly reaches: Reach[] = [];
  private guards: Guard[] = [];

  /** Records an operation over a whole subtree: one that may write too much for one transaction. */
  recordWide(reach: Reach, operation: Operation): void {
    this.reaches.push(reach);
    this.record(operation);
  }

  record(operation: Operation): void {
    const guards = this.guards;
    this.operations.push(
      guards.length === 0
        ? operation
        : async (scope) => {
            for (const guard of guards) if ((await scope.isPresent(guard.check)) !== guard.present) return;
            await operation(scope);
          },
    );
  }

  /** Records what `branch` records as running only when `guard` (and the guards around this call) hold. */
  guarded(guard: Guard, branch: () => void): void {
    const outer = this.guards;
    this.guards = [...outer, guard];
    try {
      branch();
    } finally {
      this.guards = outer;
    }
  }
}

interface Statement {
  name: CollectionName;
  operation: AnyBulkWriteOperation<StoredDoc>;
  /** A guarded upsert of one document: outside a transaction, its duplicate-key error means "already applied". */
  upsert?: { id: string; stamp: string };
  /**
   * A statement over any number of documents (`updateMany`, `deleteMany`): its filter, and the same statement
   * narrowed to named documents, so that a step can take a bounded part of it.
   */
  many?: { filter: Filter<StoredDoc>; narrowed: (ids: string[]) => AnyBulkWriteOperation<StoredDoc> };
}

/**
 * How the writes of an event applied in steps go out (./stepwiseApply.ts): each step is a small transaction that
 * checks the lease fence before its writes, so that a projector that lost its lease cannot write after the new holder
 * took over.
 */
export interface Steps {
  /** Runs one step's writes in a transaction (which checks the fence first). */
  run(write: (session: ClientSession) => Promise<void>): Promise<void>;
  /** The most documents one step writes. */
  readonly documents: number;
}

const DUPLICATE_KEY = 11000;

function isDuplicateKey(error: unknown): boolean {
  const failure = error as { code?: unknown; writeErrors?: { code?: unknown }[] };
  return failure.code === DUPLICATE_KEY || failure.writeErrors?.[0]?.code === DUPLICATE_KEY;
}

/** Consecutive statements to the same collection, each run one ordered `bulkWrite`. */
function runsOf(statements: Statement[]): Statement[][] {
  const runs: Statement[][] = [];
  for (const statement of statements) {
    const last = runs.at(-1);
    if (last?.[0].name === statement.name) last.push(statement);
    else runs.push([statement]);
  }
  return runs;
}

/** The writes of one event, queued until the next read or the end of the event. */
class WriteBuffer {
  private statements: Statement[] = [];
  constructor(
    private readonly collections: GenerationCollections,
    private readonly session: ClientSession | undefined,
    private readonly transactional: boolean,
    private readonly steps: Steps | undefined,
    private readonly inBudget: number,
  ) {}

  push(statement: Statement): void {
    this.statements.push(statement);
  }

  async flush(): Promise<void> {
    const statements = this.statements;
    this.statements = [];
    if (this.steps) return this.flushInSteps(statements, this.steps);
    for (const run of runsOf(statements)) await this.write(run[0].name, run);
  }

  private async write(name: CollectionName, batch: Statement[]): Promise<void> {
    let rest = batch;
    while (rest.length) {
      try {
        await this.collections.get(name).bulkWrite(
          rest.map((s) => s.operation),
          { ordered: true, ...(this.session ? { session: this.session } : {}) },
        );
        return;
      } catch (error) {
        // Outside a transaction, a replayed guarded upsert of a document already at a later stamp collides with
        // it on `_id`: that statement was applied before, go on after it. Anything else is a real failure.
        const failed = (error as { writeErrors?: { index: number; code: number }[] }).writeErrors?.[0];
        if (this.transactional || failed?.code !== DUPLICATE_KEY || !rest[failed.index]?.upsert) throw error;
        rest = rest.slice(failed.index + 1);
      }
    }
  }

  /**
   * Sends the statements in steps of at most `steps.documents` documents, in order. A statement over any number of
   * documents is first resolved to the ids it matches (read once the statements before it are written) and sent in
   * parts over those ids: under the barrier and the lease no one else writes this generation, so the parts write
   * exactly what the whole statement would have.
   */
  private async flushInSteps(statements: Statement[], steps: Steps): Promise<void> {
    let step: Statement[] = [];
    const send = async () => {
      if (step.length) await this.runStep(step, steps);
      step = [];
    };
    for (const statement of statements) {
      if (!statement.many) {
        if (step.length >= steps.documents) await send();
        step.push(statement);
        continue;
      }
      await send();
      const { filter, narrowed } = statement.many;
      const ids = (
        await this.collections
          .get(statement.name)
          .find(filter, { projection: { _id: 1 } })
          .toArray()
      ).map((doc) => doc._id);
      for (let start = 0; start < ids.length; start += steps.documents) {
        // The part's list of ids is bounded like any other (./boundedIn.ts): a step of many documents may pass it.
        for (const piece of splitIn({ _id: { $in: ids.slice(start, start + steps.documents) } }, this.inBudget))
          step.push({ name: statement.name, operation: narrowed((piece._id as { $in: string[] }).$in) });
        await send();
      }
    }
    await send();
  }

  /**
   * One step: its statements in one transaction. A transaction cannot go on after a duplicate key, so when a guarded
   * upsert meets a document already at its stamp or later (a resumed event: that statement was applied before), the
   * step is sent again without the statements found applied.
   */
  private async runStep(statements: Statement[], steps: Steps): Promise<void> {
    let rest = statements;
    for (;;) {
      try {
        await steps.run(async (session) => {
          for (const run of runsOf(rest))
            await this.collections.get(run[0].name).bulkWrite(
              run.map((s) => s.operation),
              { ordered: true, session },
            );
        });
        return;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        const remaining = await this.withoutApplied(rest);
        if (remaining.length === rest.length) throw error;
        if (remaining.length === 0) return;
        rest = remaining;
      }
    }
  }

  /** `statements` without the guarded upserts whose document is already at their stamp or later. */
  private async withoutApplied(statements: Statement[]): Promise<Statement[]> {
    const applied = new Set<Statement>();
    for (const run of runsOf(statements.filter((s) => s.upsert))) {
      const ids = run.map((s) => (s.upsert as { id: string }).id);
      const revs = new Map<string, unknown>();
      for (const piece of splitIn({ _id: { $in: ids } }, this.inBudget))
        for (const doc of await this.collections
          .get(run[0].name)
          .find(piece, { projection: { _rev: 1 } })
          .toArray())
          revs.set(doc._id, doc._rev);
      for (const s of run) {
        const { id, stamp } = s.upsert as { id: string; stamp: string };
        // The guard `_rev < stamp` does not match such a document, so the upsert collides with it.
        const rev = revs.get(id);
        if (revs.has(id) && !(typeof rev === 'string' && rev < stamp)) applied.add(s);
      }
    }
    return statements.filter((s) => !applied.has(s));
  }
}

class Scope implements WriteScope {
  constructor(
    readonly position: bigint,
    readonly stamp: string,
    private readonly collections: GenerationCollections,
    private readonly buffer: WriteBuffer,
    private readonly session: ClientSession | undefined,
    /** What the guards read in this run of the event's operations. */
    private readonly presence: Map<PresenceCheck, boolean>,
    /** Bytes one statement's `$in` lists may take: larger lists go out in pieces (./boundedIn.ts). */
    private readonly inBudget: number,
  ) {}

  async isPresent(check: PresenceCheck): Promise<boolean> {
    let present = this.presence.get(check);
    if (present === undefined) {
      present = (await this.findOne(check.name, { _id: check.id }, { projection: { _id: 1 } })) !== null;
      this.presence.set(check, present);
    }
    return present;
  }

  private get options() {
    return this.session ? { session: this.session } : {};
  }

  wroteAlready(doc: Document | null): boolean {
    return typeof doc?._rev === 'string' && doc._rev >= this.stamp;
  }

  async find(name: CollectionName, filter: Filter<StoredDoc>, options: FindOptions = {}): Promise<StoredDoc[]> {
    await this.buffer.flush();
    const pieces = splitIn(filter, this.inBudget);
    checkSplittable(pieces.length, options);
    const found: StoredDoc[] = [];
    for (const piece of pieces)
      found.push(
        ...(await this.collections
          .get(name)
          .find(piece, { ...options, ...this.options })
          .toArray()),
      );
    return found;
  }

  async findOne(name: CollectionName, filter: Filter<StoredDoc>, options: FindOptions = {}): Promise<StoredDoc | null> {
    await this.buffer.flush();
    return this.collections.get(name).findOne(filter, { ...options, ...this.options });
  }

  async aggregate(name: CollectionName, pipeline: Document[]): Promise<Document[]> {
    await this.buffer.flush();
    return this.collections.get(name).aggregate(pipeline, this.options).toArray();
  }

  put(name: CollectionName, doc: StoredDoc): void {
    this.buffer.push({
      name,
      upsert: { id: doc._id, stamp: this.stamp },
      operation: {
        replaceOne: {
          filter: { _id: doc._id, _rev: { $lt: this.stamp } },
          replacement: { ...doc, _rev: this.stamp },
          upsert: true,
        },
      },
    });
  }

  update(name: CollectionName, filter: Filter<StoredDoc>, update: Document | Document[], many = false): void {
    const stamped = Array.isArray(update)
      ? [...update, { $set: { _rev: this.stamp } }]
      : { ...update, $set: { ...(update.$set as Document | undefined), _rev: this.stamp } };
    const guard = { _rev: { $lt: this.stamp } };
    for (const piece of many ? splitIn(filter, this.inBudget) : [filter]) {
      const guarded = { ...piece, ...guard };
      this.buffer.push(
        many
          ? {
              name,
              operation: { updateMany: { filter: guarded, update: stamped } },
              many: {
                filter: guarded,
                narrowed: (ids) => ({ updateMany: { filter: { _id: { $in: ids }, ...guard }, update: stamped } }),
              },
            }
          : { name, operation: { updateOne: { filter: guarded, update: stamped } } },
      );
    }
  }

  increment(name: CollectionName, id: string, field: string, delta: number): void {
    if (delta !== 0) this.update(name, { _id: id }, { $inc: { [field]: delta } });
  }

  accumulate(name: CollectionName, id: string, set: Record<string, unknown>, inc: Record<string, number>): void {
    this.buffer.push({
      name,
      upsert: { id, stamp: this.stamp },
      operation: {
        updateOne: {
          filter: { _id: id, _rev: { $lt: this.stamp } },
          update: { $set: { ...set, _rev: this.stamp }, $inc: inc },
          upsert: true,
        },
      },
    });
  }

  remove(name: CollectionName, filter: Filter<StoredDoc>, many = false): void {
    for (const piece of many ? splitIn(filter, this.inBudget) : [filter])
      this.buffer.push(
        many
          ? {
              name,
              operation: { deleteMany: { filter: piece } },
              many: { filter: piece, narrowed: (ids) => ({ deleteMany: { filter: { _id: { $in: ids } } } }) },
            }
          : { name, operation: { deleteOne: { filter: piece } } },
      );
  }
}

/** Runs one event's recorded operations against a generation's collections and flushes their writes. */
export async function runOperations(
  operations: Operation[],
  target: {
    collections: GenerationCollections;
    session?: ClientSession;
    transactional: boolean;
    /** Set when the event is applied in steps: its writes go out in fenced transactions of bounded size. */
    steps?: Steps;
    position: bigint;
    /** Bytes one statement's `$in` lists may take (./boundedIn.ts). */
    inBudget: number;
  },
): Promise<void> {
  const buffer = new WriteBuffer(
    target.collections,
    target.session,
    target.transactional,
    target.steps,
    target.inBudget,
  );
  const presence = new Map<PresenceCheck, boolean>();
  for (const [index, operation] of operations.entries()) {
    const stamp = operationStamp(target.position, index);
    await operation(
      new Scope(target.position, stamp, target.collections, buffer, target.session, presence, target.inBudget),
    );
  }
  await buffer.flush();
}
