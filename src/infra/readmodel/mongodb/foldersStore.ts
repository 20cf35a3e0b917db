import type { StoredDoc } from './mongoCollections';
import type { Filter } from 'mongodb';
import type {
  FolderDoc,
  FolderListing,
  FolderQueries,
  FolderWrites,
  Page,
  PositionIn,
  PrefixSearch,
} from '../../../ports/readModel';
import type { Level, Viewer } from '../../../domain/access';
import type { ReadSource } from './generations';
import { findIn } from './boundedIn';
import type { OperationLog, WriteScope } from './writes';
import {
  and,
  beforeFilter,
  defined,
  hidden,
  itemNamedFilter,
  namePrefixFilter,
  readableFilter,
  setFields,
  sortOf,
  textSearch,
  windowOf,
} from './queryHelpers';
import { addFolderSize, addRootSize, recordSizeChange } from './sizes';
import { removeSubtree } from './subtreeStore';
import { notStored } from '../notStored';
import { CLASS_FIELDS, ChildCountChanges, childCount, removeCountersOf } from './childCounts';
import { closePlacement, openPlacement } from './historyStore';
import type { Paging } from '../../../domain/paging';
import type { ParentType, RootType } from '../../../domain/parents';

/**
 * Folders, shaped like Girder's folder documents: `ancestors` lists the ids of the folders above, root-most first,
 * so a subtree is `{ancestors: id}` (one indexed query) and a move rewrites the subtree with one pipeline update.
 * `ancestors` is kept out of the documents the port returns (FolderDoc does not carry it).
 */
const OUT = hidden('ancestors');

/** Folder ids under `folderId` (not itself). */
const under = (folderId: string): Filter<StoredDoc> => ({ ancestors: folderId });
/** The folder and everything under it. */
const subtree = (folderId: string): Filter<StoredDoc> => ({ $or: [{ _id: folderId }, { ancestors: folderId }] });

export class MongoFolders implements FolderQueries {
  /** Counter collections known to be complete (childCounts.ts). */
  private readonly countedGenerations = new Set<string>();

  constructor(private readonly source: ReadSource) {}

  private folders() {
    return this.source.get('folders');
  }

  async get(id: string) {
    return (await (await this.folders()).findOne({ _id: id }, { projection: OUT })) as FolderDoc | null;
  }

  async getMany(ids: string[]) {
    const rows = (await findIn(
      await this.folders(),
      { _id: { $in: ids } },
      { projection: OUT },
      this.source.inBudget,
    )) as unknown as FolderDoc[];
    const byId = new Map(rows.map((r) => [r._id, r]));
    return ids.map((id) => byId.get(id)).filter((d): d is FolderDoc => d !== undefined);
  }

  async listChildren(o: {
    parentType: ParentType;
    parentId: string;
    viewer: Viewer | null;
    name?: string;
    text?: string;
    paging: Paging;
  }) {
    const filter = childFilter(o);
    if (filter === null) return { rows: [], total: 0 };
    // A plain listing's total comes from the maintained counters (childCounts.ts), not from counting the siblings.
    const maintained = o.name === undefined && o.text === undefined ? this.maintainedCount(o) : null;
    return this.page(filter, o.paging, maintained);
  }

  async positionInChildren(o: PositionIn<FolderListing>): Promise<number> {
    const filter = childFilter(o);
    if (filter === null) return 0;
    const folders = await this.folders();
    return folders.countDocuments(and(filter, await beforeFilter(folders, o.paging, o.id)));
  }

  /** The children the viewer reads, from the counters; null when this generation keeps none. */
  private async maintainedCount(o: { parentType: ParentType; parentId: string; viewer: Viewer | null }) {
    const counters = await this.source.get('childCounts');
    return childCount(counters, this.countedGenerations, o.parentType, o.parentId, o.viewer);
  }

  async positionInSearch(o: { text: string; viewer: Viewer | null; paging: Paging; id: string }): Promise<number> {
    const search = textSearch(o.text);
    if (search === null) return 0;
    const folders = await this.folders();
    const before = await beforeFilter(folders, o.paging, o.id);
    return folders.countDocuments(and({ $text: { $search: search } }, readableFilter(o.viewer), before));
  }

