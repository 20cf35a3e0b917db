import type { Filter } from 'mongodb';
import type {
  FolderDoc,
  FolderPlacement,
  FolderRestoreWrite,
  HistoryQueries,
  HistoryWrites,
  ItemDoc,
  RemovedFolder,
  RemovedItem,
} from '../../../ports/readModel';
import type { StoredDoc } from './mongoCollections';
import type { ReadSource } from './generations';
import { distinctIn, findIn } from './boundedIn';
import type { OperationLog, WriteScope } from './writes';
import { positionStamp } from './writes';
import { addRootSize, recordSizeChange } from './sizes';
import { notStored } from '../notStored';
import { ChildCountChanges } from './childCounts';
import type { ParentType, RootType } from '../../../domain/parents';

/**
 * History support (the port's optional HistoryQueries / HistoryWrites; the SQLite adapter's historyStore.ts is the
 * reference), kept inside each event's writes like everything else, so a rebuild produces the same documents:
 *
 * 1. Removed documents. Just before a folder delete or clear removes a subtree, `keepRemoved` copies the folders
 *    (with their `ancestors`, which is all the ancestry a restore needs), items and files it is about to remove into
 *    `rm_deleted_folders` / `_items` / `_files`, keyed by the operation's position and stamped with its time.
 *    `restoreFolder` moves a folder's part of them back.
 * 2. Tree placement over time: `rm_folder_tree` holds one document per interval `[from, to)` during which a folder
 *    sat under one parent and root. The SQLite adapter maintains it with triggers; here every write that places,
 *    moves or removes folders opens and closes intervals itself (`openPlacement`, `closePlacement`).
 * 3. Sizes over time: `rm_folder_sizes` holds, per folder and event, how much the event changed the folder's size
 *    (the items directly in it; a new folder's size counts as a change from 0, a removed folder's as one to 0); the
 *    size at a position is the sum up to it. (The SQLite adapter records absolute sizes; a sum of deltas is what
 *    guarded `$inc`s can write without reading the result back, and it stays exact under replays.)
 *
 * Positions are stored as 20-digit strings (`stamp`, `from`, `to`) so that they compare in log order.
 */

type Placed = Pick<FolderDoc, '_id' | 'parentCollection' | 'parentId' | 'baseParentType' | 'baseParentId'>;

/** Opens a placement interval at this event for each folder (closing the one it had before). */
export function openPlacement(w: WriteScope, folders: Placed[]): void {
  if (folders.length === 0) return;
  const at = positionStamp(w.position);
  // An interval opened earlier in this same event is replaced below rather than closed (the SQLite REPLACE).
  closePlacement(w, { folderId: { $in: folders.map((f) => f._id) }, from: { $ne: at } });
  for (const f of folders) {
    w.put('folderTree', {
      _id: `${f._id}|${at}`,
      folderId: f._id,
      from: at,
      to: null,
      parentType: f.parentCollection,
      parentId: f.parentId,
      baseParentType: f.baseParentType,
      baseParentId: f.baseParentId,
    });
  }
}

/** Closes, at this event, the open placement intervals matching `filter` (folders leaving the tree or moving). */
export function closePlacement(w: WriteScope, filter: Filter<StoredDoc>): void {
  w.update('folderTree', { ...filter, to: null }, { $set: { to: positionStamp(w.position) } }, true);
}

const keyAt = (stamp: string, id: string) => `${stamp}|${id}`;
const withoutInternals = <T>(doc: StoredDoc, ...extra: string[]): T => {
  const drop = new Set(['_rev', 'ancestors', ...extra]);
  return Object.fromEntries(Object.entries(doc).filter(([field]) => !drop.has(field))) as T;
};

