import { MongoBulkWriteError, MongoServerError, ObjectId } from 'mongodb';
import type { ClientSession, Db, MongoClient } from 'mongodb';
import { Aggregator, Query, find as mingoFind, updateOne as mingoUpdateOne } from 'mingo';
import { parseSearch, textScore, type TextWeights } from './mingoText';

/**
 * A STAND-IN for a MongoDB server behind the official driver's `MongoClient` / `Db` / `Collection` API, for tests on
 * machines where no `mongod` can run. It is not a mock: nothing returns canned answers. Every filter, projection,
 * sort, update document (operators and aggregation pipelines) and aggregation pipeline the code under test sends is
 * executed against in-memory documents by the `mingo` query engine, with MongoDB's write semantics around it
 * (upserts, `_id` immutability, unique indexes, ordered and unordered bulk writes, driver-shaped results and errors).
 *
 * It implements exactly the subset of the driver API that the MongoDB read-model adapter
 * (src/infra/readmodel/mongodb/) and the GridFS blob store (src/infra/blobs/gridfs/, which runs the driver's real
 * `GridFSBucket` over this Db) call:
 *
 *   client: db, startSession, close                 session: withTransaction, inTransaction, endSession
 *   db:     collection, command({hello}), dropCollection, dropDatabase
 *   collection: find (filter, projection, sort, skip, limit; toArray, next, async iteration, close), findOne,
 *     countDocuments, aggregate, insertOne, insertMany, updateOne, updateMany, replaceOne, findOneAndUpdate,
 *     deleteOne, deleteMany, bulkWrite, createIndex, createIndexes, listIndexes, indexes, drop
 *
 * Documented differences from a real server:
 *  - `$text` is approximated by stemmed-token matching (see ./mingoText.ts for exactly how it differs), and is
 *    accepted at the top level of a filter or of a top-level `$and`, and in the first `$match` of a pipeline.
 *  - Transactions are serializable by construction: while one session's transaction runs, every operation of other
 *    sessions (or of none) waits until it commits or aborts; an abort restores the documents from an undo log. A
 *    real server runs them concurrently under snapshot isolation; the observable results are those of some serial
 *    order in both cases. An operation that waits more than `lockWaitMs` fails (it usually means an operation
 *    inside a transaction was sent without its session).
 *  - Indexes are only enforced (unique) or used for `$text`; queries scan. Multikey unique indexes compare the
 *    whole array value, not each element.
 *  - Upserts refuse `$expr` in their filter, as a server does (error 224); other query-feature restrictions of
 *    upserts are not checked.
 *  - Values are stored as the driver's BSON serializer would leave them: `undefined` becomes `null`, a `bigint`
 *    becomes a number, buffers are copied; returned documents are fresh copies.
 *
 * `new MongoStandIn({ transactions: false })` behaves like a standalone `mongod` (no `setName` in `hello`, so the
 * adapter takes its non-transactional path). `failAfterWrites(n)` makes the n+1-th following write statement throw,
 * which is how tests simulate a process dying in the middle of a batch of writes.
 */

type Doc = Record<string, unknown>;
type AnyObject = Record<string, unknown>;
type Filter = Record<string, unknown>;

interface IndexSpec {
  name: string;
  key: Record<string, unknown>;
  unique?: boolean;
  sparse?: boolean;
  weights?: TextWeights;
  partialFilterExpression?: Filter;
  default_language?: string;
}

interface SessionOptions {
  session?: StandInSession;
}

export class StandInCrash extends Error {
  constructor() {
    super('MongoStandIn: simulated crash (failAfterWrites)');
    this.name = 'StandInCrash';
  }
}

const DUPLICATE_KEY = 11000;

function isObjectId(value: unknown): value is ObjectId {
  return (
    value instanceof ObjectId ||
    (typeof value === 'object' && value !== null && (value as { _bsontype?: string })._bsontype === 'ObjectId')
  );
}

function isPlainObject(value: unknown): value is Doc {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A value as the BSON serializer would store it, as a fresh copy. */
function toStored(value: unknown): unknown {
  if (value === undefined) return null;
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return value;
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Date) return new Date(value.getTime());
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return Buffer.from(value);
  if (isObjectId(value)) return value;
  if (Array.isArray(value)) return value.map(toStored);
  if (isPlainObject(value)) {
    const out: Doc = {};
    for (const [k, v] of Object.entries(value)) out[k] = toStored(v);
    return out;
  }
  if (typeof value === 'function') throw new TypeError('MongoStandIn: functions cannot be stored');
  // Other BSON types (Long, Decimal128, …) are immutable value objects: keep them.
  return value;
}

/** A fresh copy of a stored value (returned documents must not alias storage). */
function copy<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return Buffer.from(value) as T;
  if (isObjectId(value)) return value;
  if (Array.isArray(value)) return value.map(copy) as T;
  if (isPlainObject(value)) {
    const out: Doc = {};
    for (const [k, v] of Object.entries(value)) out[k] = copy(v);
    return out as T;
  }
  return value;
}

/** Map key of an `_id` value. */
function idKey(id: unknown): string {
  if (isObjectId(id)) return `oid:${id.toHexString()}`;
  if (typeof id === 'string') return `s:${id}`;
  if (typeof id === 'number') return `n:${id}`;
  if (id instanceof Date) return `d:${id.toISOString()}`;
  return `j:${JSON.stringify(id)}`;
}

