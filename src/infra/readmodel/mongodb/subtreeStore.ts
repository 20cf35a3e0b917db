import type { Filter } from 'mongodb';
import type {
  FolderCopyWrite,
  SubtreeOp,
  SubtreeOperation,
  SubtreeQueries,
  SubtreeWrites,
} from '../../../ports/readModel';
import type { StoredDoc } from './mongoCollections';
import type { ReadSource } from './generations';
import type { OperationLog, WriteScope } from './writes';
import { and, defined, readableFilter } from './queryHelpers';
import { addRootSize, recordSizeChange } from './sizes';
import { baseOf, closePlacement, openPlacement } from './historyStore';
import { CLASS_FIELDS, ChildCountChanges, removeCountersOf } from './childCounts';
import type { RootType } from '../../../domain/parents';
import { deriveId } from '../../../domain/ids';
import { countIn, distinctIn, findIn } from './boundedIn';

/**
 * Subtree operations (docs/subtree-operations.md), applied set-wise over `ancestors`: a delete is `deleteMany` of the
 * folders `{ancestors: id}` and of their items and files; a copy reads the source subtree once and `insertMany`s (as
 * guarded upserts) its copies, with ids `deriveId(opId, sourceId)` as in the SQLite adapter, so a replay or rebuild
 * produces the same ids. Each operation writes the folder it is about last (see writes.ts).
 *
 * `rm_subtree_ops` is the history index: one document per (folder, position, operation), `_id` built from those
 * three, so recording a row again changes nothing (the SQLite adapter's INSERT OR IGNORE).
 */

const under = (folderId: string): Filter<StoredDoc> => ({ ancestors: folderId });

function historyRow(
  folderId: string,
  position: bigint,
  operation: SubtreeOperation,
  rootId: string,
  stamp: string,
): StoredDoc {
  return {
    _id: `${folderId}|${position}|${operation}`,
    folderId,
    position: position.toString(),
    stamp,
    operation,
    rootId,
  };
}

/** The id of a copied document's copy: every id the copy reaches is in `copies` (the copy is decided first). */
function copyOf(copies: Map<string, string>, id: string): string {
  const copy = copies.get(id);
  if (copy === undefined) throw new Error(`${id} is not part of the copy.`);
  return copy;
}

/** Records history rows (positions stamped with their 20-digit form so that they sort in log order). */
function recordHistory(
  w: WriteScope,
  folderIds: string[],
  position: bigint,
  operation: SubtreeOperation,
  rootId: string,
): void {
  const stamp = position.toString().padStart(20, '0');
  for (const id of folderIds) w.put('subtreeOps', historyRow(id, position, operation, rootId, stamp));
}

/**
 * Removes a folder's subtree (with `keepRoot`, only what is under it: its items and descendants), the root user's or
 * collection's size adjusted, and records `deleted` (and `cleared`) history rows when `history` is given. Returns
 * false when the folder is not in the read model.
 */
export async function removeSubtree(
  w: WriteScope,
  folderId: string,
  keepRoot: boolean,
  history?: { position: bigint; rootId: string },
): Promise<boolean> {
  const folder = await w.findOne(
    'folders',
    { _id: folderId },
    { projection: { _rev: 1, baseParentType: 1, baseParentId: 1, size: 1, ...CLASS_FIELDS } },
  );
  if (!folder) return false;
  if (w.wroteAlready(folder)) return true;
  const descendants = await w.find('folders', under(folderId), { projection: { size: 1 } });
  const rootSize = folder.size as number;
  const folderIds = [folderId, ...descendants.map((d) => d._id)];
  const total = descendants.reduce((sum, d) => sum + (d.size as number), rootSize);
  addRootSize(w, folder.baseParentType as RootType, folder.baseParentId as string, -total);
  if (history) {
    recordHistory(
      w,
      descendants.map((d) => d._id),
      history.position,
      'deleted',
      history.rootId,
    );
    recordHistory(w, [folderId], history.position, keepRoot ? 'cleared' : 'deleted', history.rootId);
  }
  const itemIds = (await w.find('items', { folderId: { $in: folderIds } }, { projection: { _id: 1 } })).map(
    (d) => d._id,
  );
  if (itemIds.length) {
    w.remove('files', { itemId: { $in: itemIds } }, true);
    w.remove('items', { _id: { $in: itemIds } }, true);
  }
  closePlacement(w, { folderId: { $in: keepRoot ? folderIds.slice(1) : folderIds } });
  // History: each removed folder's size drops to 0 (a restore adds it back), as does an emptied folder's.
  recordSizeChange(w, folderId, -rootSize);
  for (const d of descendants) recordSizeChange(w, d._id, -(d.size as number));
  // Child counts: the removed folders' own go with them (an emptied folder has no children left either).
  removeCountersOf(w, folderIds);
  if (!keepRoot) new ChildCountChanges().addFolder(folder, -1).write(w);
  w.remove('folders', under(folderId), true);
  // The folder itself last: once it is gone (or emptied), the whole operation was applied.
  if (keepRoot) w.update('folders', { _id: folderId }, { $set: { size: 0 } });
  else w.remove('folders', { _id: folderId });
  return true;
}