/** Where a child of the parent is rooted, with its ancestry, or null when the parent is not in the read model. */
export async function baseOf(
  w: WriteScope,
  parentType: ParentType,
  parentId: string,
): Promise<{ type: RootType; id: string; ancestors: string[] } | null> {
  if (parentType === 'folder') {
    const parent = await w.findOne(
      'folders',
      { _id: parentId },
      { projection: { baseParentType: 1, baseParentId: 1, ancestors: 1 } },
    );
    return parent
      ? {
          type: parent.baseParentType as RootType,
          id: parent.baseParentId as string,
          ancestors: [...(parent.ancestors as string[]), parentId],
        }
      : null;
  }
  const root = await w.findOne(
    parentType === 'user' ? 'users' : 'collections',
    { _id: parentId },
    { projection: { _id: 1 } },
  );
  return root ? { type: parentType, id: parentId, ancestors: [] } : null;
}

async function keepRemoved(w: WriteScope, folderId: string, keepRoot: boolean, at: string): Promise<void> {
  const root = await w.findOne('folders', { _id: folderId }, { projection: { _id: 1 } });
  if (!root) return;
  const stamp = positionStamp(w.position);
  // The removed folders: every descendant, and the folder itself unless only its contents go. (The items directly in
  // a cleared folder go too but are not kept: only a removed folder can be restored, and they belong to none.)
  const folders = await w.find(
    'folders',
    keepRoot ? { ancestors: folderId } : { $or: [{ _id: folderId }, { ancestors: folderId }] },
    {
      projection: { _rev: 0 },
    },
  );
  const operation = keepRoot ? 'cleared' : 'deleted';
  for (const f of folders) {
    w.put('deletedFolders', {
      _id: keyAt(stamp, f._id),
      position: w.position.toString(),
      stamp,
      id: f._id,
      rootId: folderId,
      operation,
      deletedAt: at,
      doc: f,
    });
  }
  if (folders.length === 0) return;
  const items = await w.find('items', { folderId: { $in: folders.map((f) => f._id) } }, { projection: { _rev: 0 } });
  for (const i of items) {
    w.put('deletedItems', {
      _id: keyAt(stamp, i._id),
      position: w.position.toString(),
      stamp,
      id: i._id,
      deletedAt: at,
      folderId: i.folderId as string,
      doc: i,
    });
  }
  if (items.length === 0) return;
  const files = await w.find('files', { itemId: { $in: items.map((i) => i._id) } }, { projection: { _rev: 0 } });
  for (const f of files) {
    w.put('deletedFiles', {
      _id: keyAt(stamp, f._id),
      position: w.position.toString(),
      stamp,
      id: f._id,
      deletedAt: at,
      itemId: f.itemId as string,
      blobId: f.blobId as string,
      doc: f,
    });
  }
}

/** The kept folders of a removal at `stamp` that restoring `folderId` brings back: itself and what was below it. */
function keptSubtree(folderId: string, stamp: string): Filter<StoredDoc> {
  return { stamp, $or: [{ id: folderId }, { 'doc.ancestors': folderId }] };
}

/** The kept documents (folders, items, files) of the part of a removal at `stamp` that restoring `folderId` brings
 * back. */
async function keptFor(w: WriteScope, folderId: string, stamp: string) {
  const folders = await w.find('deletedFolders', keptSubtree(folderId, stamp));
  const items = folders.length
    ? await w.find('deletedItems', { stamp, folderId: { $in: folders.map((k) => k.id as string) } })
    : [];
  const files = items.length
    ? await w.find('deletedFiles', { stamp, itemId: { $in: items.map((i) => i.id as string) } })
    : [];
  return { folders, items, files };
}

function forgetKept(w: WriteScope, kept: { folders: StoredDoc[]; items: StoredDoc[]; files: StoredDoc[] }): void {
  if (kept.files.length) w.remove('deletedFiles', { _id: { $in: kept.files.map((f) => f._id) } }, true);
  if (kept.items.length) w.remove('deletedItems', { _id: { $in: kept.items.map((i) => i._id) } }, true);
  if (kept.folders.length) w.remove('deletedFolders', { _id: { $in: kept.folders.map((k) => k._id) } }, true);
}