function canonical(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (isObjectId(value)) return `oid(${value.toHexString()})`;
  if (value instanceof Date) return `date(${value.toISOString()})`;
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isPlainObject(value))
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

function getPath(doc: Doc, path: string): unknown {
  let value: unknown = doc;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Doc)[part];
  }
  return value;
}

/** The value at a dotted path through own properties only (`__proto__` is a field name, not the prototype). */
function ownPath(doc: Doc, path: string): unknown {
  let value: unknown = doc;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined;
    value = (value as Doc)[part];
  }
  return value;
}

function serverError(code: number, message: string, extra: Doc = {}): MongoServerError {
  return new MongoServerError({ message, errmsg: message, code, ok: 0, ...extra });
}

/** The `$text` clause of a filter (top level or inside a top-level `$and`) and the filter without it. */
function splitText(filter: Filter): { search: string | null; rest: Filter } {
  if (filter.$text !== undefined) {
    const { $text, ...rest } = filter;
    return { search: String(($text as { $search?: string | number }).$search ?? ''), rest };
  }
  if (Array.isArray(filter.$and)) {
    const clauses = filter.$and as Filter[];
    // Clauses are whatever the caller passed: a null one is skipped, as the server would refuse it elsewhere.
    const index = clauses.findIndex((c) => (c as Filter | null)?.$text !== undefined);
    if (index >= 0) {
      const inner = splitText(clauses[index]);
      const others = clauses.filter((_, i) => i !== index);
      const { $and: _and, ...rest } = filter;
      const merged = [...others, ...(Object.keys(inner.rest).length ? [inner.rest] : [])];
      return { search: inner.search, rest: merged.length ? { ...rest, $and: merged } : rest };
    }
  }
  return { search: null, rest: filter };
}

/** Whether a filter uses `$expr` anywhere (a server refuses that in the filter of an upsert). */
function usesExpr(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(usesExpr);
  if (!isPlainObject(value)) return false;
  return Object.entries(value).some(([key, inner]) => key === '$expr' || usesExpr(inner));
}

function refuseExprInUpsert(filter: Filter): void {
  if (usesExpr(filter))
    throw serverError(224, '$expr is not allowed in the query predicate for an upsert', {
      codeName: 'QueryFeatureNotAllowed',
    });
}

/** Equality fields of a filter (what an upsert copies into the new document). */
function equalityFields(filter: Filter): Doc {
  const out: Doc = {};
  for (const [key, value] of Object.entries(filter)) {
    if (key.startsWith('$')) {
      if (key === '$and' && Array.isArray(value))
        for (const clause of value) Object.assign(out, equalityFields(clause as Filter));
      continue;
    }
    if (isPlainObject(value) && Object.keys(value).some((k) => k.startsWith('$'))) {
      if ('$eq' in value) setPath(out, key, value.$eq);
      continue;
    }
    setPath(out, key, value);
  }
  return out;
}

function setPath(doc: Doc, path: string, value: unknown): void {
  const parts = path.split('.');
  let target = doc;
  for (const part of parts.slice(0, -1)) {
    if (!isPlainObject(target[part])) target[part] = {};
    target = target[part] as Doc;
  }
  target[parts[parts.length - 1]] = value;
}

const TEXT_SCORE = '__standInTextScore';

/** Replaces `{ $meta: 'textScore' }` expressions with a reference to the hidden score field. */
function rewriteMeta(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteMeta);
  if (isPlainObject(value)) {
    if (Object.keys(value).length === 1 && value.$meta === 'textScore') return `$${TEXT_SCORE}`;
    const out: Doc = {};
    for (const [k, v] of Object.entries(value)) out[k] = rewriteMeta(v);
    return out;
  }
  return value;
}

function isMetaTextScore(value: unknown): boolean {
  return isPlainObject(value) && value.$meta === 'textScore';
}

/** The undo log of a running transaction: the version of each touched document before the transaction. */
interface Transaction {
  session: StandInSession;
  undo: Map<StandInCollection, Map<string, Doc | undefined>>;
  ended: Promise<void>;
  end: () => void;
}

export class MongoStandIn {
  private readonly dbs = new Map<string, StandInDb>();
  private transaction: Transaction | null = null;
  private writesUntilCrash: number | null = null;
  readonly transactions: boolean;
  readonly lockWaitMs: number;

  constructor(options: { transactions?: boolean; lockWaitMs?: number } = {}) {
    this.transactions = options.transactions ?? true;
    this.lockWaitMs = options.lockWaitMs ?? 10_000;
  }

  db(name = 'test'): StandInDb {
    let db = this.dbs.get(name);
    if (!db) {
      db = new StandInDb(this, name);
      this.dbs.set(name, db);
    }
    return db;
  }

  startSession(): StandInSession {
    return new StandInSession(this);
  }

  async close(): Promise<void> {
    /* nothing to release */
  }

  /** The driver-typed view of this stand-in, for code written against `MongoClient`. */
  asClient(): MongoClient {
    return this as unknown as MongoClient;
  }

