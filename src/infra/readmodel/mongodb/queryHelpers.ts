import type { StoredDoc } from './mongoCollections';
import type { Collection, Document, Filter, Sort } from 'mongodb';
import type { Viewer } from '../../../domain/access';
import type { Paging } from '../../../domain/paging';
import { isFieldPath } from '../../../domain/sortKeys';
import { ownValue } from '../../../domain/ownMap';

/**
 * Fields the adapter keeps on documents for its own use and never returns: `_rev` (the stamp of the last projection
 * write, see writes.ts) and, per collection, what `extra` names.
 */
export function hidden(...extra: string[]): Document {
  return Object.fromEntries([['_rev', 0], ...extra.map((field) => [field, 0])]) as Document;
}

/** A filter that matches nothing. */
const NOTHING: Filter<StoredDoc> = { _id: { $in: [] } };

/**
 * `$and` of the given clauses, leaving out empty ones and flattening a clause that is itself only an `$and`: a
 * `$text` clause must stay at the top level of the query's `$and` (a listing's filter, narrowed again).
 */
export function and(...clauses: Filter<StoredDoc>[]): Filter<StoredDoc> {
  const kept = clauses
    .flatMap((c) => (Object.keys(c).length === 1 && Array.isArray(c.$and) ? c.$and : [c]))
    .filter((c) => Object.keys(c).length > 0);
  if (kept.length === 0) return {};
  return kept.length === 1 ? kept[0] : { $and: kept };
}

/**
 * The permission filter of a resource collection, inside the query (Girder's `permissionClauses`): admins see
 * everything; otherwise `public` (for READ only), a user entry, or a group entry at `level` or above. `prefix`
 * addresses a joined document (e.g. `_folder.` after a `$lookup`).
 */
export function readableFilter(viewer: Viewer | null, level = 0, prefix = ''): Filter<StoredDoc> {
  if (viewer?.admin) return {};
  const clauses: Filter<StoredDoc>[] = [];
  if (level === 0) clauses.push({ [`${prefix}public`]: true });
  if (viewer) {
    clauses.push({ [`${prefix}access.users`]: { $elemMatch: { id: viewer.id, level: { $gte: level } } } });
    if (viewer.groups.length) {
      clauses.push({
        [`${prefix}access.groups`]: { $elemMatch: { id: { $in: viewer.groups }, level: { $gte: level } } },
      });
    }
  }
  if (clauses.length === 0) return NOTHING;
  return clauses.length === 1 ? clauses[0] : { $or: clauses };
}

/**
 * The sort of a Girder paging spec: the requested field (through `fields`, for the few whose stored name differs),
 * ties broken by `_id` in the same direction so pages are stable, as the SQLite adapter orders them.
 */
export function sortOf(paging: Paging, fields: Record<string, string> = {}): Sort {
  const dir = paging.sortdir === -1 ? -1 : 1;
  // An own-property lookup: a sort named `constructor` or `__proto__` is a document path like any other field.
  const field = ownValue(fields, paging.sort) ?? paging.sort;
  // The HTTP layer lets through only such paths (domain/sortKeys.ts); a path MongoDB would refuse is never sent.
  if (field === '_id' || !isFieldPath(field)) return { _id: dir };
  return { [field]: dir, _id: dir };
}

/** skip/limit of a paging spec (limit 0 means no limit, as in Girder). */
export function windowOf(paging: Paging): { skip?: number; limit?: number } {
  return {
    ...(paging.offset > 0 ? { skip: paging.offset } : {}),
    ...(paging.limit > 0 ? { limit: paging.limit } : {}),
  };
}

/**
 * User search text as a `$text` `$search` string with the same meaning as the SQLite adapter's FTS query: any of
 * the words matches, a quoted phrase must match as a phrase, a word prefixed with `-` excludes. Every term is reduced
 * to letters, digits and underscores, so that text-search syntax in user input is inert. Null when nothing
 * searchable remains (then nothing matches, without asking the server).
 */
export function textSearch(text: string): string | null {
  const phrases: string[] = [];
  const excluded: string[] = [];
  const words: string[] = [];
  const clean = (s: string) => s.replace(/[^\p{L}\p{N}_]+/gu, ' ').trim();
  const rest = text.replace(/"([^"]*)"/g, (_, phrase: string) => {
    const cleaned = clean(phrase).replace(/\s+/g, ' ');
    if (cleaned) phrases.push(cleaned);
    return ' ';
  });
  for (const token of rest.split(/\s+/).filter(Boolean)) {
    const cleaned = clean(token.replace(/^-+/, ''));
    if (!cleaned) continue;
    for (const part of cleaned.split(/\s+/)) (token.startsWith('-') ? excluded : words).push(part);
  }
  if (phrases.length === 0 && words.length === 0) return null;
  return [...phrases.map((p) => `"${p}"`), ...words, ...excluded.map((w) => `-${w}`)].join(' ');
}

/**
 * Girder's prefix search on a document's name (`PrefixSearch` in the read-model port): `name` starts with the
 * prefix as typed, or its lower-cased name does, which for a lower-case prefix is a case-insensitive match on `name`
 * (collections store no `lowerName`, so the rule is written on `name` for every type).
 */
export function namePrefixFilter(prefix: string): Filter<StoredDoc> {
  const start = `^${escapeRegex(prefix)}`;
  if (prefix !== prefix.toLowerCase()) return { name: { $regex: start } };
  return { name: { $regex: start, $options: 'i' } };
}

/** Escapes a string for use inside a regular expression. */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A copy of `doc` without the keys whose value is `undefined` (the driver would store them as null). */
export function defined<T extends object>(doc: T): T {
  return Object.fromEntries(Object.entries(doc).filter(([, value]) => value !== undefined)) as T;
}

/** `$set` of the defined fields and `$unset` of the ones given as `undefined` (an update's field semantics). */
export function setFields(fields: Record<string, unknown>): Document {
  const entries = Object.entries(fields);
  const set = entries.filter(([, value]) => value !== undefined);
  const unset = entries.filter(([, value]) => value === undefined).map(([key]): [string, string] => [key, '']);
  return {
    ...(set.length ? { $set: Object.fromEntries(set) } : {}),
    ...(unset.length ? { $unset: Object.fromEntries(unset) } : {}),
  };
}

/** The items of a folder with exactly this name, `except` one item (sibling-name checks). */
export function itemNamedFilter(folderId: string, name: string, except?: string): Filter<StoredDoc> {
  return except === undefined ? { folderId, name } : { folderId, name, _id: { $ne: except } };
}

/**
 * The documents before document `id` in {@link sortOf}'s order: Girder's findPosition filter, a smaller (descending:
 * larger) sort value or the same value and a smaller (larger) id. As in Girder, documents without the sort field are
 * not counted. Matches nothing when there is no document `id`.
 */
export async function beforeFilter(
  collection: Collection<StoredDoc>,
  paging: Paging,
  id: string,
): Promise<Filter<StoredDoc>> {
  const [field] = Object.keys(sortOf(paging));
  const op = paging.sortdir === -1 ? '$gt' : '$lt';
  if (field === '_id') return { _id: { [op]: id } };
  const doc = await collection.findOne({ _id: id }, { projection: { [field]: 1 } });
  if (!doc) return NOTHING;
  let value: unknown = doc;
  for (const key of field.split('.'))
    value = value !== null && typeof value === 'object' ? ownValue(value as Record<string, unknown>, key) : undefined;
  return { $or: [{ [field]: { [op]: value ?? null } }, { [field]: value ?? null, _id: { [op]: id } }] };
}
