import type { Collection, Document, Filter, FindOptions } from 'mongodb';
import type { StoredDoc } from './mongoCollections';

/**
 * Lists of ids in one statement, bounded (issue 32). Subtree operations and their reads name documents by lists
 * (`{folderId: {$in: <every folder of the subtree>}}`, `{itemId: {$in: <every item>}}`); MongoDB refuses a statement
 * over its `maxBsonObjectSize` (16 MiB, plus 16 KiB for a command), which a subtree of 100,000 folders with a few
 * items each passes, and the refusal would repeat at every retry of the event.
 *
 * The rule, in this one place: a filter whose `$in` lists together pass the budget is split into pieces, each the
 * same filter with a part of the longest list (recursively, until every piece fits), each sent as its own statement
 * in the same session (and transaction). The union of what the pieces match is what the whole filter matches, so
 * deletes, updates, finds without an order or a limit, counts and distinct values are the same; a sorted or limited
 * find cannot be split and is refused when it would need to be. The budget is a quarter of the server's
 * `maxBsonObjectSize` (from `hello`), leaving room for the rest of the statement and the command around it.
 */

/** What a statement's `$in` lists may take, in bytes, when the server allows documents of `maxBsonObjectSize`. */
export function inListBudget(maxBsonObjectSize: number): number {
  return Math.floor(maxBsonObjectSize / 4);
}

/** Bytes an array element takes in BSON: type byte, index key (up to 7 digits and a NUL), the value. */
function valueBytes(value: unknown): number {
  const element = 1 + 8;
  if (typeof value === 'string') return element + 4 + Buffer.byteLength(value, 'utf8') + 1;
  return element + 16;
}

function listBytes(values: readonly unknown[]): number {
  let total = 0;
  for (const value of values) total += valueBytes(value);
  return total;
}

/** The top-level fields whose condition is exactly `{$in: [...]}`, with their lists' sizes. */
function inLists(filter: Filter<StoredDoc>): { field: string; values: unknown[]; bytes: number }[] {
  const lists = [];
  for (const [field, condition] of Object.entries(filter as Document)) {
    if (field.startsWith('$') || condition === null || typeof condition !== 'object') continue;
    const keys = Object.keys(condition as Document);
    const values = (condition as Document).$in as unknown;
    if (keys.length !== 1 || !Array.isArray(values)) continue;
    lists.push({ field, values, bytes: listBytes(values) });
  }
  return lists;
}

/** `filter` as pieces whose `$in` lists each fit `budget` bytes (just `[filter]` when it fits already). */
export function splitIn(filter: Filter<StoredDoc>, budget: number): Filter<StoredDoc>[] {
  const lists = inLists(filter);
  const total = lists.reduce((sum, l) => sum + l.bytes, 0);
  if (total <= budget) return [filter];
  const longest = lists.reduce((a, b) => (b.bytes > a.bytes ? b : a));
  // One value over the budget alone cannot be split further: the server will say so.
  if (longest.values.length <= 1) return [filter];
  // What the other lists leave of the budget goes to the pieces of the longest (at least one value each).
  const room = Math.max(budget - (total - longest.bytes), 1);
  const pieces: Filter<StoredDoc>[] = [];
  let part: unknown[] = [];
  let bytes = 0;
  for (const value of longest.values) {
    const size = valueBytes(value);
    if (part.length > 0 && bytes + size > room) {
      pieces.push({ ...filter, [longest.field]: { $in: part } });
      part = [];
      bytes = 0;
    }
    part.push(value);
    bytes += size;
  }
  if (part.length > 0) pieces.push({ ...filter, [longest.field]: { $in: part } });
  // Other lists may still be over their share: split each piece again.
  return pieces.flatMap((piece) => (lists.length > 1 ? splitIn(piece, budget) : [piece]));
}

/** Refuses a find that would need splitting but whose result depends on seeing every match at once. */
export function checkSplittable(pieces: number, options: FindOptions): void {
  if (pieces > 1 && (options.sort !== undefined || options.limit !== undefined || options.skip !== undefined))
    throw new Error('MongoReadModel: a sorted or limited find cannot be split into bounded statements.');
}

/** Every document matching `filter` (no order), in bounded statements. */
export async function findIn(
  collection: Collection<StoredDoc>,
  filter: Filter<StoredDoc>,
  options: FindOptions,
  budget: number,
): Promise<StoredDoc[]> {
  const pieces = splitIn(filter, budget);
  checkSplittable(pieces.length, options);
  const found: StoredDoc[] = [];
  for (const piece of pieces) found.push(...(await collection.find(piece, options).toArray()));
  return found;
}

/** How many documents match `filter`, in bounded statements. */
export async function countIn(
  collection: Collection<StoredDoc>,
  filter: Filter<StoredDoc>,
  budget: number,
): Promise<number> {
  let count = 0;
  for (const piece of splitIn(filter, budget)) count += await collection.countDocuments(piece);
  return count;
}

/** The distinct values of `field` over the documents matching `filter`, in bounded statements. */
export async function distinctIn(
  collection: Collection<StoredDoc>,
  filter: Filter<StoredDoc>,
  field: string,
  budget: number,
): Promise<string[]> {
  const values = new Set<string>();
  for (const piece of splitIn(filter, budget)) {
    const groups = await collection.aggregate([{ $match: piece }, { $group: { _id: `$${field}` } }]).toArray();
    for (const g of groups) values.add(g._id as string);
  }
  return [...values];
}