  /** The next `n` write statements succeed and the one after throws {@link StandInCrash} (null: never). */
  failAfterWrites(n: number | null): void {
    this.writesUntilCrash = n;
  }

  /** @internal Counts one write statement against the crash budget. */
  countWrite(): void {
    if (this.writesUntilCrash === null) return;
    if (this.writesUntilCrash <= 0) {
      this.writesUntilCrash = null;
      throw new StandInCrash();
    }
    this.writesUntilCrash -= 1;
  }

  /** @internal Waits until no other session's transaction runs; then the caller's synchronous work is atomic. */
  async enter(session: StandInSession | undefined): Promise<void> {
    await Promise.resolve();
    const deadline = Date.now() + this.lockWaitMs;
    while (this.transaction && this.transaction.session !== session) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        throw new Error(
          "MongoStandIn: an operation waited too long for another session's transaction (an operation inside a transaction sent without its session?)",
        );
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.transaction.ended, new Promise((resolve) => (timer = setTimeout(resolve, remaining)))]);
      clearTimeout(timer);
    }
  }

  /** @internal The undo log to record into when `session` runs a transaction. */
  undoFor(session: StandInSession | undefined, collection: StandInCollection): Map<string, Doc | undefined> | null {
    const txn = this.transaction;
    if (!txn || !session || txn.session !== session) return null;
    let log = txn.undo.get(collection);
    if (!log) {
      log = new Map();
      txn.undo.set(collection, log);
    }
    return log;
  }

  /** @internal */
  async begin(session: StandInSession): Promise<void> {
    if (!this.transactions) {
      throw serverError(20, 'Transaction numbers are only allowed on a replica set member or mongos', {
        codeName: 'IllegalOperation',
      });
    }
    await this.enter(undefined);
    while (this.transaction) await this.enter(undefined);
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    this.transaction = { session, undo: new Map(), ended, end };
  }

  /** @internal */
  finish(session: StandInSession, commit: boolean): void {
    const txn = this.transaction;
    if (txn?.session !== session) return;
    if (!commit) {
      for (const [collection, log] of txn.undo) collection.restore(log);
    }
    this.transaction = null;
    txn.end();
  }

  /** @internal */
  inTransaction(session: StandInSession): boolean {
    return this.transaction?.session === session;
  }
}

export class StandInSession {
  private ended = false;
  constructor(private readonly client: MongoStandIn) {}

  inTransaction(): boolean {
    return this.client.inTransaction(this);
  }

  /**
   * Runs `fn` in a transaction and commits it, like the driver's `ClientSession.withTransaction`: an error aborts
   * (restoring every document the transaction touched) and is rethrown, after retrying while it carries the
   * `TransientTransactionError` label. Resolves with `fn`'s result.
   */
  async withTransaction<T>(fn: (session: ClientSession) => Promise<T>): Promise<T> {
    if (this.ended) throw new Error('MongoStandIn: session ended');
    for (let attempt = 0; ; attempt++) {
      await this.client.begin(this);
      try {
        const result = await fn(this as unknown as ClientSession);
        this.client.finish(this, true);
        return result;
      } catch (error) {
        this.client.finish(this, false);
        const transient = (error as { hasErrorLabel?: (l: string) => boolean }).hasErrorLabel?.(
          'TransientTransactionError',
        );
        if (!transient || attempt >= 5) throw error;
      }
    }
  }

  async endSession(): Promise<void> {
    this.ended = true;
    this.client.finish(this, false);
  }
}

export class StandInDb {
  private readonly collections = new Map<string, StandInCollection>();
  /** The GridFS bucket and `resolveOptions` read these from a `Db`; the stand-in has no defaults to offer. */
  readonly readConcern = undefined;
  readonly writeConcern = undefined;
  readonly readPreference = undefined;
  readonly bsonOptions = {};

  constructor(
    readonly client: MongoStandIn,
    readonly databaseName: string,
  ) {}

  collection(name: string): StandInCollection {
    let collection = this.collections.get(name);
    if (!collection) {
      collection = new StandInCollection(this, name);
      this.collections.set(name, collection);
    }
    return collection;
  }

  /** `hello` (with `setName` when transactions are on, like a replica-set member) and `ping`. */
  async command(command: Doc): Promise<Doc> {
    if (command.hello !== undefined || command.isMaster !== undefined || command.ismaster !== undefined) {
      return {
        isWritablePrimary: true,
        maxWireVersion: 21,
        ok: 1,
        maxBsonObjectSize: 16 * 1024 * 1024,
        ...(this.client.transactions ? { setName: 'standin', hosts: ['standin:27017'] } : {}),
      };
    }
    if (command.ping !== undefined) return { ok: 1 };
    throw serverError(59, `MongoStandIn: no such command: '${Object.keys(command)[0]}'`, {
      codeName: 'CommandNotFound',
    });
  }

  async dropCollection(name: string, options: SessionOptions = {}): Promise<boolean> {
    return this.collection(name).drop(options);
  }

  /** Drops every collection of the database (the database then no longer exists, as on a server). */
  async dropDatabase(options: SessionOptions = {}): Promise<boolean> {
    for (const collection of this.collections.values()) if (collection.exists()) await collection.drop(options);
    return true;
  }

  /** Names of the collections that hold documents or indexes. */
  collectionNames(): string[] {
    return [...this.collections.values()].filter((c) => c.exists()).map((c) => c.collectionName);
  }