  async search(o: {
    text: string;
    viewer: Viewer | null;
    level?: Level;
    paging: Paging;
  }): Promise<Page<FolderDoc & { _textScore: number }>> {
    const search = textSearch(o.text);
    if (search === null) return { rows: [], total: 0 };
    const filter = and({ $text: { $search: search } }, readableFilter(o.viewer, o.level));
    const folders = await this.folders();
    const [rows, total] = await Promise.all([
      folders
        .find(filter, {
          projection: { ...OUT, _textScore: { $meta: 'textScore' } },
          sort: sortOf(o.paging),
          ...windowOf(o.paging),
        })
        .toArray(),
      folders.countDocuments(filter),
    ]);
    return { rows: rows as unknown as (FolderDoc & { _textScore: number })[], total };
  }

  async prefixSearch(o: PrefixSearch): Promise<Page<FolderDoc>> {
    const filter = and(namePrefixFilter(o.prefix), readableFilter(o.viewer, o.level));
    const folders = await this.folders();
    const [rows, total] = await Promise.all([
      folders.find(filter, { projection: OUT, sort: sortOf(o.paging), ...windowOf(o.paging) }).toArray(),
      folders.countDocuments(filter),
    ]);
    return { rows: rows as unknown as FolderDoc[], total };
  }

  async countChildren(o: { parentType: ParentType; parentId: string; viewer: Viewer | null }) {
    return (
      (await this.maintainedCount(o)) ??
      (await this.folders()).countDocuments(
        and({ parentId: o.parentId, parentCollection: o.parentType }, readableFilter(o.viewer)),
      )
    );
  }

  async childNamed(parentType: ParentType, parentId: string, name: string) {
    return (await (
      await this.folders()
    ).findOne({ parentId, parentCollection: parentType, name }, { projection: OUT })) as FolderDoc | null;
  }

  async siblingNamed(parentType: ParentType, parentId: string, name: string, exceptItemId?: string) {
    if (await this.childNamed(parentType, parentId, name)) return 'folder' as const;
    if (parentType !== 'folder') return null;
    const items = await this.source.get('items');
    return (await items.findOne(itemNamedFilter(parentId, name, exceptItemId), { projection: { _id: 1 } }))
      ? ('item' as const)
      : null;
  }

  async itemCount(folderId: string) {
    return (await this.source.get('items')).countDocuments({ folderId });
  }

  async ancestorIds(id: string) {
    const doc = await (await this.folders()).findOne({ _id: id }, { projection: { ancestors: 1 } });
    return (doc?.ancestors as string[] | undefined) ?? [];
  }

  async isSelfOrDescendant(folderId: string, candidateId: string) {
    if (folderId === candidateId) return true;
    return (await (await this.folders()).countDocuments({ _id: candidateId, ancestors: folderId }, { limit: 1 })) > 0;
  }

  async idsUnder(ancestorId: string, filter: { lacking?: { viewer: Viewer; level: Level }; outside?: string[] } = {}) {
    const clauses: Filter<StoredDoc>[] = [under(ancestorId)];
    if (filter.lacking) clauses.push({ $nor: [readableFilter(filter.lacking.viewer, filter.lacking.level)] });
    if (filter.outside?.length)
      clauses.push({ _id: { $nin: filter.outside } }, { ancestors: { $nin: filter.outside } });
    const rows = await (await this.folders()).find(and(...clauses), { projection: { _id: 1 } }).toArray();
    return rows.map((d) => d._id);
  }

  /** A page and the total of the filter: `maintained` when it knows it, else counted. */
  private async page(
    filter: Filter<StoredDoc>,
    paging: Paging,
    maintained: Promise<number | null> | null = null,
  ): Promise<Page<FolderDoc>> {
    const folders = await this.folders();
    const [rows, total] = await Promise.all([
      folders.find(filter, { projection: OUT, sort: sortOf(paging), ...windowOf(paging) }).toArray(),
      (async () => (await maintained) ?? folders.countDocuments(filter))(),
    ]);
    return { rows: rows as unknown as FolderDoc[], total };
  }
}

/** A parent's listing: its children the viewer may read, with the name or text asked for; null when text matches none. */
function childFilter(o: {
  parentType: ParentType;
  parentId: string;
  viewer: Viewer | null;
  name?: string;
  text?: string;
}): Filter<StoredDoc> | null {
  let search: string | null = null;
  if (o.text !== undefined) {
    search = textSearch(o.text);
    if (search === null) return null;
  }
  return and(
    { parentId: o.parentId, parentCollection: o.parentType },
    o.name !== undefined ? { name: o.name } : {},
    readableFilter(o.viewer),
    search !== null ? { $text: { $search: search } } : {},
  );
}