async function restoreFolder(w: WriteScope, r: FolderRestoreWrite): Promise<void> {
  const dp = positionStamp(r.deletedPosition);
  const live = await w.findOne('folders', { _id: r.folderId }, { projection: { _rev: 1 } });
  if (live) {
    // Restored by this very operation before an interruption: only forgetting the kept documents may be left to do.
    if (w.wroteAlready(live)) forgetKept(w, await keptFor(w, r.folderId, dp));
    return;
  }
  if (!(await w.findOne('deletedFolders', { _id: keyAt(dp, r.folderId) }, { projection: { _id: 1 } }))) return;
  const base = await baseOf(w, r.parentType, r.parentId);
  // The projection guards the write on the new parent (src/projections/lateEvents.ts).
  if (!base) throw notStored('new parent', r.parentId, r.folderId);
  const keptDocs = await keptFor(w, r.folderId, dp);
  const kept = keptDocs.folders;
  const ids = kept.map((k) => k.id as string);

  // 1. Folders: as kept, under the new root; the restored folder itself under its new parent with its new name.
  const restored: StoredDoc[] = kept.map((k) => {
    const doc = k.doc as StoredDoc;
    const ancestors = doc.ancestors as string[];
    const inside = doc._id === r.folderId ? [] : ancestors.slice(ancestors.indexOf(r.folderId));
    const own =
      doc._id === r.folderId
        ? { parentCollection: r.parentType, parentId: r.parentId, name: r.name, lowerName: r.name.toLowerCase() }
        : {};
    return {
      ...doc,
      ...own,
      baseParentType: base.type,
      baseParentId: base.id,
      ancestors: [...base.ancestors, ...inside],
    };
  });

  // 2. Items and files, rooted under the new root.
  for (const i of keptDocs.items)
    w.put('items', { ...(i.doc as StoredDoc), baseParentType: base.type, baseParentId: base.id });
  for (const f of keptDocs.files) w.put('files', f.doc as StoredDoc);

  // 3. Sizes, history index and placement; then what was kept for the restored part is no longer kept.
  addRootSize(
    w,
    base.type,
    base.id,
    restored.reduce((sum, f) => sum + (f.size as number), 0),
  );
  for (const f of restored) recordSizeChange(w, f._id, f.size as number);
  const stamp = positionStamp(w.position);
  for (const id of ids) {
    w.put('subtreeOps', {
      _id: `${id}|${w.position}|restored`,
      folderId: id,
      position: w.position.toString(),
      stamp,
      operation: 'restored',
      rootId: r.folderId,
    });
  }
  openPlacement(w, restored as unknown as Placed[]);
  const counts = new ChildCountChanges();
  for (const f of restored) counts.addFolder(f, 1);
  counts.write(w);
  // The folders, the restored one last: once it is back, everything above was applied (see writes.ts)…
  for (const f of restored) if (f._id !== r.folderId) w.put('folders', f);
  const restoredRoot = restored.find((f) => f._id === r.folderId);
  if (!restoredRoot) throw new Error(`Folder ${r.folderId} is missing from its own restore.`);
  w.put('folders', restoredRoot);
  // …and what was kept for the restored part is no longer kept (finished on a replay, see above).
  forgetKept(w, keptDocs);
}

export function historyWrites(log: OperationLog): HistoryWrites {
  return {
    keepRemoved(folderId, keepRoot, _position, at) {
      log.record((w) => keepRemoved(w, folderId, keepRoot, at));
    },
    restoreFolder(restore) {
      log.record((w) => restoreFolder(w, restore));
    },
  };
}

export class MongoHistory implements HistoryQueries {
  constructor(private readonly source: ReadSource) {}

  private async live(name: 'folders' | 'items', id: string): Promise<boolean> {
    return (await (await this.source.get(name)).findOne({ _id: id }, { projection: { _id: 1 } })) !== null;
  }

  async removedFolder(id: string): Promise<RemovedFolder | null> {
    if (await this.live('folders', id)) return null;
    const kept = await (await this.source.get('deletedFolders')).findOne({ id }, { sort: { stamp: -1 } });
    if (!kept) return null;
    return {
      doc: withoutInternals<FolderDoc>(kept.doc as StoredDoc),
      position: BigInt(kept.position as string),
      rootId: kept.rootId as string,
      operation: kept.operation as 'deleted' | 'cleared',
      at: kept.deletedAt as string,
    };
  }