  /** The driver-typed view of this stand-in, for code written against `Db` (e.g. the driver's GridFSBucket). */
  asDb(): Db {
    return this as unknown as Db;
  }
}

interface FindOptions extends SessionOptions {
  projection?: Doc;
  sort?: Record<string, unknown>;
  skip?: number;
  limit?: number;
}

/** A find cursor: evaluated on the first fetch (a snapshot of the matching documents at that moment). */
export class StandInCursor {
  private results: Doc[] | null = null;
  private position = 0;
  private closed = false;

  constructor(
    private readonly run: (options: FindOptions) => Promise<Doc[]>,
    private options: FindOptions,
  ) {}

  sort(sort: Record<string, unknown>): this {
    this.options = { ...this.options, sort };
    return this;
  }
  skip(skip: number): this {
    this.options = { ...this.options, skip };
    return this;
  }
  limit(limit: number): this {
    this.options = { ...this.options, limit };
    return this;
  }
  project(projection: Doc): this {
    this.options = { ...this.options, projection };
    return this;
  }
  withReadPreference(): this {
    return this;
  }

  private async load(): Promise<Doc[]> {
    this.results ??= await this.run(this.options);
    return this.results;
  }

  async toArray(): Promise<Doc[]> {
    const all = await this.load();
    const rest = all.slice(this.position);
    this.position = all.length;
    return rest;
  }

  async next(): Promise<Doc | null> {
    if (this.closed) return null;
    const all = await this.load();
    return this.position < all.length ? all[this.position++] : null;
  }

  async hasNext(): Promise<boolean> {
    const all = await this.load();
    return this.position < all.length;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Doc> {
    for (;;) {
      const doc = await this.next();
      if (doc === null) return;
      yield doc;
    }
  }
}

type BulkOperation =
  | { insertOne: { document: Doc } }
  | { updateOne: { filter: Filter; update: Doc | Doc[]; upsert?: boolean } }
  | { updateMany: { filter: Filter; update: Doc | Doc[]; upsert?: boolean } }
  | { replaceOne: { filter: Filter; replacement: Doc; upsert?: boolean } }
  | { deleteOne: { filter: Filter } }
  | { deleteMany: { filter: Filter } };

interface WriteTally {
  insertedCount: number;
  matchedCount: number;
  modifiedCount: number;
  deletedCount: number;
  upsertedCount: number;
  upsertedIds: Record<number, unknown>;
  insertedIds: Record<number, unknown>;
}

export class StandInCollection {
  private readonly docs = new Map<string, Doc>();
  private readonly indexList: IndexSpec[] = [];
  /** Unique index name → index key → `_id` key of the document holding it. */
  private readonly uniqueKeys = new Map<string, Map<string, string>>();
  private created = false;

  constructor(
    readonly db: StandInDb,
    readonly collectionName: string,
  ) {}

  get namespace(): string {
    return `${this.db.databaseName}.${this.collectionName}`;
  }

  get dbName(): string {
    return this.db.databaseName;
  }

  private get client(): MongoStandIn {
    return this.db.client;
  }

  /** @internal Whether the collection exists (has been written to or indexed since its last drop). */
  exists(): boolean {
    return this.created || this.docs.size > 0;
  }

  // ---------------------------------------------------------------- storage primitives (synchronous)

  private indexKeyOf(index: IndexSpec, doc: Doc): string | null {
    if (index.partialFilterExpression && !new Query(index.partialFilterExpression).test(doc)) return null;
    const values = Object.keys(index.key).map((field) => getPath(doc, field));
    if (index.sparse && values.every((v) => v === undefined)) return null;
    return values.map(canonical).join('|');
  }

  private checkUnique(doc: Doc, selfKey: string | null): void {
    for (const index of this.indexList) {
      if (!index.unique) continue;
      const key = this.indexKeyOf(index, doc);
      if (key === null) continue;
      const holder = this.uniqueKeys.get(index.name)?.get(key);
      if (holder !== undefined && holder !== selfKey) {
        const dup = Object.fromEntries(Object.keys(index.key).map((field) => [field, getPath(doc, field) ?? null]));
        throw serverError(
          DUPLICATE_KEY,
          `E11000 duplicate key error collection: ${this.namespace} index: ${index.name} dup key: ${JSON.stringify(dup)}`,
          { keyPattern: index.key, keyValue: dup },
        );
      }
    }
  }

  private indexDoc(key: string, doc: Doc | undefined, add: boolean): void {
    if (!doc) return;
    for (const index of this.indexList) {
      if (!index.unique) continue;
      const k = this.indexKeyOf(index, doc);
      if (k === null) continue;
      const map = this.uniqueKeys.get(index.name)!;
      if (add) map.set(k, key);
      else if (map.get(k) === key) map.delete(k);
    }
  }

  /** Stores `doc` under `key` (replacing what is there), keeping unique indexes and the undo log. */
  private put(key: string, doc: Doc, session: StandInSession | undefined): void {
    const previous = this.docs.get(key);
    this.checkUnique(doc, previous ? key : null);
    this.client.countWrite();
    this.remember(key, previous, session);
    this.indexDoc(key, previous, false);
    this.docs.set(key, doc);
    this.indexDoc(key, doc, true);
    this.created = true;
  }

