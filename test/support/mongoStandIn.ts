import { MongoBulkWriteError, MongoServerError, ObjectId } from 'mongodb';
import { calculateObjectSize } from 'bson';
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
 *  - Transactions run concurrently under snapshot isolation, as on a replica set: a transaction reads the documents
 *    as they were when it started (plus its own writes), and writing a document that another transaction has
 *    written and not yet committed, or that was committed after this transaction started, fails at once with
 *    WriteConflict (112, label TransientTransactionError) and aborts the transaction. A write outside a transaction
 *    to a document an open transaction has written waits until that transaction ends (at most `lockWaitMs`: longer
 *    usually means an operation inside a transaction was sent without its session). A transaction open for longer
 *    than `transactionLifetimeMs` (the server's transactionLifetimeLimitSeconds, 60 s) is aborted by the "server":
 *    its next operation or commit fails with NoSuchTransaction (251, TransientTransactionError). `withTransaction`
 *    retries on that label with the driver's backoff until `withTransactionTimeoutMs` (the driver's 120 s) has
 *    passed. `unknownCommitResults(n, {committed})` makes the next n commits fail with the label
 *    UnknownTransactionCommitResult (as the driver labels a commit whose answer was lost: a network error, a
 *    primary stepping down, a write concern timeout), after committing (`committed: true`: the answer was lost) or
 *    before; `withTransaction` then retries the commit alone, not the callback, as the driver does (transactions
 *    spec, step 10.1), and a repeated commit of a committed transaction succeeds, as on the server.
 *  - Documents, result documents and statements are held to the server's 16 MiB BSON limit (sizes from the `bson`
 *    library the driver serializes with; `maxBsonObjectSize` lowers it, and `hello` reports it, as a server does); update operators fail on the types the server refuses ($inc/$mul on a
 *    non-number: 14 TypeMismatch; $push/$addToSet/$pull on a non-array: 2 BadValue), with the server's messages.
 *  - Strings sort (find's `sort`, a pipeline's top-level `$sort`) by UTF-8 bytes, i.e. by code point, as the server
 *    compares them without a collation; range filters (`$gt`, `$lt` on strings) still compare UTF-16 units (mingo).
 *  - `latencyMs` delays every round trip (each operation, each commit) by that much, as a network would.
 *  - `maxTransactionWrites` bounds the documents one transaction may write (TransactionTooLargeForCache, 334, not
 *    transient): the server's bound is its cache share and the 60 s lifetime, both met by a transaction that writes
 *    enough; statements outside a transaction are not bounded (each document is its own write there, as on a server).
 *  - Indexes are only enforced (unique) or used for `$text`; queries scan. Multikey unique indexes compare the
 *    whole array value, not each element.
 *  - Upserts refuse `$expr` in their filter, as a server does (error 224); other query-feature restrictions of
 *    upserts are not checked.
 *  - Values are stored as the driver's BSON serializer would leave them: `undefined` becomes `null`, a `bigint`
 *    becomes a number, buffers are copied; returned documents are fresh copies.
 *
 * `new MongoStandIn({ transactions: false })` behaves like a standalone `mongod` (no `setName` in `hello`, so the
 * adapter takes its non-transactional path). `failAfterWrites(n)` makes the n+1-th following write statement throw,
 * which is how tests simulate a process dying in the middle of a batch of writes; `pauseAfterWrites(n)` holds the
 * round trip after the next n document writes until the test resumes it (a process paused, not dead).
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

/** Documents by `_id` key, as some transaction (or none) sees them. */
interface DocView {
  get(key: string): Doc | undefined;
  has(key: string): boolean;
  values(): Iterable<Doc>;
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

/** The value at a dotted path: own fields only (a stored document has no `constructor` or `toString` field). */
function getPath(doc: Doc, path: string): unknown {
  let value: unknown = doc;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, part))
      return undefined;
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

/** The server's name of a value's BSON type (as the driver would serialize it). */
function bsonTypeName(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) && Math.abs(value) < 2 ** 31 ? 'int' : 'double';
  if (typeof value === 'bigint') return 'long';
  if (value instanceof Date) return 'date';
  if (isObjectId(value)) return 'objectId';
  if (Array.isArray(value)) return 'array';
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return 'binData';
  const bsontype = (value as { _bsontype?: string })._bsontype;
  if (bsontype) return bsontype.charAt(0).toLowerCase() + bsontype.slice(1);
  return 'object';
}

function isNumeric(value: unknown): boolean {
  return ['int', 'int32', 'double', 'long', 'decimal128'].includes(bsonTypeName(value));
}

/** How the server prints a document's `_id` in its error messages. */
function idText(doc: Doc): string {
  return `{_id: ${isObjectId(doc._id) ? `ObjectId('${doc._id.toHexString()}')` : JSON.stringify(doc._id)}}`;
}

/**
 * The server's type errors for update operators, which mingo would ignore or apply anyway: arithmetic on a
 * non-number, array operators on a non-array.
 */