  async removedItem(id: string): Promise<RemovedItem | null> {
    if (await this.live('items', id)) return null;
    const kept = await (await this.source.get('deletedItems')).findOne({ id }, { sort: { stamp: -1 } });
    if (!kept) return null;
    return {
      doc: withoutInternals<ItemDoc>(kept.doc as StoredDoc),
      position: BigInt(kept.position as string),
      at: kept.deletedAt as string,
    };
  }

  async restorable(folderId: string, position: bigint): Promise<{ folderIds: string[]; blobIds: string[] }> {
    const stamp = positionStamp(position);
    const kept = await this.source.get('deletedFolders');
    // Only a folder the removal took itself can come back (an emptied folder stayed; what was under it has its own
    // ids).
    if (!(await kept.findOne({ _id: keyAt(stamp, folderId) }, { projection: { _id: 1 } })))
      return { folderIds: [], blobIds: [] };
    const folderIds = (await kept.find(keptSubtree(folderId, stamp), { projection: { id: 1 } }).toArray()).map(
      (k) => k.id as string,
    );
    const { inBudget } = this.source;
    const itemIds = (
      await findIn(
        await this.source.get('deletedItems'),
        { stamp, folderId: { $in: folderIds } },
        { projection: { id: 1 } },
        inBudget,
      )
    ).map((i) => i.id as string);
    if (itemIds.length === 0) return { folderIds, blobIds: [] };
    const blobIds = await distinctIn(
      await this.source.get('deletedFiles'),
      { stamp, itemId: { $in: itemIds } },
      'blobId',
      inBudget,
    );
    return { folderIds, blobIds };
  }

  async isBlobRetained(blobId: string, since: string): Promise<boolean> {
    return (
      (await (
        await this.source.get('deletedFiles')
      ).findOne({ blobId, deletedAt: { $gte: since } }, { projection: { _id: 1 } })) !== null
    );
  }

  async blobIdsRemovedBetween(from: string, to: string): Promise<string[]> {
    const groups = await (
      await this.source.get('deletedFiles')
    )
      .aggregate([{ $match: { deletedAt: { $gte: from, $lt: to } } }, { $group: { _id: '$blobId' } }])
      .toArray();
    return groups.map((g) => g._id as string);
  }

  private static during(at: string): Filter<StoredDoc> {
    return { from: { $lte: at }, $or: [{ to: null }, { to: { $gt: at } }] };
  }

  async placementAt(folderId: string, position: bigint): Promise<FolderPlacement | null> {
    const row = await (
      await this.source.get('folderTree')
    ).findOne({ folderId, ...MongoHistory.during(positionStamp(position)) }, { sort: { from: -1 } });
    if (!row) return null;
    return {
      folderId,
      parentType: row.parentType as ParentType,
      parentId: row.parentId as string,
      baseParentType: row.baseParentType as RootType,
      baseParentId: row.baseParentId as string,
      from: BigInt(row.from as string),
      to: row.to === null ? null : BigInt(row.to as string),
    };
  }

  async childrenAt(parentType: ParentType, parentId: string, position: bigint): Promise<string[]> {
    const rows = await (
      await this.source.get('folderTree')
    )
      .find({ parentId, parentType, ...MongoHistory.during(positionStamp(position)) }, { projection: { folderId: 1 } })
      .toArray();
    return [...new Set(rows.map((r) => r.folderId as string))];
  }

  async sizeAt(folderId: string, position: bigint): Promise<number> {
    const sum = (
      await (
        await this.source.get('folderSizes')
      )
        .aggregate([
          { $match: { folderId, position: { $lte: positionStamp(position) } } },
          { $group: { _id: null, size: { $sum: '$delta' } } },
        ])
        .toArray()
    ).at(0);
    return (sum?.size as number | undefined) ?? 0;
  }
}