  private remove(key: string, session: StandInSession | undefined): void {
    const previous = this.docs.get(key);
    if (!previous) return;
    this.client.countWrite();
    this.remember(key, previous, session);
    this.indexDoc(key, previous, false);
    this.docs.delete(key);
  }

  private remember(key: string, previous: Doc | undefined, session: StandInSession | undefined): void {
    const log = this.client.undoFor(session, this);
    if (log && !log.has(key)) log.set(key, previous);
  }

  /** @internal Puts back the versions recorded in an undo log (a transaction aborted). */
  restore(log: Map<string, Doc | undefined>): void {
    for (const [key, previous] of log) {
      this.indexDoc(key, this.docs.get(key), false);
      if (previous) {
        this.docs.set(key, previous);
        this.indexDoc(key, previous, true);
      } else this.docs.delete(key);
    }
  }

  // ---------------------------------------------------------------- matching

  private textIndex(): IndexSpec | undefined {
    return this.indexList.find((i) => i.weights !== undefined);
  }

  /** Documents matching `filter` (stored objects, not copies), with their text scores when it holds `$text`. */
  private matching(filter: Filter = {}): { docs: Doc[]; scores: Map<Doc, number> | null } {
    const { search, rest } = splitText(filter);
    const query = new Query(rest);
    let candidates: Iterable<Doc>;
    const id = rest._id;
    if (id !== undefined && (typeof id === 'string' || typeof id === 'number' || isObjectId(id))) {
      const doc = this.docs.get(idKey(id));
      candidates = doc ? [doc] : [];
    } else if (isPlainObject(id) && Object.keys(id).length === 1 && '$eq' in id) {
      const doc = this.docs.get(idKey(id.$eq));
      candidates = doc ? [doc] : [];
    } else {
      candidates = this.docs.values();
    }
    if (search === null) return { docs: [...candidates].filter((d) => query.test(d)), scores: null };
    const index = this.textIndex();
    if (!index) throw serverError(27, 'text index required for $text query', { codeName: 'IndexNotFound' });
    const parsed = parseSearch(search);
    const scores = new Map<Doc, number>();
    const docs: Doc[] = [];
    for (const doc of candidates) {
      const score = textScore(doc, index.weights!, parsed);
      if (score === null || !query.test(doc)) continue;
      scores.set(doc, score);
      docs.push(doc);
    }
    return { docs, scores };
  }

  private findNow(filter: Filter, options: FindOptions): Doc[] {
    const { docs, scores } = this.matching(filter);
    const projection: Doc = {};
    const metaFields: string[] = [];
    for (const [field, spec] of Object.entries(options.projection ?? {})) {
      if (isMetaTextScore(spec)) metaFields.push(field);
      else projection[field] = spec;
    }
    if ((metaFields.length || Object.values(options.sort ?? {}).some(isMetaTextScore)) && !scores) {
      throw serverError(2, 'query requires text score metadata, but it is not available', { codeName: 'BadValue' });
    }
    // Sort (possibly on the text score), skip and limit on the stored documents, then project copies.
    let rows = docs;
    const sort = options.sort ?? {};
    const sortKeys = Object.entries(sort);
    if (sortKeys.length) {
      const plain: Record<string, 1 | -1> = {};
      for (const [field, dir] of sortKeys) if (!isMetaTextScore(dir)) plain[field] = dir === -1 ? -1 : 1;
      // mingo refuses a path through `__proto__`, an ordinary field name to MongoDB: such a field's value (own
      // properties only) is sorted on under a name of the stand-in's own.
      const renamed = new Map<string, string>();
      for (const [field] of sortKeys)
        if (field.split('.').includes('__proto__')) renamed.set(field, `__standInSort${renamed.size}`);
      const scored = rows.map((doc) => {
        const row: Doc = { ...doc, [TEXT_SCORE]: scores?.get(doc) ?? 0, __standInRef: doc };
        for (const [field, name] of renamed) row[name] = ownPath(doc, field);
        return row;
      });
      const spec: Record<string, 1 | -1> = {};
      for (const [field, dir] of sortKeys)
        spec[isMetaTextScore(dir) ? TEXT_SCORE : (renamed.get(field) ?? field)] = isMetaTextScore(dir)
          ? -1
          : plain[field];
      rows = (mingoFind(scored, {}).sort(spec).all() as Doc[]).map((d) => d.__standInRef as Doc);
    }
    const skip = Math.max(0, options.skip ?? 0);
    const limit = options.limit && options.limit > 0 ? options.limit : undefined;
    rows = rows.slice(skip, limit === undefined ? undefined : skip + limit);
    const projected = Object.keys(projection).length
      ? (mingoFind(rows.map(copy), {}, projection).all() as Doc[])
      : rows.map(copy);
    if (metaFields.length) {
      projected.forEach((doc, i) => {
        for (const field of metaFields) doc[field] = scores!.get(rows[i]) ?? 0;
      });
    }
    return projected;
  }

  // ---------------------------------------------------------------- reads

  find(filter: Filter = {}, options: FindOptions = {}): StandInCursor {
    return new StandInCursor(async (opts) => {
      await this.client.enter(opts.session);
      return this.findNow(filter, opts);
    }, options);
  }