function checkOperandTypes(doc: Doc, update: Doc): void {
  for (const [operator, fields] of Object.entries(update)) {
    if (!isPlainObject(fields)) continue;
    for (const [path, argument] of Object.entries(fields)) {
      const current = getPath(doc, path);
      const field = path.split('.').pop()!;
      if (operator === '$inc' || operator === '$mul') {
        const verb = operator === '$inc' ? 'increment' : 'multiply';
        if (!isNumeric(argument))
          throw serverError(14, `Cannot ${verb} with non-numeric argument: {${path}: ${JSON.stringify(argument)}}`, {
            codeName: 'TypeMismatch',
          });
        if (current !== undefined && !isNumeric(current))
          throw serverError(
            14,
            `Cannot apply ${operator} to a value of non-numeric type. ${idText(doc)} has the field '${field}' of non-numeric type ${bsonTypeName(current)}`,
            { codeName: 'TypeMismatch' },
          );
      } else if (operator === '$push' && current !== undefined && !Array.isArray(current)) {
        throw serverError(
          2,
          `The field '${path}' must be an array but is of type ${bsonTypeName(current)} in document ${idText(doc)}`,
          { codeName: 'BadValue' },
        );
      } else if (operator === '$addToSet' && current !== undefined && !Array.isArray(current)) {
        throw serverError(
          2,
          `Cannot apply $addToSet to non-array field. Field named '${field}' has non-array type ${bsonTypeName(current)}`,
          { codeName: 'BadValue' },
        );
      } else if (
        (operator === '$pull' || operator === '$pullAll') &&
        current !== undefined &&
        !Array.isArray(current)
      ) {
        throw serverError(2, 'Cannot apply $pull to a non-array value', { codeName: 'BadValue' });
      }
    }
  }
}

const TEXT_SCORE = '__standInTextScore';

/**
 * Strings in the server's order: by UTF-8 bytes, which is code point order. UTF-16 units agree except that surrogates
 * (U+D800–U+DFFF, the halves of characters above U+FFFF) sort below U+E000–U+FFFF there and above them here.
 */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const rank = (c: number) => (c >= 0xe000 ? c - 0x800 : c >= 0xd800 ? c + 0x2000 : c);
    return rank(x) - rank(y);
  }
  return a.length - b.length;
}

/** The server's order of BSON types when values of different types are compared. */
const TYPE_ORDER: Record<string, number> = {
  null: 1,
  int: 2,
  int32: 2,
  double: 2,
  long: 2,
  decimal128: 2,
  string: 3,
  object: 4,
  array: 5,
  binData: 6,
  objectId: 7,
  bool: 8,
  date: 9,
};

/** Two values in the server's sort order (no collation). */
function compareValues(a: unknown, b: unknown): number {
  const ta = bsonTypeName(a);
  const tb = bsonTypeName(b);
  const rank = (TYPE_ORDER[ta] ?? 10) - (TYPE_ORDER[tb] ?? 10);
  if (rank !== 0) return rank;
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (TYPE_ORDER[ta] === 2) return Number(a) - Number(b);
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  if (typeof a === 'boolean') return Number(a) - Number(b);
  if (isObjectId(a) && isObjectId(b)) return compareStrings(a.toHexString(), b.toHexString());
  if (ta === 'null') return 0;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b);
  return compareStrings(canonical(a), canonical(b));
}

/** A sort key of one document: an array sorts by its least element ascending, its greatest descending. */
function sortKey(value: unknown, direction: 1 | -1): unknown {
  if (!Array.isArray(value) || value.length === 0) return value;
  return value.reduce((best: unknown, v: unknown) => (compareValues(v, best) * direction < 0 ? v : best));
}

/** Documents sorted by a sort specification (fields 1/-1, `{ $meta: 'textScore' }` descending), stably. */
function sortDocs(docs: Doc[], spec: Record<string, unknown>, score: (doc: Doc) => number): Doc[] {
  const keys = Object.entries(spec).map(([field, dir]): { field: string; meta: boolean; direction: 1 | -1 } => ({
    field,
    meta: isMetaTextScore(dir),
    direction: dir === -1 || isMetaTextScore(dir) ? -1 : 1,
  }));
  return [...docs].sort((x, y) => {
    for (const { field, meta, direction } of keys) {
      const order = meta
        ? score(x) - score(y)
        : compareValues(sortKey(getPath(x, field), direction), sortKey(getPath(y, field), direction));
      if (order !== 0) return order * direction;
    }
    return 0;
  });
}

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

/**
 * A transaction: an explicit one (a session's `withTransaction`) or the implicit one every write statement outside a
 * transaction runs in (committed at the end of the statement). Its writes stay private until it commits.
 */
interface Transaction {
  explicit: boolean;
  number: number;
  /** The commit version it reads at: later commits are hidden from it (see `before`). */
  snapshot: number;
  /** Its own writes, by collection and `_id` key (`undefined`: deleted). */
  writes: Map<StandInCollection, Map<string, Doc | undefined>>;
  /** Committed versions it still has to see: a document as it was at `snapshot`, saved when another commit changed it. */
  before: Map<StandInCollection, Map<string, Doc | undefined>>;
  /** Set when the "server" aborted it (a write conflict, the lifetime limit): the error its next operation gets. */
  aborted: MongoServerError | null;
  /** Set once its writes are the committed state (a repeated commit then succeeds without doing anything). */
  committed: boolean;
  /** Documents it has written (each counted once), held to `maxTransactionWrites`. */
  written: number;
  ended: Promise<void>;
  end: () => void;
  timer?: NodeJS.Timeout;
}

/** A write statement outside a transaction met a document an open transaction holds: it waits for that one. */
class Blocked extends Error {
  constructor(readonly holder: Transaction) {
    super('MongoStandIn: blocked by an open transaction');
  }
}

/** The server's maxBsonObjectSize (16 MiB); a stand-in may be given a lower one so that tests of the limit stay small. */
const MAX_BSON_SIZE = 16 * 1024 * 1024;
/**
 * A command may exceed the document limit by 16 KiB at the server's 16 MiB (BSONObjMaxInternalSize): 1/1024 of it,
 * which a lowered limit keeps, so that a test of the statement limit needs no more documents than one of the
 * document limit.
 */
const commandAllowance = (limit: number) => Math.floor(limit / 1024);

function updatedTooLarge(size: number, limit: number): MongoServerError {
  return serverError(17419, `Resulting document after update is larger than ${limit}`, {
    codeName: 'Location17419',
    size,
  });
}

