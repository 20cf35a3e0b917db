import type { Collection, Document } from 'mongodb';
import type { Viewer } from '../../../domain/access';
import type { ParentType } from '../../../domain/parents';
import type { GenerationCollections, StoredDoc } from './mongoCollections';
import type { WriteScope } from './writes';

/**
 * Per-parent counts of child folders by *read class*, maintained by every folder write of this adapter, so that
 * `Girder-Total-Count` of a folder listing costs a handful of documents, not a count of every sibling through the ACL
 * (the SQLite adapter's `rm_folder_read_counts`, kept there by triggers).
 *
 * A folder's read class says who may READ it: `public`, or the ids of the users and groups its ACL lists (every entry
 * grants at least READ), sorted, as `u:<id>,<id>|g:<id>,<id>`. Siblings mostly share their ACL, so a parent has few
 * classes whatever the number of its children. One counter document per (parent, class), `_id`
 * `<parentType>|<parentId>|<class>`, counted with `accumulate` (a guarded `$inc`, written at most once per operation):
 * an event applied again changes nothing. Counters of a removed parent are deleted with it; a counter that drops to
 * 0 stays (and counts nothing).
 *
 * A generation created before the counters existed has none: it is marked by the absence of {@link COUNTED_MARK}, and
 * its listings count per request as before until a rebuild (`npm run cli -- rebuild`) builds a counted generation.
 */
export const COUNTED_MARK = '~counted';

/** The fields of a folder document its counter is found by: its parent and its read class. */
export const CLASS_FIELDS = { parentCollection: 1, parentId: 1, public: 1, access: 1 } as const;

interface ClassSource {
  public?: unknown;
  access?: unknown;
}

/** The read class of a folder document (as stored, or as about to be written). */
function readClassOf(doc: ClassSource): string {
  if (doc.public === true) return 'public';
  const access = (doc.access ?? {}) as { users?: { id: string }[]; groups?: { id: string }[] };
  const ids = (entries: { id: string }[] | undefined) => (entries ?? []).map((e) => e.id).sort();
  return `u:${ids(access.users).join(',')}|g:${ids(access.groups).join(',')}`;
}

/** Whether a viewer who is not a site admin (null: anonymous) may READ the folders of a class. */
function readableClass(readClass: string, viewer: Viewer | null): boolean {
  if (readClass === 'public') return true;
  if (!viewer) return false;
  const [users, groups] = readClass.split('|').map((part) => part.slice(2).split(','));
  return users.includes(viewer.id) || groups.some((id) => id !== '' && viewer.groups.includes(id));
}

const counterId = (parentType: string, parentId: string, readClass: string) => `${parentType}|${parentId}|${readClass}`;

/** The counter changes of one operation, summed per counter so that each is written once. */
export class ChildCountChanges {
  private readonly deltas = new Map<string, { parentType: string; parentId: string; readClass: string; n: number }>();

  /** `delta` children of class `readClass` under the parent. */
  add(parentType: string, parentId: string, readClass: string, delta: number): this {
    const id = counterId(parentType, parentId, readClass);
    const entry = this.deltas.get(id);
    if (entry) entry.n += delta;
    else this.deltas.set(id, { parentType, parentId, readClass, n: delta });
    return this;
  }

  /** A folder document (with `parentCollection`, `parentId`, `public`, `access`) arriving (+1) or leaving (-1). */
  addFolder(doc: Document, delta: 1 | -1): this {
    return this.add(doc.parentCollection as string, doc.parentId as string, readClassOf(doc), delta);
  }

  /** Queues the writes (none for a counter whose changes cancel out). */
  write(w: WriteScope): void {
    for (const [id, { n, ...key }] of this.deltas) if (n !== 0) w.accumulate('childCounts', id, key, { n });
  }
}

/** Deletes the counters of folders that are gone (their children went with them). */
export function removeCountersOf(w: WriteScope, folderIds: string[]): void {
  if (folderIds.length) w.remove('childCounts', { parentType: 'folder', parentId: { $in: folderIds } }, true);
}

/** Marks a new generation's (empty) counters as complete: done when the generation is created. */
export async function markCounted(collections: GenerationCollections): Promise<void> {
  await collections.get('childCounts').updateOne({ _id: COUNTED_MARK }, { $set: { counted: true } }, { upsert: true });
}

/**
 * The parent's child folders that the viewer may READ, from the counters; null when the current generation has no
 * counters (the caller counts per request then). `counted`: the caller's record of the counter collections (one per
 * generation) already found marked, so that the mark is read once per generation.
 */
export async function childCount(
  counters: Collection<StoredDoc>,
  counted: Set<string>,
  parentType: ParentType,
  parentId: string,
  viewer: Viewer | null,
): Promise<number | null> {
  if (!counted.has(counters.namespace)) {
    if (!(await counters.findOne({ _id: COUNTED_MARK }))) return null;
    counted.add(counters.namespace);
  }
  const rows = await counters.find({ parentId, parentType }, { projection: { readClass: 1, n: 1 } }).toArray();
  let total = 0;
  for (const row of rows) {
    if (viewer?.admin || readableClass(row.readClass as string, viewer)) total += row.n as number;
  }
  return total;
}