  async findOne(filter: Filter = {}, options: FindOptions = {}): Promise<Doc | null> {
    await this.client.enter(options.session);
    return this.findNow(filter, { ...options, limit: 1 })[0] ?? null;
  }

  async countDocuments(
    filter: Filter = {},
    options: SessionOptions & { skip?: number; limit?: number } = {},
  ): Promise<number> {
    await this.client.enter(options.session);
    const n = this.matching(filter).docs.length - Math.max(0, options.skip ?? 0);
    return Math.max(0, options.limit && options.limit > 0 ? Math.min(n, options.limit) : n);
  }

  /**
   * An aggregation pipeline run by mingo. A `$text` match must be the first stage (as on the server); its score is
   * available to later stages as `{ $meta: 'textScore' }`. `$lookup` resolves other collections of the same db.
   */
  aggregate(pipeline: Doc[], options: SessionOptions = {}): StandInCursor {
    return new StandInCursor(async () => {
      await this.client.enter(options.session);
      let input: Doc[];
      let stages = pipeline;
      const first = pipeline[0] as { $match?: Filter } | undefined;
      if (first?.$match) {
        const { docs, scores } = this.matching(first.$match);
        input = docs.map((doc) => (scores ? { ...copy(doc), [TEXT_SCORE]: scores.get(doc) } : copy(doc)));
        stages = pipeline.slice(1);
      } else {
        input = [...this.docs.values()].map(copy);
      }
      const aggregator = new Aggregator(rewriteMeta(stages) as AnyObject[], {
        collectionResolver: (name: string) => [...(this.db.collection(name).docs.values() as Iterable<Doc>)].map(copy),
      });
      const out = aggregator.run<Doc>(input as AnyObject[]);
      for (const doc of out) delete doc[TEXT_SCORE];
      return out;
    }, {});
  }

  async listIndexesNow(): Promise<Doc[]> {
    if (!this.exists())
      throw serverError(26, `ns does not exist: ${this.namespace}`, { codeName: 'NamespaceNotFound' });
    return [
      { v: 2, key: { _id: 1 }, name: '_id_' },
      ...this.indexList.map((i) => ({ v: 2, ...(copy(i) as unknown as Doc) })),
    ];
  }

  listIndexes(): StandInCursor {
    return new StandInCursor(() => this.listIndexesNow(), {});
  }

  async indexes(): Promise<Doc[]> {
    return this.listIndexesNow();
  }

  // ---------------------------------------------------------------- single writes

  private prepareInsert(document: Doc): Doc {
    if (document._id === undefined) document._id = new ObjectId(); // the driver adds the id to the caller's object
    if (Array.isArray(document._id)) throw serverError(2, "can't use an array for _id", { codeName: 'BadValue' });
    return toStored(document) as Doc;
  }

  private insertNow(document: Doc, session: StandInSession | undefined): unknown {
    const doc = this.prepareInsert(document);
    const key = idKey(doc._id);
    if (this.docs.has(key)) {
      throw serverError(
        DUPLICATE_KEY,
        `E11000 duplicate key error collection: ${this.namespace} index: _id_ dup key: { _id: ${JSON.stringify(doc._id)} }`,
        { keyPattern: { _id: 1 }, keyValue: { _id: doc._id } },
      );
    }
    this.put(key, doc, session);
    return doc._id;
  }

  /** Applies an update document (operators, or a pipeline) to a copy of `doc`; `insert` marks an upsert's insert. */
  private applyUpdate(doc: Doc, update: Doc | Doc[], insert: boolean): Doc {
    let target = copy(doc);
    if (Array.isArray(update)) {
      const box = [target];
      mingoUpdateOne(box, {}, update as never);
      target = box[0];
    } else {
      const { $setOnInsert, ...rest } = update;
      const keys = Object.keys(rest);
      if (keys.some((k) => !k.startsWith('$')))
        throw serverError(9, 'Update document requires atomic operators', { codeName: 'FailedToParse' });
      if (keys.length) {
        const box = [target];
        mingoUpdateOne(box, {}, toStored(rest) as never);
        target = box[0];
      }
      if (insert && $setOnInsert)
        for (const [path, value] of Object.entries($setOnInsert as Doc)) setPath(target, path, toStored(value));
    }
    if (!insert && canonical(target._id) !== canonical(doc._id)) {
      throw serverError(66, "Performing an update on the path '_id' would modify the immutable field '_id'", {
        codeName: 'ImmutableField',
      });
    }
    return toStored(target) as Doc;
  }

  private updateNow(
    filter: Filter,
    update: Doc | Doc[],
    options: { upsert?: boolean; many: boolean },
    session: StandInSession | undefined,
  ) {
    if (options.upsert) refuseExprInUpsert(filter);
    const { docs } = this.matching(filter);
    const targets = options.many ? docs : docs.slice(0, 1);
    let modifiedCount = 0;
    for (const doc of targets) {
      const next = this.applyUpdate(doc, update, false);
      if (canonical(next) === canonical(doc)) continue;
      this.put(idKey(doc._id), next, session);
      modifiedCount++;
    }
    if (targets.length === 0 && options.upsert) {
      const seed = toStored(equalityFields(filter)) as Doc;
      const doc = this.applyUpdate(seed, update, true);
      if (doc._id === undefined) doc._id = new ObjectId();
      this.insertNow(doc, session);
      return { matchedCount: 0, modifiedCount: 0, upsertedCount: 1, upsertedId: doc._id };
    }
    return { matchedCount: targets.length, modifiedCount, upsertedCount: 0, upsertedId: null };
  }