function writeConflict(): MongoServerError {
  return serverError(
    112,
    'Caused by :: Write conflict during plan execution and yielding is disabled. :: Please retry your operation or multi-document transaction.',
    { codeName: 'WriteConflict', errorLabels: ['TransientTransactionError'] },
  );
}

/** A commit whose outcome the driver could not learn, labelled as the driver labels it. */
function unknownCommitResult(): MongoServerError {
  return serverError(91, 'The server is in quiesce mode and will shut down', {
    codeName: 'ShutdownInProgress',
    errorLabels: ['UnknownTransactionCommitResult'],
  });
}

function noSuchTransaction(txn: Transaction): MongoServerError {
  return serverError(251, `Transaction with { txnNumber: ${txn.number} } has been aborted.`, {
    codeName: 'NoSuchTransaction',
    errorLabels: ['TransientTransactionError'],
  });
}

/**
 * The server's refusal of a transaction whose changes no longer fit its share of the storage engine's cache (code
 * 334, MongoDB 6.0+). Not labelled transient: running it again meets the same limit.
 */
function transactionTooLarge(): MongoServerError {
  return serverError(334, 'Transaction exceeded the maximum size allowed by the storage engine cache', {
    codeName: 'TransactionTooLargeForCache',
  });
}

/** The server's refusal of an object over the BSON limit (a command, a result document). */
function tooLarge(size: number, limit: number): MongoServerError {
  const allowed = limit + commandAllowance(limit);
  return serverError(
    10334,
    `BSONObj size: ${size} (0x${size.toString(16).toUpperCase()}) is invalid. Size must be between 0 and ${allowed}(${limit >= 2 ** 20 ? `${Math.floor(limit / 2 ** 20)}MB` : `${Math.floor(limit / 1024)}KB`})`,
    { codeName: 'BSONObjectTooLarge' },
  );
}

/** Fails like the server when a command (the statement's filter, update, pipeline, …) is over the limit. */
function checkCommandSize(command: Doc, limit: number): void {
  const size = calculateObjectSize(command);
  if (size > limit + commandAllowance(limit)) throw tooLarge(size, limit);
}

export interface MongoStandInOptions {
  /** false: a standalone mongod (no transactions). Default true (a replica-set member). */
  transactions?: boolean;
  /** How long a write outside a transaction waits for a transaction holding its document. Default 10 s. */
  lockWaitMs?: number;
  /** The server's transactionLifetimeLimitSeconds, in ms. Default 60 s. */
  transactionLifetimeMs?: number;
  /** How long `withTransaction` retries transient errors (the driver's 120 s). */
  withTransactionTimeoutMs?: number;
  /** Delay of every round trip (operation, commit). Default 0. */
  latencyMs?: number;
  /**
   * The largest document, result document and (plus 16 KiB) statement, as `hello` reports it. Default 16 MiB, the
   * server's; lower makes a test of what meets the limit fast.
   */
  maxBsonObjectSize?: number;
  /**
   * The most documents one transaction may write (default: no limit). The server's limit is its cache share (a
   * transaction's dirty data) and its 60 s lifetime, both reached by some number of writes; a count makes a test of
   * what meets them small and deterministic.
   */
  maxTransactionWrites?: number;
}

export class MongoStandIn {
  private readonly dbs = new Map<string, StandInDb>();
  private readonly open = new Set<Transaction>();
  private writesUntilCrash: number | null = null;
  /** See {@link pauseAfterWrites}: the documents still to be written before the pause, and its gate. */
  private pause: { writes: number; gate: Promise<void>; reached: () => void } | null = null;
  private txnNumbers = 0;
  /** The commit version: one more with every commit. */
  version = 0;
  readonly transactions: boolean;
  readonly lockWaitMs: number;
  readonly transactionLifetimeMs: number;
  readonly withTransactionTimeoutMs: number;
  readonly maxBsonObjectSize: number;
  /** See {@link MongoStandInOptions.maxTransactionWrites}; a test may lower it once its fixtures are written. */
  maxTransactionWrites: number;
  latencyMs: number;
  /** Round trips so far (for measurements). */
  roundTrips = 0;
  /** Write conflicts raised so far (tests check that a race really met one). */
  writeConflicts = 0;
  /** Commits so far that failed with UnknownTransactionCommitResult. */
  unknownCommits = 0;
  private unknownCommitPlan: { remaining: number; committed: boolean } = { remaining: 0, committed: true };

  constructor(options: MongoStandInOptions = {}) {
    this.transactions = options.transactions ?? true;
    this.lockWaitMs = options.lockWaitMs ?? 10_000;
    this.transactionLifetimeMs = options.transactionLifetimeMs ?? 60_000;
    this.withTransactionTimeoutMs = options.withTransactionTimeoutMs ?? 120_000;
    this.latencyMs = options.latencyMs ?? 0;
    this.maxBsonObjectSize = options.maxBsonObjectSize ?? MAX_BSON_SIZE;
    this.maxTransactionWrites = options.maxTransactionWrites ?? Infinity;
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
    for (const txn of this.open) this.release(txn);
  }

  /** The driver-typed view of this stand-in, for code written against `MongoClient`. */
  asClient(): MongoClient {
    return this as unknown as MongoClient;
  }

  /**
   * Once `n` more documents are written, the next round trip (of whichever client) waits until `resume()`: a
   * process paused in the middle of its work (a long GC pause, a stopped VM), whose transaction the "server" may
   * abort meanwhile. `reached` resolves when that round trip has begun to wait.
   */
  pauseAfterWrites(n: number): { reached: Promise<void>; resume(): void } {
    let resume!: () => void;
    let reached!: () => void;
    const gate = new Promise<void>((resolve) => (resume = resolve));
    const signal = new Promise<void>((resolve) => (reached = resolve));
    this.pause = { writes: n, gate, reached };
    return { reached: signal, resume };
  }