interface Position {
  ancestors: string[];
  baseParentType: RootType;
  baseParentId: string;
}

/**
 * Where a folder `id` under `parentType/parentId` sits: its ancestry and base parent, read from the parent as stored
 * (the projection guards the write on the parent: src/projections/lateEvents.ts).
 */
async function positionUnder(w: WriteScope, id: string, parentType: ParentType, parentId: string): Promise<Position> {
  if (parentType !== 'folder') return { ancestors: [], baseParentType: parentType, baseParentId: parentId };
  const parent = await w.findOne(
    'folders',
    { _id: parentId },
    { projection: { ancestors: 1, baseParentType: 1, baseParentId: 1 } },
  );
  if (!parent) throw notStored('parent folder', parentId, id);
  return {
    ancestors: [...(parent.ancestors as string[]), parentId],
    baseParentType: parent.baseParentType as RootType,
    baseParentId: parent.baseParentId as string,
  };
}

export function folderWrites(log: OperationLog): FolderWrites {
  return {
    insert(doc) {
      const fields = defined(doc);
      log.record(async (w) => {
        const position = await positionUnder(w, doc._id, doc.parentCollection, doc.parentId);
        const stored = { ...fields, lowerName: doc.name.toLowerCase(), ...position };
        openPlacement(w, [stored]);
        recordSizeChange(w, doc._id, doc.size);
        new ChildCountChanges().addFolder(stored, 1).write(w);
        w.put('folders', stored);
      });
    },

    update(id, fields) {
      const { _id, ...rest } = fields as Partial<FolderDoc>;
      const changes: Record<string, unknown> = { ...rest };
      if (typeof rest.name === 'string') changes.lowerName = rest.name.toLowerCase();
      const update = setFields(changes);
      if (!Object.keys(update).length) return;
      const classMayChange = 'access' in rest || 'public' in rest;
      log.record(async (w) => {
        if (classMayChange) {
          // Read first: a replay that finds the change already written moves no count (the classes are equal).
          const before = await w.findOne('folders', { _id: id }, { projection: CLASS_FIELDS });
          if (before)
            new ChildCountChanges()
              .addFolder(before, -1)
              .addFolder({ ...before, ...defined(rest) }, 1)
              .write(w);
        }
        w.update('folders', { _id: id }, update);
      });
    },

    move(id, parentType, parentId, updated) {
      log.recordWide({ folders: [id] }, async (w) => {
        const folder = await w.findOne(
          'folders',
          { _id: id },
          { projection: { _rev: 1, baseParentType: 1, baseParentId: 1, ...CLASS_FIELDS } },
        );
        // The projection guards the write on the folder and its new parent (src/projections/lateEvents.ts).
        if (!folder) throw notStored('folder', id, id);
        if (w.wroteAlready(folder)) return;
        const to = await positionUnder(w, id, parentType, parentId);
        const prefix = [...to.ancestors, id];
        // The subtree below: its ancestry becomes the new prefix plus what lies between the moved folder and it.
        w.update(
          'folders',
          under(id),
          [
            {
              $set: {
                ancestors: {
                  $concatArrays: [
                    prefix,
                    {
                      $slice: [
                        '$ancestors',
                        { $add: [{ $indexOfArray: ['$ancestors', id] }, 1] },
                        { $size: '$ancestors' },
                      ],
                    },
                  ],
                },
                baseParentType: to.baseParentType,
                baseParentId: to.baseParentId,
              },
            },
          ],
          true,
        );
        const from = { type: folder.baseParentType as RootType, id: folder.baseParentId as string };
        const below = await w.find('folders', under(id), { projection: { parentCollection: 1, parentId: 1 } });
        const ids = [id, ...below.map((d) => d._id)];
        // Items follow their folders' base parent; a change of root carries the subtree's recursive size along.
        w.update(
          'items',
          { folderId: { $in: ids } },
          { $set: { baseParentType: to.baseParentType, baseParentId: to.baseParentId } },
          true,
        );
        // History: the folder is placed anew, and so is every folder below when the root changes.
        const rootChanged = from.type !== to.baseParentType || from.id !== to.baseParentId;
        const base = { baseParentType: to.baseParentType, baseParentId: to.baseParentId };
        const placed: Parameters<typeof openPlacement>[1] = [];
        if (rootChanged || folder.parentCollection !== parentType || folder.parentId !== parentId) {
          placed.push({ _id: id, parentCollection: parentType, parentId, ...base });
        }
        if (rootChanged) {
          for (const d of below)
            placed.push({
              _id: d._id,
              parentCollection: d.parentCollection as ParentType,
              parentId: d.parentId as string,
              ...base,
            });
        }
        openPlacement(w, placed);
        if (rootChanged) {
          const sum = (
            await w.aggregate('folders', [{ $match: subtree(id) }, { $group: { _id: null, total: { $sum: '$size' } } }])
          ).at(0);
          const total = (sum?.total as number | undefined) ?? 0;
          addRootSize(w, from.type, from.id, -total);
          addRootSize(w, to.baseParentType, to.baseParentId, total);
        }
        if (folder.parentCollection !== parentType || folder.parentId !== parentId) {
          const arrived = { ...folder, parentCollection: parentType, parentId };
          new ChildCountChanges().addFolder(folder, -1).addFolder(arrived, 1).write(w);
        }
        // The moved folder itself last: once it is written, the whole move was (see writes.ts).
        w.update(
          'folders',
          { _id: id },
          {
            $set: {
              parentCollection: parentType,
              parentId,
              updated,
              ancestors: to.ancestors,
              baseParentType: to.baseParentType,
              baseParentId: to.baseParentId,
            },
          },
        );
      });
    },

    removeSubtree(id) {
      log.recordWide({ folders: [id] }, async (w) => {
        await removeSubtree(w, id, false);
      });
    },

    addSize(id, delta) {
      log.record(async (w) => addFolderSize(w, id, delta));
    },

    delete(id) {
      log.recordWide({ folders: [id] }, async (w) => {
        const doc = await w.findOne('folders', { _id: id }, { projection: CLASS_FIELDS });
        if (doc) new ChildCountChanges().addFolder(doc, -1).write(w);
        // As the SQLite adapter's closure rows: folders below forget the deleted folder as an ancestor.
        w.update('folders', under(id), { $pull: { ancestors: id } }, true);
        closePlacement(w, { folderId: id });
        w.remove('folders', { _id: id });
      });
    },

    deleteUnderRoot(rootId) {
      log.recordWide({ roots: [rootId] }, async (w) => {
        const gone = await w.find('folders', { baseParentId: rootId }, { projection: { _id: 1 } });
        removeCountersOf(
          w,
          gone.map((d) => d._id),
        );
        w.remove('childCounts', { parentType: { $ne: 'folder' }, parentId: rootId }, true);
        closePlacement(w, { baseParentId: rootId });
        w.remove('folders', { baseParentId: rootId }, true);
      });
    },

    setAccess(ids, change) {
      const set = defined({ access: change.access, public: change.public, publicFlags: change.publicFlags });
      log.recordWide({ documents: ids.length }, async (w) => {
        const rows = await w.find('folders', { _id: { $in: ids } }, { projection: { ancestors: 1, ...CLASS_FIELDS } });
        // The counts first, from the folders as they stand: on a replay after an interruption, a folder written
        // already moves no count (its class is the new one), and the counters written already are skipped.
        const counts = new ChildCountChanges();
        for (const row of rows) counts.addFolder(row, -1).addFolder({ ...row, ...set }, 1);
        counts.write(w);
        // Deepest first, the shallowest (the folder in the request) last: should the writes be interrupted, the
        // folders not yet written still see unchanged ACLs on every folder above them, so the replay's plan reaches
        // them again (src/projections/folderAccess.ts), and the history rows were recorded before (the projection).
        const byDepth = new Map<number, string[]>();
        for (const d of rows) {
          const depth = (d.ancestors as string[]).length;
          const same = byDepth.get(depth);
          if (same) same.push(d._id);
          else byDepth.set(depth, [d._id]);
        }
        for (const [, ids] of [...byDepth].sort(([a], [b]) => b - a)) {
          w.update('folders', { _id: { $in: ids } }, { $set: set }, true);
        }
      });
    },
  };
}