  private replaceNow(
    filter: Filter,
    replacement: Doc,
    upsert: boolean | undefined,
    session: StandInSession | undefined,
  ) {
    if (upsert) refuseExprInUpsert(filter);
    if (Object.keys(replacement).some((k) => k.startsWith('$')))
      throw serverError(2, 'Replacement document must not contain atomic operators', { codeName: 'BadValue' });
    const doc = this.matching(filter).docs.at(0);
    if (doc) {
      const next = toStored({ ...replacement, _id: doc._id }) as Doc;
      if (replacement._id !== undefined && canonical(replacement._id) !== canonical(doc._id)) {
        throw serverError(66, "After applying the update, the (immutable) field '_id' was found to have been altered", {
          codeName: 'ImmutableField',
        });
      }
      const modified = canonical(next) !== canonical(doc);
      if (modified) this.put(idKey(doc._id), next, session);
      return { matchedCount: 1, modifiedCount: modified ? 1 : 0, upsertedCount: 0, upsertedId: null };
    }
    if (!upsert) return { matchedCount: 0, modifiedCount: 0, upsertedCount: 0, upsertedId: null };
    const seed = equalityFields(filter);
    const inserted = {
      ...replacement,
      ...(seed._id !== undefined && replacement._id === undefined ? { _id: seed._id } : {}),
    };
    const id = this.insertNow(inserted, session);
    return { matchedCount: 0, modifiedCount: 0, upsertedCount: 1, upsertedId: id };
  }

  private deleteNow(filter: Filter, many: boolean, session: StandInSession | undefined): number {
    const { docs } = this.matching(filter);
    const targets = many ? docs : docs.slice(0, 1);
    for (const doc of targets) this.remove(idKey(doc._id), session);
    return targets.length;
  }

  async insertOne(document: Doc, options: SessionOptions = {}) {
    await this.client.enter(options.session);
    return { acknowledged: true, insertedId: this.insertNow(document, options.session) };
  }

  async insertMany(documents: Doc[], options: SessionOptions & { ordered?: boolean } = {}) {
    const result = await this.bulkWrite(
      documents.map((document) => ({ insertOne: { document } })),
      options,
    );
    return { acknowledged: true, insertedCount: result.insertedCount, insertedIds: result.insertedIds };
  }

  async updateOne(filter: Filter, update: Doc | Doc[], options: SessionOptions & { upsert?: boolean } = {}) {
    await this.client.enter(options.session);
    return {
      acknowledged: true,
      ...this.updateNow(filter, update, { upsert: options.upsert, many: false }, options.session),
    };
  }

  async updateMany(filter: Filter, update: Doc | Doc[], options: SessionOptions & { upsert?: boolean } = {}) {
    await this.client.enter(options.session);
    return {
      acknowledged: true,
      ...this.updateNow(filter, update, { upsert: options.upsert, many: true }, options.session),
    };
  }

  async replaceOne(filter: Filter, replacement: Doc, options: SessionOptions & { upsert?: boolean } = {}) {
    await this.client.enter(options.session);
    return { acknowledged: true, ...this.replaceNow(filter, replacement, options.upsert, options.session) };
  }

  /** Driver ≥ 6 semantics: resolves with the document (before or after, per `returnDocument`), or null. */
  async findOneAndUpdate(
    filter: Filter,
    update: Doc | Doc[],
    options: SessionOptions & { upsert?: boolean; returnDocument?: 'before' | 'after'; projection?: Doc } = {},
  ): Promise<Doc | null> {
    await this.client.enter(options.session);
    const before = this.matching(filter).docs.at(0);
    const result = this.updateNow(filter, update, { upsert: options.upsert, many: false }, options.session);
    if (options.returnDocument !== 'after') return before ? copy(before) : null;
    const id = before ? before._id : result.upsertedId;
    return id === null || id === undefined ? null : copy(this.docs.get(idKey(id)) ?? null);
  }

  async deleteOne(filter: Filter, options: SessionOptions = {}) {
    await this.client.enter(options.session);
    return { acknowledged: true, deletedCount: this.deleteNow(filter, false, options.session) };
  }

  async deleteMany(filter: Filter = {}, options: SessionOptions = {}) {
    await this.client.enter(options.session);
    return { acknowledged: true, deletedCount: this.deleteNow(filter, true, options.session) };
  }