async function copyFolder(w: WriteScope, c: FolderCopyWrite, position: bigint): Promise<void> {
  const existing = await w.findOne('folders', { _id: c.folderId }, { projection: { _rev: 1 } });
  if (existing) {
    if (w.wroteAlready(existing)) return;
    throw new Error(`Projection: folder ${c.folderId} already exists.`);
  }
  const source = await w.findOne('folders', { _id: c.sourceId }, { projection: { size: 1, ancestors: 1 } });
  const base = await baseOf(w, c.parentType, c.parentId);
  // The projection copies only while both are there (src/projections/lateEvents.ts).
  if (!source || !base)
    throw new Error(
      `Projection: the source ${c.sourceId} or the destination ${c.parentId} of a copy is not in the read model.`,
    );

  // 1. What is copied, decided from the source subtree as it stands (never from the copy, should it land inside
  //    its source): the source, and each descendant the copier may READ whose path below the source is all readable.
  const notCopy: Filter<StoredDoc> = { ancestors: { $ne: c.folderId } };
  let copied: Filter<StoredDoc> = and(under(c.sourceId), notCopy);
  if (!c.copier.admin) {
    const denied = (
      await w.find('folders', and(under(c.sourceId), notCopy, { $nor: [readableFilter(c.copier)] }), {
        projection: { _id: 1 },
      })
    ).map((d) => d._id);
    if (denied.length) copied = and(copied, { _id: { $nin: denied } }, { ancestors: { $nin: denied } });
  }
  const folders = await w.find('folders', copied, { projection: { _rev: 0 } });
  const map = new Map<string, string>([
    [c.sourceId, c.folderId],
    ...folders.map((f): [string, string] => [f._id, deriveId(c.opId, f._id)]),
  ]);
  const sourceDepth = (source.ancestors as string[]).length;

  // 2. Folders: descendants inherit from their new parent as on creation (public, or false; its ACL), and keep their
  //    source's name, description, metadata, publicFlags and size (all items are copied).
  const inherited = c.public ?? false;
  const placed: Parameters<typeof openPlacement>[1] = [];
  const copies: StoredDoc[] = [];
  for (const f of folders) {
    const inside = (f.ancestors as string[]).slice(sourceDepth).map((id) => copyOf(map, id));
    copies.push(
      defined({
        _id: copyOf(map, f._id),
        name: f.name as string,
        lowerName: f.lowerName as string,
        description: f.description as string,
        creatorId: c.creatorId,
        created: c.created,
        updated: c.created,
        size: f.size as number,
        public: inherited,
        publicFlags: f.publicFlags as string[] | undefined,
        access: c.access,
        meta: (f.meta as Record<string, unknown> | undefined) ?? {},
        parentCollection: 'folder',
        parentId: copyOf(map, f.parentId as string),
        baseParentType: base.type,
        baseParentId: base.id,
        ancestors: [...base.ancestors, ...inside],
      }),
    );
  }
  for (const copy of copies) {
    placed.push({
      _id: copy._id,
      parentCollection: 'folder',
      parentId: copy.parentId as string,
      baseParentType: base.type,
      baseParentId: base.id,
    });
    recordSizeChange(w, copy._id, copy.size as number);
    w.put('folders', copy);
  }

  // 3. Items and files: every item of every copied folder; each file references the same blob (no bytes copied).
  const items = await w.find('items', { folderId: { $in: [...map.keys()] } }, { projection: { _rev: 0 } });
  for (const item of items) {
    w.put('items', {
      ...item,
      _id: deriveId(c.opId, item._id),
      folderId: copyOf(map, item.folderId as string),
      baseParentType: base.type,
      baseParentId: base.id,
      creatorId: c.creatorId,
      created: c.created,
      updated: c.created,
      copyOfItem: item._id,
    });
  }
  if (items.length) {
    const itemMap = new Map(items.map((i) => [i._id, deriveId(c.opId, i._id)]));
    const files = await w.find('files', { itemId: { $in: [...itemMap.keys()] } }, { projection: { _rev: 0 } });
    for (const file of files) {
      w.put('files', {
        ...file,
        _id: deriveId(c.opId, file._id),
        itemId: copyOf(itemMap, file.itemId as string),
        copyOfFile: file._id,
        copierId: c.creatorId,
        copied: c.created,
      });
    }
  }

  // 4. Sizes: each copy has its source's size; the root gains the copy's recursive size.
  const sourceSize = source.size as number;
  const total = folders.reduce<number>((sum, f) => sum + (f.size as number), sourceSize);
  addRootSize(w, base.type, base.id, total);

  // 5. History index, then the new root folder last.
  recordHistory(w, [...map.values()], position, 'copied', c.folderId);
  recordHistory(w, [...map.keys()], position, 'copiedFrom', c.folderId);
  openPlacement(w, [
    ...placed,
    {
      _id: c.folderId,
      parentCollection: c.parentType,
      parentId: c.parentId,
      baseParentType: base.type,
      baseParentId: base.id,
    },
  ]);
  recordSizeChange(w, c.folderId, sourceSize);
  const root = defined({
    _id: c.folderId,
    name: c.name,
    lowerName: c.name.toLowerCase(),
    description: c.description,
    creatorId: c.creatorId,
    created: c.created,
    updated: c.created,
    size: source.size as number,
    public: c.public,
    publicFlags: c.publicFlags,
    access: c.access,
    meta: c.meta,
    parentCollection: c.parentType,
    parentId: c.parentId,
    baseParentType: base.type,
    baseParentId: base.id,
    ancestors: base.ancestors,
  });
  const counts = new ChildCountChanges().addFolder(root, 1);
  for (const copy of copies) counts.addFolder(copy, 1);
  counts.write(w);
  w.put('folders', root);
}

