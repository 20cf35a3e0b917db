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
  /** A guarded upsert: outside a transaction, its duplicate-key error means "already applied". */
  guardedUpsert: boolean;
}

const DUPLICATE_KEY = 11000;

/** The writes of one event, queued until the next read or the end of the event. */
class WriteBuffer {
  private statements: Statement[] = [];
  constructor(
    private readonly collections: GenerationCollections,
    private readonly session: ClientSession | undefined,
    private readonly transactional: boolean,
  ) {}

  push(statement: Statement): void {
    this.statements.push(statement);
  }

  async flush(): Promise<void> {
    while (this.statements.length) {
      const name = this.statements[0].name;
      let run = 0;
      while (run < this.statements.length && this.statements[run].name === name) run++;
      const batch = this.statements.slice(0, run);
      this.statements = this.statements.slice(run);
      await this.write(name, batch);
    }
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
        if (this.transactional || failed?.code !== DUPLICATE_KEY || !rest[failed.index]?.guardedUpsert) throw error;
        rest = rest.slice(failed.index + 1);
      }
    }
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
      guardedUpsert: true,
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
    for (const piece of many ? splitIn(filter, this.inBudget) : [filter]) {
      const guarded = { ...piece, _rev: { $lt: this.stamp } };
      this.buffer.push({
        name,
        guardedUpsert: false,
        operation: many
          ? { updateMany: { filter: guarded, update: stamped } }
          : { updateOne: { filter: guarded, update: stamped } },
      });
    }
  }

  increment(name: CollectionName, id: string, field: string, delta: number): void {
    if (delta !== 0) this.update(name, { _id: id }, { $inc: { [field]: delta } });
  }

  accumulate(name: CollectionName, id: string, set: Record<string, unknown>, inc: Record<string, number>): void {
    this.buffer.push({
      name,
      guardedUpsert: true,
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
      this.buffer.push({
        name,
        guardedUpsert: false,
        operation: many ? { deleteMany: { filter: piece } } : { deleteOne: { filter: piece } },
      });
  }
}

/** Runs one event's recorded operations against a generation's collections and flushes their writes. */
export async function runOperations(
  operations: Operation[],
  target: {
    collections: GenerationCollections;
    session?: ClientSession;
    transactional: boolean;
    position: bigint;
    /** Bytes one statement's `$in` lists may take (./boundedIn.ts). */
    inBudget: number;
  },
): Promise<void> {
  const buffer = new WriteBuffer(target.collections, target.session, target.transactional);
  const presence = new Map<PresenceCheck, boolean>();
  for (const [index, operation] of operations.entries()) {
    const stamp = operationStamp(target.position, index);
    await operation(
      new Scope(target.position, stamp, target.collections, buffer, target.session, presence, target.inBudget),
    );
  }
  await buffer.flush();
}