  /**
   * Ordered (default) bulk writes stop at the first failing statement, unordered ones carry on; either way the
   * statements before a failure stay applied (outside a transaction) and the error is a `MongoBulkWriteError` with
   * `writeErrors[].index` and the partial `result`, as the driver reports it.
   */
  async bulkWrite(operations: BulkOperation[], options: SessionOptions & { ordered?: boolean } = {}) {
    await this.client.enter(options.session);
    const session = options.session;
    const ordered = options.ordered ?? true;
    const tally: WriteTally = {
      insertedCount: 0,
      matchedCount: 0,
      modifiedCount: 0,
      deletedCount: 0,
      upsertedCount: 0,
      upsertedIds: {},
      insertedIds: {},
    };
    const writeErrors: { index: number; code: number; errmsg: string; errInfo?: unknown }[] = [];
    for (const [index, operation] of operations.entries()) {
      try {
        if ('insertOne' in operation) {
          tally.insertedIds[index] = this.insertNow(operation.insertOne.document, session);
          tally.insertedCount++;
        } else if ('updateOne' in operation || 'updateMany' in operation) {
          const many = 'updateMany' in operation;
          const spec = many ? operation.updateMany : operation.updateOne;
          const r = this.updateNow(spec.filter, spec.update, { upsert: spec.upsert, many }, session);
          this.count(tally, index, r);
        } else if ('replaceOne' in operation) {
          const spec = operation.replaceOne;
          this.count(tally, index, this.replaceNow(spec.filter, spec.replacement, spec.upsert, session));
        } else if ('deleteOne' in operation) {
          tally.deletedCount += this.deleteNow(operation.deleteOne.filter, false, session);
        } else if ('deleteMany' in operation) {
          tally.deletedCount += this.deleteNow(operation.deleteMany.filter, true, session);
        } else {
          throw serverError(2, `MongoStandIn: unsupported bulk operation ${Object.keys(operation)[0]}`);
        }
      } catch (error) {
        if (!(error instanceof MongoServerError)) throw error;
        writeErrors.push({ index, code: Number(error.code), errmsg: error.message });
        if (ordered) break;
      }
    }
    const result = {
      ...tally,
      ok: 1,
      isOk: () => true,
      hasWriteErrors: () => writeErrors.length > 0,
      getWriteErrors: () => writeErrors,
    };
    if (writeErrors.length) {
      const first = writeErrors[0];
      throw new MongoBulkWriteError({ message: first.errmsg, code: first.code, writeErrors } as never, result as never);
    }
    return result;
  }

  private count(
    tally: WriteTally,
    index: number,
    r: { matchedCount: number; modifiedCount: number; upsertedCount: number; upsertedId: unknown },
  ) {
    tally.matchedCount += r.matchedCount;
    tally.modifiedCount += r.modifiedCount;
    if (r.upsertedCount) {
      tally.upsertedCount += 1;
      tally.upsertedIds[index] = r.upsertedId;
    }
  }

  // ---------------------------------------------------------------- indexes and lifecycle

  async createIndex(key: Record<string, unknown>, options: Partial<IndexSpec> & Doc = {}): Promise<string> {
    await this.client.enter(undefined);
    return this.createIndexNow({ ...options, key });
  }

  async createIndexes(specs: (Partial<IndexSpec> & { key: Record<string, unknown> })[]): Promise<string[]> {
    await this.client.enter(undefined);
    return specs.map((spec) => this.createIndexNow(spec));
  }

  private createIndexNow(spec: Partial<IndexSpec> & { key: Record<string, unknown> }): string {
    const textFields = Object.entries(spec.key)
      .filter(([, kind]) => kind === 'text')
      .map(([field]) => field);
    const name =
      spec.name ??
      Object.entries(spec.key)
        .map(([field, kind]) => `${field}_${String(kind)}`)
        .join('_');
    const index: IndexSpec = {
      name,
      key: textFields.length ? { _fts: 'text', _ftsx: 1 } : { ...spec.key },
      ...(spec.unique ? { unique: true } : {}),
      ...(spec.sparse ? { sparse: true } : {}),
      ...(spec.partialFilterExpression ? { partialFilterExpression: spec.partialFilterExpression } : {}),
      ...(textFields.length
        ? {
            weights: Object.fromEntries(textFields.map((f) => [f, spec.weights?.[f] ?? 1])),
            default_language: spec.default_language ?? 'english',
          }
        : {}),
    };
    const existing = this.indexList.find((i) => i.name === name);
    if (existing) {
      if (canonical(existing) !== canonical(index)) {
        throw serverError(86, `An existing index has the same name as the requested index: ${name}`, {
          codeName: 'IndexKeySpecsConflict',
        });
      }
      return name;
    }
    if (index.weights && this.textIndex()) {
      throw serverError(
        85,
        `An equivalent index already exists with a different name and options (only one text index per collection)`,
        {
          codeName: 'IndexOptionsConflict',
        },
      );
    }
    if (index.unique) {
      const keys = new Map<string, string>();
      for (const [key, doc] of this.docs) {
        const k = this.indexKeyOf(index, doc);
        if (k === null) continue;
        if (keys.has(k))
          throw serverError(DUPLICATE_KEY, `E11000 duplicate key error collection: ${this.namespace} index: ${name}`);
        keys.set(k, key);
      }
      this.uniqueKeys.set(name, keys);
    }
    this.indexList.push(index);
    this.created = true;
    return name;
  }

  async drop(options: SessionOptions = {}): Promise<boolean> {
    await this.client.enter(options.session);
    const existed = this.exists();
    this.docs.clear();
    this.indexList.length = 0;
    this.uniqueKeys.clear();
    this.created = false;
    return existed;
  }

  /** Number of stored documents (for tests of the stand-in itself). */
  get size(): number {
    return this.docs.size;
  }
}