  /** The next `n` write statements succeed and the one after throws {@link StandInCrash} (null: never). */
  failAfterWrites(n: number | null): void {
    this.writesUntilCrash = n;
  }

  /**
   * The next `n` commits of explicit transactions fail with UnknownTransactionCommitResult: having committed
   * (`committed`, the default: the answer was lost on the way back) or not (the request was lost on the way there).
   */
  unknownCommitResults(n: number, options: { committed?: boolean } = {}): void {
    this.unknownCommitPlan = { remaining: n, committed: options.committed ?? true };
  }

  /**
   * @internal A session's commitTransaction: commits, or fails as planned by {@link unknownCommitResults}. A
   * transaction already committed succeeds again (the server answers a repeated commit of the same transaction).
   */
  commitTransaction(txn: Transaction): void {
    if (txn.committed) return;
    if (this.unknownCommitPlan.remaining > 0) {
      this.unknownCommitPlan.remaining -= 1;
      this.unknownCommits += 1;
      if (this.unknownCommitPlan.committed) this.commit(txn);
      throw unknownCommitResult();
    }
    this.commit(txn);
  }

  /** @internal Counts one write statement against the crash budget. */
  countWrite(): void {
    if (this.pause && this.pause.writes > 0) this.pause.writes -= 1;
    if (this.writesUntilCrash === null) return;
    if (this.writesUntilCrash <= 0) {
      this.writesUntilCrash = null;
      throw new StandInCrash();
    }
    this.writesUntilCrash -= 1;
  }

  /**
   * @internal One round trip to the server: the latency, then the transaction's state (an aborted transaction's
   * operations fail as on the server). Returns the session's transaction, if one runs.
   */
  async roundTrip(session: StandInSession | undefined): Promise<Transaction | null> {
    this.roundTrips += 1;
    const pause = this.pause;
    if (pause?.writes === 0) {
      this.pause = null;
      pause.reached();
      await pause.gate;
    }
    if (this.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
    else await Promise.resolve();
    const txn = session?.transaction ?? null;
    if (txn?.aborted) throw txn.aborted;
    return txn;
  }

  /**
   * @internal Runs one write statement: inside the session's transaction, or else in a transaction of its own that
   * commits when the statement ends (what it wrote before an error stays, as on a server), waiting for open
   * transactions that hold documents it writes.
   */
  async write<T>(txn: Transaction | null, run: (txn: Transaction) => T): Promise<T> {
    if (txn) {
      try {
        return run(txn);
      } catch (error) {
        // Any failed statement (a write conflict, a duplicate key, …) aborts the transaction on the server.
        if (error instanceof MongoServerError) {
          if (error.code === 112) this.writeConflicts += 1;
          this.abort(txn, noSuchTransaction(txn));
        }
        throw error;
      }
    }
    const deadline = Date.now() + this.lockWaitMs;
    for (;;) {
      const statement = this.newTransaction(false);
      try {
        const result = run(statement);
        this.commit(statement);
        return result;
      } catch (error) {
        if (!(error instanceof Blocked)) {
          this.commit(statement);
          throw error;
        }
        await this.waitFor(error.holder, deadline);
      }
    }
  }

  private async waitFor(holder: Transaction, deadline: number): Promise<void> {
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new Error(
        "MongoStandIn: an operation waited too long for another session's transaction (an operation inside a transaction sent without its session?)",
      );
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([holder.ended, new Promise((resolve) => (timer = setTimeout(resolve, remaining)))]);
    clearTimeout(timer);
  }

  /** @internal Waits until no open transaction has written to `collection` (a drop takes an exclusive lock). */
  async exclusive(collection: StandInCollection): Promise<void> {
    const deadline = Date.now() + this.lockWaitMs;
    for (;;) {
      const holder = [...this.open].find((t) => t.writes.get(collection)?.size);
      if (!holder) return;
      await this.waitFor(holder, deadline);
    }
  }

  private newTransaction(explicit: boolean): Transaction {
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    return {
      explicit,
      number: ++this.txnNumbers,
      snapshot: this.version,
      writes: new Map(),
      before: new Map(),
      aborted: null,
      committed: false,
      written: 0,
      ended,
      end,
    };
  }

  /** @internal The open transactions other than `txn` (whose writes and snapshots a write must respect). */
  others(txn: Transaction | null): Transaction[] {
    return [...this.open].filter((t) => t !== txn);
  }

  /** @internal */
  begin(): Transaction {
    if (!this.transactions) {
      throw serverError(20, 'Transaction numbers are only allowed on a replica set member or mongos', {
        codeName: 'IllegalOperation',
      });
    }
    const txn = this.newTransaction(true);
    this.open.add(txn);
    // The server aborts a transaction that outlives transactionLifetimeLimitSeconds.
    txn.timer = setTimeout(() => this.abort(txn, noSuchTransaction(txn)), this.transactionLifetimeMs);
    txn.timer.unref();
    return txn;
  }

  /** @internal Makes the transaction's writes the committed state, in one step. */
  commit(txn: Transaction): void {
    if (txn.aborted) throw txn.aborted;
    txn.committed = true;
    if (txn.writes.size) {
      const version = ++this.version;
      for (const [collection, writes] of txn.writes)
        for (const [key, doc] of writes) collection.commitDoc(key, doc, version, txn);
    }
    this.release(txn);
  }

  /** @internal Discards the transaction's writes; `reason` is what its later operations get. */
  abort(txn: Transaction, reason: MongoServerError): void {
    if (!this.open.has(txn)) return;
    txn.aborted = reason;
    this.release(txn);
  }

  private release(txn: Transaction): void {
    clearTimeout(txn.timer);
    for (const [collection, writes] of txn.writes) collection.unlock(writes.keys(), txn);
    txn.writes.clear();
    txn.before.clear();
    this.open.delete(txn);
    txn.end();
  }
}

export class StandInSession {
  private ended = false;
  /** @internal The transaction running on this session. */
  transaction: Transaction | null = null;
  constructor(private readonly client: MongoStandIn) {}

