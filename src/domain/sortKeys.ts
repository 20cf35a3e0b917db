import type { Viewer } from './access';
import { RestError } from './errors';

/**
 * What a listing may be sorted by, for a given caller (issue 27, rule 3). Sorting on a field is reading it: pages in
 * `email` order and a few accounts registered with chosen emails binary-search anyone's email. So a listing sorts only
 * on the stored fields its view shows that caller on every row, plus paths under the metadata field for resources that
 * have one. Anything else is a 400 naming `sort`, never a silent order by id.
 *
 * Each listed resource declares its keys once (src/queries/sortableFields.ts); the `sort` parameter of
 * `pagingParams` checks them against the caller (src/http/params.ts), so a listing route cannot skip the check.
 */
export interface SortKeys {
  /** The sort when the request names none. */
  readonly default: string;
  /** The fields the view shows this caller on every row, under the names a sort uses. */
  fields(viewer: Viewer | null): ReadonlySet<string>;
  /** Names of the metadata field (`metadata`, `meta`): `<name>.<key>[.<key>…]` sorts on a metadata value. */
  readonly metadata: readonly string[];
}

/** Keys whose fields do not depend on the caller. */
export function fixedSortKeys(
  defaultSort: string,
  fields: readonly string[],
  metadata: readonly string[] = [],
): SortKeys {
  const set: ReadonlySet<string> = new Set(fields);
  return { default: defaultSort, fields: () => set, metadata };
}

/**
 * Whether a segment of a field path can be addressed by every read-model adapter: MongoDB refuses a path segment
 * that is empty or starts with `$` and a field name with a NUL byte; the SQLite adapter quotes each segment
 * (sqlHelpers.ts `jsonPath`), so anything else is safe there. Metadata keys are stored under the same rules
 * (domain/metadata.ts: not empty, no `.`, no leading `$`).
 */
function isPathSegment(segment: string): boolean {
  return segment.length > 0 && !segment.startsWith('$') && !segment.includes('\0');
}

/** Whether a dotted field path is one every read-model adapter can sort on ({@link isPathSegment} for each part). */
export function isFieldPath(path: string): boolean {
  return path.split('.').every(isPathSegment);
}

/** The sort, if the caller may sort this listing by it; a 400 naming `sort` otherwise. */
export function checkSort(keys: SortKeys, sort: string, viewer: Viewer | null): string {
  const fields = keys.fields(viewer);
  if (fields.has(sort)) return sort;
  const dot = sort.indexOf('.');
  if (dot > 0 && keys.metadata.includes(sort.slice(0, dot))) {
    if (isFieldPath(sort.slice(dot + 1))) return sort;
    throw new RestError(
      `Invalid value for sort: "${sort}". A metadata key must not be empty, start with "$" or contain a NUL character.`,
    );
  }
  const metadata = keys.metadata.length ? `, ${keys.metadata[0]}.<key>` : '';
  throw new RestError(`Invalid value for sort: "${sort}". Allowed values: ${[...fields].join(', ')}${metadata}.`);
}