/**
 * Removes every folder rooted under a user or collection that is going away, with their items and files, the root's
 * size adjusted and `deleted` history rows (root `rootId`) recorded; the root's own document is the caller's.
 */
async function deleteUnderRoot(w: WriteScope, rootType: RootType, rootId: string, position: bigint): Promise<void> {
  const folders = await w.find(
    'folders',
    { baseParentId: rootId, baseParentType: rootType },
    { projection: { size: 1 } },
  );
  if (folders.length === 0) return;
  const ids = folders.map((f) => f._id);
  addRootSize(w, rootType, rootId, -folders.reduce((sum, f) => sum + (f.size as number), 0));
  recordHistory(w, ids, position, 'deleted', rootId);
  for (const f of folders) recordSizeChange(w, f._id, -(f.size as number));
  closePlacement(w, { folderId: { $in: ids } });
  const itemIds = (await w.find('items', { folderId: { $in: ids } }, { projection: { _id: 1 } })).map((d) => d._id);
  if (itemIds.length) {
    w.remove('files', { itemId: { $in: itemIds } }, true);
    w.remove('items', { _id: { $in: itemIds } }, true);
  }
  removeCountersOf(w, ids);
  w.remove('childCounts', { parentType: rootType, parentId: rootId }, true);
  w.remove('folders', { _id: { $in: ids } }, true);
}

export class MongoSubtree implements SubtreeQueries {
  constructor(private readonly source: ReadSource) {}

  private async subtreeFolderIds(folderId: string): Promise<string[] | null> {
    const folders = await this.source.get('folders');
    if (!(await folders.findOne({ _id: folderId }, { projection: { _id: 1 } }))) return null;
    const below = await folders.find(under(folderId), { projection: { _id: 1 } }).toArray();
    return [folderId, ...below.map((d) => d._id)];
  }

  async subtreeCount(folderId: string): Promise<number> {
    const ids = await this.subtreeFolderIds(folderId);
    if (!ids) return 0;
    return (
      ids.length + (await countIn(await this.source.get('items'), { folderId: { $in: ids } }, this.source.inBudget))
    );
  }

  async blobIdsInSubtree(folderId: string): Promise<string[]> {
    const ids = await this.subtreeFolderIds(folderId);
    if (!ids) return [];
    const { inBudget } = this.source;
    const itemIds = (
      await findIn(await this.source.get('items'), { folderId: { $in: ids } }, { projection: { _id: 1 } }, inBudget)
    ).map((d) => d._id);
    if (!itemIds.length) return [];
    return distinctIn(await this.source.get('files'), { itemId: { $in: itemIds } }, 'blobId', inBudget);
  }

  async subtreeOpsFor(folderId: string): Promise<SubtreeOp[]> {
    const rows = await (
      await this.source.get('subtreeOps')
    )
      .find({ folderId }, { sort: { stamp: 1, operation: 1 } })
      .toArray();
    return rows.map((r) => ({
      folderId: r.folderId as string,
      position: BigInt(r.position as string),
      operation: r.operation as SubtreeOperation,
      rootId: r.rootId as string,
    }));
  }
}

export function subtreeWrites(log: OperationLog): SubtreeWrites {
  return {
    deleteFolder(folderId, position) {
      log.recordWide({ folders: [folderId] }, async (w) => {
        await removeSubtree(w, folderId, false, { position, rootId: folderId });
      });
    },
    clearContents(folderId, position) {
      log.recordWide({ folders: [folderId] }, async (w) => {
        await removeSubtree(w, folderId, true, { position, rootId: folderId });
      });
    },
    deleteUnderRoot(rootType, rootId, position) {
      log.recordWide({ roots: [rootId] }, (w) => deleteUnderRoot(w, rootType, rootId, position));
    },
    copyFolder(copy, position) {
      // The copy writes as much again as its source holds.
      log.recordWide({ folders: [copy.sourceId] }, (w) => copyFolder(w, copy, position));
    },
    recordOps(folderIds, position, operation, rootId) {
      log.record(async (w) => recordHistory(w, folderIds, position, operation, rootId));
    },
  };
}