  inTransaction(): boolean {
    return this.transaction !== null;
  }

  /**
   * Runs `fn` in a transaction and commits it, like the driver's `ClientSession.withTransaction`: an error aborts the
   * transaction and is rethrown, unless it carries the `TransientTransactionError` label and the time allowed
   * (`withTransactionTimeoutMs`) is not over: then it runs again after the driver's backoff. Resolves with `fn`'s
   * result.
   */
  async withTransaction<T>(fn: (session: ClientSession) => Promise<T>): Promise<T> {
    if (this.ended) throw new Error('MongoStandIn: session ended');
    const deadline = Date.now() + this.client.withTransactionTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) {
        const backoff = Math.random() * Math.min(5 * 1.5 ** attempt, 500);
        await new Promise((resolve) => setTimeout(resolve, backoff));
      }
      const txn = this.client.begin();
      this.transaction = txn;
      try {
        const result = await fn(this as unknown as ClientSession);
        await this.commitWithRetry(txn, deadline);
        return result;
      } catch (error) {
        this.client.abort(txn, noSuchTransaction(txn));
        const transient = (error as { hasErrorLabel?: (l: string) => boolean }).hasErrorLabel?.(
          'TransientTransactionError',
        );
        if (!transient || Date.now() >= deadline) throw error;
      } finally {
        this.transaction = null;
      }
    }
  }

  /**
   * commitTransaction, repeated while its outcome is unknown (the driver's withTransaction, step 10.1: the commit
   * alone is retried, the callback's writes are not run again) until the deadline; other errors go to the caller.
   */
  private async commitWithRetry(txn: Transaction, deadline: number): Promise<void> {
    for (;;) {
      await this.client.roundTrip(this); // commitTransaction
      try {
        this.client.commitTransaction(txn);
        return;
      } catch (error) {
        const unknown = (error as { hasErrorLabel?: (l: string) => boolean }).hasErrorLabel?.(
          'UnknownTransactionCommitResult',
        );
        if (!unknown || Date.now() >= deadline) throw error;
      }
    }
  }

  async endSession(): Promise<void> {
    this.ended = true;
    const txn = this.transaction;
    if (txn) this.client.abort(txn, noSuchTransaction(txn));
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
        maxBsonObjectSize: this.client.maxBsonObjectSize,
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
  /** The committed documents. */
  private readonly docs = new Map<string, Doc>();
  /** The commit version that last wrote each document (deletions included). */
  private readonly versions = new Map<string, number>();
  /** Documents written by an open transaction, by `_id` key. */
  private readonly locks = new Map<string, Transaction>();
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

  /**
   * Fails when `doc` (to be stored under `key` by `txn`) would duplicate a unique index key: one committed and
   * visible to `txn`, or one of `txn`'s own writes. The same key written by another open transaction is a write
   * conflict (or, for a statement outside a transaction, a wait for that transaction).
   */
  private checkUnique(doc: Doc, key: string, txn: Transaction): void {
    for (const index of this.indexList) {
      if (!index.unique) continue;
      const k = this.indexKeyOf(index, doc);
      if (k === null) continue;
      const holder = this.uniqueKeys.get(index.name)?.get(k);
      const view = this.view(txn);
      const holds = (other: Doc | undefined) => other !== undefined && this.indexKeyOf(index, other) === k;
      let duplicate = holder !== undefined && holder !== key && holds(view.get(holder));
      for (const [ownKey, own] of txn.writes.get(this) ?? []) if (ownKey !== key && holds(own)) duplicate = true;
      if (duplicate) {
        const dup = Object.fromEntries(Object.keys(index.key).map((field) => [field, getPath(doc, field) ?? null]));
        throw serverError(
          DUPLICATE_KEY,
          `E11000 duplicate key error collection: ${this.namespace} index: ${index.name} dup key: ${JSON.stringify(dup)}`,
          { keyPattern: index.key, keyValue: dup },
        );
      }
      for (const other of this.client.others(txn)) {
        for (const [otherKey, written] of other.writes.get(this) ?? []) {
          if (otherKey !== key && holds(written)) {
            if (txn.explicit) throw writeConflict();
            throw new Blocked(other);
          }
        }
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

  /**
   * What `txn` sees: the committed documents, except those committed after it started (their earlier versions) and
   * those it wrote itself. Without a transaction, the committed documents.
   */
  private view(txn: Transaction | null): DocView {
    const own = txn?.writes.get(this);
    const before = txn?.before.get(this);
    if (!own?.size && !before?.size) return this.docs;
    const docs = this.docs;
    const get = (key: string) => (own?.has(key) ? own.get(key) : before?.has(key) ? before.get(key) : docs.get(key));
    return {
      get,
      has: (key: string) => get(key) !== undefined,
      *values() {
        for (const [key, doc] of docs) if (!own?.has(key) && !before?.has(key)) yield doc;
        const changed = new Set([...(own?.keys() ?? []), ...(before?.keys() ?? [])]);
        for (const key of changed) {
          const doc = get(key);
          if (doc) yield doc;
        }
      },
    };
  }

  /**
   * Whether `txn` may write `key`: refused with a write conflict when another transaction holds it or committed it
   * after `txn` started (the server's first-writer-wins), and for a statement outside a transaction, a wait.
   */
  private checkClaim(key: string, txn: Transaction): void {
    const holder = this.locks.get(key);
    if (holder && holder !== txn) {
      if (txn.explicit) throw writeConflict();
      throw new Blocked(holder);
    }
    if (txn.explicit && (this.versions.get(key) ?? 0) > txn.snapshot) throw writeConflict();
  }

  /** Records `txn`'s version of `key` (and holds the document until it ends), once every check has passed. */
  private record(key: string, doc: Doc | undefined, txn: Transaction): void {
    const own = this.ownWrites(txn);
    if (txn.explicit && !own.has(key)) {
      if (txn.written >= this.client.maxTransactionWrites) throw transactionTooLarge();
      txn.written += 1;
    }
    if (txn.explicit) this.locks.set(key, txn);
    own.set(key, doc);
  }

  private ownWrites(txn: Transaction): Map<string, Doc | undefined> {
    let writes = txn.writes.get(this);
    if (!writes) {
      writes = new Map();
      txn.writes.set(this, writes);
    }
    return writes;
  }

  /** Stores `doc` under `key` in `txn` (replacing what is there), checking the size limit and unique indexes. */
  private put(key: string, doc: Doc, txn: Transaction, tooLargeError: (size: number) => MongoServerError): void {
    const size = calculateObjectSize(doc);
    if (size > this.client.maxBsonObjectSize) throw tooLargeError(size);
    this.checkClaim(key, txn);
    this.checkUnique(doc, key, txn);
    this.client.countWrite();
    this.record(key, doc, txn);
  }

  private remove(key: string, txn: Transaction): void {
    if (!this.view(txn).has(key)) return;
    this.checkClaim(key, txn);
    this.client.countWrite();
    this.record(key, undefined, txn);
  }

  /** @internal Makes a committed transaction's version of one document the stored one. */
  commitDoc(key: string, doc: Doc | undefined, version: number, committer: Transaction | null): void {
    const previous = this.docs.get(key);
    // Transactions that started earlier keep seeing the version they started with.
    for (const other of this.client.others(committer)) {
      if (!other.explicit) continue;
      let before = other.before.get(this);
      if (!before) {
        before = new Map();
        other.before.set(this, before);
      }
      if (!before.has(key)) before.set(key, previous);
    }
    this.indexDoc(key, previous, false);
    if (doc) {
      this.docs.set(key, doc);
      this.indexDoc(key, doc, true);
      this.created = true;
    } else this.docs.delete(key);
    this.versions.set(key, version);
    if (this.locks.get(key) === committer) this.locks.delete(key);
  }

  /** @internal Frees the documents a transaction held. */
  unlock(keys: Iterable<string>, txn: Transaction): void {
    for (const key of keys) if (this.locks.get(key) === txn) this.locks.delete(key);
  }

  // ---------------------------------------------------------------- matching

  private textIndex(): IndexSpec | undefined {
    return this.indexList.find((i) => i.weights !== undefined);
  }

  /** Documents matching `filter` (stored objects, not copies), with their text scores when it holds `$text`. */
  private matching(filter: Filter, txn: Transaction | null): { docs: Doc[]; scores: Map<Doc, number> | null } {
    const view = this.view(txn);
    const { search, rest } = splitText(filter);
    const query = new Query(rest);
    let candidates: Iterable<Doc>;
    const id = rest._id;
    if (id !== undefined && (typeof id === 'string' || typeof id === 'number' || isObjectId(id))) {
      const doc = view.get(idKey(id));
      candidates = doc ? [doc] : [];
    } else if (isPlainObject(id) && Object.keys(id).length === 1 && '$eq' in id) {
      const doc = view.get(idKey(id.$eq));
      candidates = doc ? [doc] : [];
    } else {
      candidates = view.values();
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

  private findNow(filter: Filter, options: FindOptions, txn: Transaction | null): Doc[] {
    checkCommandSize({ filter, ...options, session: undefined }, this.client.maxBsonObjectSize);
    const { docs, scores } = this.matching(filter, txn);
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
    const sortKeys = Object.keys(sort);
    if (sortKeys.length) rows = sortDocs(rows, sort, (doc) => scores?.get(doc) ?? 0);
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
      const txn = await this.client.roundTrip(opts.session);
      return this.findNow(filter, opts, txn);
    }, options);
  }

  async findOne(filter: Filter = {}, options: FindOptions = {}): Promise<Doc | null> {
    const txn = await this.client.roundTrip(options.session);
    return this.findNow(filter, { ...options, limit: 1 }, txn)[0] ?? null;
  }

  async countDocuments(
    filter: Filter = {},
    options: SessionOptions & { skip?: number; limit?: number } = {},
  ): Promise<number> {
    const txn = await this.client.roundTrip(options.session);
    checkCommandSize({ filter }, this.client.maxBsonObjectSize);
    const n = this.matching(filter, txn).docs.length - Math.max(0, options.skip ?? 0);
    return Math.max(0, options.limit && options.limit > 0 ? Math.min(n, options.limit) : n);
  }

  /**
   * An aggregation pipeline run by mingo. A `$text` match must be the first stage (as on the server); its score is
   * available to later stages as `{ $meta: 'textScore' }`. `$lookup` resolves other collections of the same db.
   */
  aggregate(pipeline: Doc[], options: SessionOptions = {}): StandInCursor {
    return new StandInCursor(async () => {
      const txn = await this.client.roundTrip(options.session);
      checkCommandSize({ pipeline }, this.client.maxBsonObjectSize);
      let input: Doc[];
      let stages = pipeline;
      const first = pipeline[0] as { $match?: Filter } | undefined;
      if (first?.$match) {
        const { docs, scores } = this.matching(first.$match, txn);
        input = docs.map((doc) => (scores ? { ...copy(doc), [TEXT_SCORE]: scores.get(doc) } : copy(doc)));
        stages = pipeline.slice(1);
      } else {
        input = [...this.view(txn).values()].map(copy);
      }
      const out = this.runPipeline(stages, input, txn);
      for (const doc of out) {
        delete doc[TEXT_SCORE];
        // Each result document is a BSON document of its own on the wire (a $facet's one document included).
        const size = calculateObjectSize(doc);
        if (size > this.client.maxBsonObjectSize) throw tooLarge(size, this.client.maxBsonObjectSize);
      }
      return out;
    }, {});
  }

  /**
   * Runs pipeline stages with mingo, except `$sort` (the server's string order) and `$facet` (whose sub-pipelines
   * may sort), which run here.
   */
  private runPipeline(stages: Doc[], input: Doc[], txn: Transaction | null): Doc[] {
    let docs = input;
    let segment: Doc[] = [];
    const flush = () => {
      if (!segment.length) return;
      const aggregator = new Aggregator(rewriteMeta(segment) as AnyObject[], {
        collectionResolver: (name: string) => [...this.db.collection(name).view(txn).values()].map(copy),
      });
      docs = aggregator.run<Doc>(docs as AnyObject[]);
      segment = [];
    };
    for (const stage of stages) {
      if (isPlainObject(stage.$sort)) {
        flush();
        docs = sortDocs(docs, stage.$sort, (doc) => Number(doc[TEXT_SCORE] ?? 0));
      } else if (isPlainObject(stage.$facet)) {
        flush();
        const input = docs;
        docs = [
          Object.fromEntries(
            Object.entries(stage.$facet).map(([name, sub]) => [
              name,
              this.runPipeline(sub as Doc[], input.map(copy), txn),
            ]),
          ),
        ];
      } else segment.push(stage);
    }
    flush();
    return docs;
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

  private insertNow(document: Doc, txn: Transaction): unknown {
    const doc = this.prepareInsert(document);
    const key = idKey(doc._id);
    if (this.view(txn).has(key)) {
      throw serverError(
        DUPLICATE_KEY,
        `E11000 duplicate key error collection: ${this.namespace} index: _id_ dup key: { _id: ${JSON.stringify(doc._id)} }`,
        { keyPattern: { _id: 1 }, keyValue: { _id: doc._id } },
      );
    }
    this.put(key, doc, txn, (size) =>
      serverError(2, `object to insert too large. size in bytes: ${size}, max size: ${this.client.maxBsonObjectSize}`, {
        codeName: 'BadValue',
      }),
    );
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
        checkOperandTypes(target, rest);
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
    txn: Transaction,
  ) {
    checkCommandSize({ filter, update }, this.client.maxBsonObjectSize);
    if (options.upsert) refuseExprInUpsert(filter);
    const { docs } = this.matching(filter, txn);
    const targets = options.many ? docs : docs.slice(0, 1);
    let modifiedCount = 0;
    for (const doc of targets) {
      const next = this.applyUpdate(doc, update, false);
      if (canonical(next) === canonical(doc)) continue;
      this.put(idKey(doc._id), next, txn, (size) => updatedTooLarge(size, this.client.maxBsonObjectSize));
      modifiedCount++;
    }
    if (targets.length === 0 && options.upsert) {
      const seed = toStored(equalityFields(filter)) as Doc;
      const doc = this.applyUpdate(seed, update, true);
      if (doc._id === undefined) doc._id = new ObjectId();
      this.insertNow(doc, txn);
      return { matchedCount: 0, modifiedCount: 0, upsertedCount: 1, upsertedId: doc._id };
    }
    return { matchedCount: targets.length, modifiedCount, upsertedCount: 0, upsertedId: null };
  }

  private replaceNow(filter: Filter, replacement: Doc, upsert: boolean | undefined, txn: Transaction) {
    checkCommandSize({ filter, replacement }, this.client.maxBsonObjectSize);
    if (upsert) refuseExprInUpsert(filter);
    if (Object.keys(replacement).some((k) => k.startsWith('$')))
      throw serverError(2, 'Replacement document must not contain atomic operators', { codeName: 'BadValue' });
    const doc = this.matching(filter, txn).docs.at(0);
    if (doc) {
      const next = toStored({ ...replacement, _id: doc._id }) as Doc;
      if (replacement._id !== undefined && canonical(replacement._id) !== canonical(doc._id)) {
        throw serverError(66, "After applying the update, the (immutable) field '_id' was found to have been altered", {
          codeName: 'ImmutableField',
        });
      }
      const modified = canonical(next) !== canonical(doc);
      if (modified) this.put(idKey(doc._id), next, txn, (size) => updatedTooLarge(size, this.client.maxBsonObjectSize));
      return { matchedCount: 1, modifiedCount: modified ? 1 : 0, upsertedCount: 0, upsertedId: null };
    }
    if (!upsert) return { matchedCount: 0, modifiedCount: 0, upsertedCount: 0, upsertedId: null };
    const seed = equalityFields(filter);
    const inserted = {
      ...replacement,
      ...(seed._id !== undefined && replacement._id === undefined ? { _id: seed._id } : {}),
    };
    const id = this.insertNow(inserted, txn);
    return { matchedCount: 0, modifiedCount: 0, upsertedCount: 1, upsertedId: id };
  }

  private deleteNow(filter: Filter, many: boolean, txn: Transaction): number {
    checkCommandSize({ filter }, this.client.maxBsonObjectSize);
    const { docs } = this.matching(filter, txn);
    const targets = many ? docs : docs.slice(0, 1);
    for (const doc of targets) this.remove(idKey(doc._id), txn);
    return targets.length;
  }

  async insertOne(document: Doc, options: SessionOptions = {}) {
    const txn = await this.client.roundTrip(options.session);
    return { acknowledged: true, insertedId: await this.client.write(txn, (t) => this.insertNow(document, t)) };
  }

  async insertMany(documents: Doc[], options: SessionOptions & { ordered?: boolean } = {}) {
    const result = await this.bulkWrite(
      documents.map((document) => ({ insertOne: { document } })),
      options,
    );
    return { acknowledged: true, insertedCount: result.insertedCount, insertedIds: result.insertedIds };
  }

  async updateOne(filter: Filter, update: Doc | Doc[], options: SessionOptions & { upsert?: boolean } = {}) {
    const txn = await this.client.roundTrip(options.session);
    return {
      acknowledged: true,
      ...(await this.client.write(txn, (t) =>
        this.updateNow(filter, update, { upsert: options.upsert, many: false }, t),
      )),
    };
  }

  async updateMany(filter: Filter, update: Doc | Doc[], options: SessionOptions & { upsert?: boolean } = {}) {
    const txn = await this.client.roundTrip(options.session);
    return {
      acknowledged: true,
      ...(await this.client.write(txn, (t) =>
        this.updateNow(filter, update, { upsert: options.upsert, many: true }, t),
      )),
    };
  }

  async replaceOne(filter: Filter, replacement: Doc, options: SessionOptions & { upsert?: boolean } = {}) {
    const txn = await this.client.roundTrip(options.session);
    return {
      acknowledged: true,
      ...(await this.client.write(txn, (t) => this.replaceNow(filter, replacement, options.upsert, t))),
    };
  }

  /** Driver ≥ 6 semantics: resolves with the document (before or after, per `returnDocument`), or null. */
  async findOneAndUpdate(
    filter: Filter,
    update: Doc | Doc[],
    options: SessionOptions & { upsert?: boolean; returnDocument?: 'before' | 'after'; projection?: Doc } = {},
  ): Promise<Doc | null> {
    const txn = await this.client.roundTrip(options.session);
    return this.client.write(txn, (t) => {
      const before = this.matching(filter, t).docs.at(0);
      const result = this.updateNow(filter, update, { upsert: options.upsert, many: false }, t);
      if (options.returnDocument !== 'after') return before ? copy(before) : null;
      const id = before ? before._id : result.upsertedId;
      return id === null || id === undefined ? null : copy(this.view(t).get(idKey(id)) ?? null);
    });
  }

  async deleteOne(filter: Filter, options: SessionOptions = {}) {
    const txn = await this.client.roundTrip(options.session);
    return { acknowledged: true, deletedCount: await this.client.write(txn, (t) => this.deleteNow(filter, false, t)) };
  }

  async deleteMany(filter: Filter = {}, options: SessionOptions = {}) {
    const txn = await this.client.roundTrip(options.session);
    return { acknowledged: true, deletedCount: await this.client.write(txn, (t) => this.deleteNow(filter, true, t)) };
  }

  /**
   * Ordered (default) bulk writes stop at the first failing statement, unordered ones carry on; either way the
   * statements before a failure stay applied (outside a transaction) and the error is a `MongoBulkWriteError` with
   * `writeErrors[].index` and the partial `result`, as the driver reports it.
   */
  async bulkWrite(operations: BulkOperation[], options: SessionOptions & { ordered?: boolean } = {}) {
    const txn = await this.client.roundTrip(options.session);
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
        // Each statement on its own outside a transaction, as the server applies a bulk write.
        await this.client.write(txn, (t) => this.bulkStatement(operation, index, tally, t));
      } catch (error) {
        if (!(error instanceof MongoServerError)) throw error;
        // In a transaction a write conflict fails the whole command, with its label (not as a write error).
        if (txn && error.code === 112) throw error;
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

  private bulkStatement(operation: BulkOperation, index: number, tally: WriteTally, txn: Transaction): void {
    if ('insertOne' in operation) {
      tally.insertedIds[index] = this.insertNow(operation.insertOne.document, txn);
      tally.insertedCount++;
    } else if ('updateOne' in operation || 'updateMany' in operation) {
      const many = 'updateMany' in operation;
      const spec = many ? operation.updateMany : operation.updateOne;
      this.count(tally, index, this.updateNow(spec.filter, spec.update, { upsert: spec.upsert, many }, txn));
    } else if ('replaceOne' in operation) {
      const spec = operation.replaceOne;
      this.count(tally, index, this.replaceNow(spec.filter, spec.replacement, spec.upsert, txn));
    } else if ('deleteOne' in operation) {
      tally.deletedCount += this.deleteNow(operation.deleteOne.filter, false, txn);
    } else if ('deleteMany' in operation) {
      tally.deletedCount += this.deleteNow(operation.deleteMany.filter, true, txn);
    } else {
      throw serverError(2, `MongoStandIn: unsupported bulk operation ${Object.keys(operation)[0]}`);
    }
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
    await this.client.roundTrip(undefined);
    return this.createIndexNow({ ...options, key });
  }

  async createIndexes(specs: (Partial<IndexSpec> & { key: Record<string, unknown> })[]): Promise<string[]> {
    await this.client.roundTrip(undefined);
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
    await this.client.roundTrip(options.session);
    await this.client.exclusive(this);
    const existed = this.exists();
    // Committed by no transaction: every open one keeps the documents it started with.
    const version = ++this.client.version;
    for (const key of [...this.docs.keys()]) this.commitDoc(key, undefined, version, null);
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
