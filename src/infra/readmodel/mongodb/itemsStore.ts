import type { Document, Filter } from 'mongodb';
import type {
  FileDoc,
  FileQueries,
  FileWrites,
  ItemDoc,
  ItemListing,
  ItemQueries,
  ItemWrites,
  Page,
  PositionIn,
  PrefixSearch,
} from '../../../ports/readModel';
import type { Level, Viewer } from '../../../domain/access';
import type { ReadSource } from './generations';
import { distinctIn, findIn } from './boundedIn';
import type { OperationLog, WriteScope } from './writes';
import { physicalName, type StoredDoc } from './mongoCollections';
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
import { addFolderSize, addRootSize, moveSize } from './sizes';
import { notStored } from '../notStored';
import type { Paging } from '../../../domain/paging';
import type { AssetstoreRefs } from '../../../domain/assetstoreBlobRef';
import type { RootType } from '../../../domain/parents';

/**
 * Items and files, shaped like Girder's documents. An item has no ACL of its own: its folder's applies, so the item
 * search joins the folder (`$lookup`) and filters on its ACL inside the pipeline. Sizes are maintained here: a
 * file's size is added to its item, the item's folder and the item's root user or collection.
 */
const OUT = hidden();

/**
 * The files of one assetstore: references in the range from `prefix` to the next character after its `:` (the blob
 * index serves it), and for the default store the bare references too (no `:`).
 */
function inAssetstoreFilter(refs: AssetstoreRefs): Filter<StoredDoc> {
  const range: Filter<StoredDoc> = { blobId: { $gte: refs.prefix, $lt: `${refs.prefix.slice(0, -1)};` } };
  return refs.bare ? { $or: [range, { blobId: { $not: /:/ } }] } : range;
}

/** A folder's item listing, with the name or text asked for; null when the text matches nothing. */
function inFolderFilter(o: { folderId: string; name?: string; text?: string }): Filter<StoredDoc> | null {
  let search: string | null = null;
  if (o.text !== undefined) {
    search = textSearch(o.text);
    if (search === null) return null;
  }
  return and(
    { folderId: o.folderId },
    o.name !== undefined ? { name: o.name } : {},
    search !== null ? { $text: { $search: search } } : {},
  );
}

export class MongoItems implements ItemQueries {
  constructor(
    private readonly source: ReadSource,
    private readonly generation: () => Promise<number>,
  ) {}

  async get(id: string) {
    return (await (await this.source.get('items')).findOne({ _id: id }, { projection: OUT })) as ItemDoc | null;
  }

  async listInFolder(o: { folderId: string; name?: string; text?: string; paging: Paging }): Promise<Page<ItemDoc>> {
    const filter = inFolderFilter(o);
    if (filter === null) return { rows: [], total: 0 };
    const items = await this.source.get('items');
    const [rows, total] = await Promise.all([
      items.find(filter, { projection: OUT, sort: sortOf(o.paging), ...windowOf(o.paging) }).toArray(),
      items.countDocuments(filter),
    ]);
    return { rows: rows as unknown as ItemDoc[], total };
  }

  async positionInFolder(o: PositionIn<ItemListing>): Promise<number> {
    const filter = inFolderFilter(o);
    if (filter === null) return 0;
    const items = await this.source.get('items');
    return items.countDocuments(and(filter, await beforeFilter(items, o.paging, o.id)));
  }

  async namedInFolder(folderId: string, name: string, except?: string): Promise<string | null> {
    const items = await this.source.get('items');
    const doc = await items.findOne(itemNamedFilter(folderId, name, except), {
      projection: { _id: 1 },
      sort: { _id: 1 },
    });
    return doc?._id ?? null;
  }

  /**
   * `$text` over items, then their folder joined and its READ permission checked: the page and the total as two
   * pipelines over the same matches, run together. One `$facet` would return both in one document, which passes
   * MongoDB's 16 MiB document limit once a page (`limit=0`: every match) is large; the page's documents come one by
   * one instead. Between the two reads a write may land, so the total can differ from the page by that write.
   */
  async positionInSearch(o: { text: string; viewer: Viewer | null; paging: Paging; id: string }): Promise<number> {
    const search = textSearch(o.text);
    if (search === null) return 0;
    const items = await this.source.get('items');
    const before = await beforeFilter(items, o.paging, o.id);
    const readable = await this.readableMatches({ $text: { $search: search } }, o.viewer);
    const counted = await items.aggregate([...readable, { $match: before }, { $count: 'n' }]).toArray();
    return (counted.at(0)?.n as number | undefined) ?? 0;
  }

  /**
   * The pipeline of a search: the items `matching` whose folder the viewer holds `level` on (READ when not given; the
   * folder as `_folder`).
   */
  private async readableMatches(
    matching: Filter<StoredDoc>,
    viewer: Viewer | null,
    level?: Level,
  ): Promise<Document[]> {
    const generation = await this.generation();
    return [
      { $match: matching },
      {
        $lookup: {
          from: physicalName('folders', generation),
          localField: 'folderId',
          foreignField: '_id',
          as: '_folder',
        },
      },
      { $unwind: '$_folder' },
      { $match: readableFilter(viewer, level, '_folder.') },
    ];
  }

  async search(o: { text: string; viewer: Viewer | null; level?: Level; paging: Paging }): Promise<Page<ItemDoc>> {
    const search = textSearch(o.text);
    if (search === null) return { rows: [], total: 0 };
    return this.pageOf(await this.readableMatches({ $text: { $search: search } }, o.viewer, o.level), o.paging);
  }

  async prefixSearch(o: PrefixSearch): Promise<Page<ItemDoc>> {
    return this.pageOf(await this.readableMatches(namePrefixFilter(o.prefix), o.viewer, o.level), o.paging);
  }

  /**
   * A page of a search pipeline and its total: two pipelines over the same matches, run together (see
   * {@link positionInSearch}).
   */
  private async pageOf(readable: Document[], paging: Paging): Promise<Page<ItemDoc>> {
    const items = await this.source.get('items');
    const window = windowOf(paging);
    const [rows, counted] = await Promise.all([
      items
        .aggregate([
          ...readable,
          { $sort: sortOf(paging) },
          ...(window.skip ? [{ $skip: window.skip }] : []),
          ...(window.limit ? [{ $limit: window.limit }] : []),
          { $project: { ...OUT, _folder: 0 } },
        ])
        .toArray(),
      items.aggregate([...readable, { $count: 'n' }]).toArray(),
    ]);
    const total = (counted.at(0)?.n as number | undefined) ?? 0;
    return { rows: rows as unknown as ItemDoc[], total };
  }

  async countInFolder(folderId: string) {
    return (await this.source.get('items')).countDocuments({ folderId });
  }
}

export class MongoFiles implements FileQueries {
  constructor(
    private readonly source: ReadSource,
    private readonly generation: () => Promise<number>,
  ) {}

  async get(id: string) {
    return (await (await this.source.get('files')).findOne({ _id: id }, { projection: OUT })) as FileDoc | null;
  }

  async listForItem(itemId: string, paging: Paging): Promise<Page<FileDoc>> {
    const files = await this.source.get('files');
    const [rows, total] = await Promise.all([
      files.find({ itemId }, { projection: OUT, sort: sortOf(paging), ...windowOf(paging) }).toArray(),
      files.countDocuments({ itemId }),
    ]);
    return { rows: rows as unknown as FileDoc[], total };
  }

  async listInAssetstore(refs: AssetstoreRefs, paging: Paging): Promise<Page<FileDoc>> {
    const files = await this.source.get('files');
    const filter = inAssetstoreFilter(refs);
    const [rows, total] = await Promise.all([
      files.find(filter, { projection: OUT, sort: sortOf(paging), ...windowOf(paging) }).toArray(),
      files.countDocuments(filter),
    ]);
    return { rows: rows as unknown as FileDoc[], total };
  }

  async anyInAssetstore(refs: AssetstoreRefs) {
    const files = await this.source.get('files');
    return (await files.findOne(inAssetstoreFilter(refs), { projection: { _id: 1 } })) !== null;
  }

  async isBlobReferenced(blobId: string) {
    return (await (await this.source.get('files')).findOne({ blobId }, { projection: { _id: 1 } })) !== null;
  }

  async blobIdsInFolders(folderIds: string[]) {
    return this.blobIdsOfItems({ folderId: { $in: folderIds } });
  }

  async blobIdsUnderRoot(rootId: string) {
    return this.blobIdsOfItems({ baseParentId: rootId });
  }

  /** By the `sha512` index, then each file's item and its folder joined and the folder's READ checked, in one pipeline. */
  async withSha512(sha512: string, viewer: Viewer | null, limit?: number): Promise<FileDoc[]> {
    const generation = await this.generation();
    const rows = await (
      await this.source.get('files')
    )
      .aggregate([
        { $match: { sha512 } },
        { $sort: { _id: 1 } },
        {
          $lookup: { from: physicalName('items', generation), localField: 'itemId', foreignField: '_id', as: '_item' },
        },
        { $unwind: '$_item' },
        {
          $lookup: {
            from: physicalName('folders', generation),
            localField: '_item.folderId',
            foreignField: '_id',
            as: '_folder',
          },
        },
        { $unwind: '$_folder' },
        { $match: readableFilter(viewer, 0, '_folder.') },
        ...(limit !== undefined ? [{ $limit: limit }] : []),
        { $project: { ...OUT, _item: 0, _folder: 0 } },
      ])
      .toArray();
    return rows as unknown as FileDoc[];
  }

  private async blobIdsOfItems(itemFilter: Filter<StoredDoc>): Promise<string[]> {
    const { inBudget } = this.source;
    const itemIds = (
      await findIn(await this.source.get('items'), itemFilter, { projection: { _id: 1 } }, inBudget)
    ).map((d) => d._id);
    if (itemIds.length === 0) return [];
    return distinctIn(await this.source.get('files'), { itemId: { $in: itemIds } }, 'blobId', inBudget);
  }
}

interface ItemPosition {
  _id: string;
  _rev?: string;
  folderId: string;
  baseParentType: RootType;
  baseParentId: string;
  size: number;
}

const POSITION = { projection: { _rev: 1, folderId: 1, baseParentType: 1, baseParentId: 1, size: 1 } };

async function itemPosition(w: WriteScope, id: string): Promise<ItemPosition | null> {
  return (await w.findOne('items', { _id: id }, POSITION)) as ItemPosition | null;
}

/** The root of the folder an item `of` goes to (the projection guards the write on the folder: lateEvents.ts). */
async function folderBase(w: WriteScope, folderId: string, of: string): Promise<{ type: RootType; id: string }> {
  const folder = await w.findOne('folders', { _id: folderId }, { projection: { baseParentType: 1, baseParentId: 1 } });
  if (!folder) throw notStored('folder', folderId, of);
  return { type: folder.baseParentType as RootType, id: folder.baseParentId as string };
}

/** Deletes the given items with their files; their sizes leave their folders and roots (one write per container). */
function deleteItems(w: WriteScope, items: ItemPosition[]): void {
  const folders = new Map<string, number>();
  const roots = new Map<string, { type: RootType; id: string; size: number }>();
  for (const item of items) {
    folders.set(item.folderId, (folders.get(item.folderId) ?? 0) + item.size);
    const key = `${item.baseParentType}:${item.baseParentId}`;
    const root = roots.get(key) ?? { type: item.baseParentType, id: item.baseParentId, size: 0 };
    root.size += item.size;
    roots.set(key, root);
  }
  for (const [folderId, size] of folders) addFolderSize(w, folderId, -size);
  for (const root of roots.values()) addRootSize(w, root.type, root.id, -root.size);
  const ids = items.map((i) => i._id);
  w.remove('files', { itemId: { $in: ids } }, true);
  // The items last: a replay after an interruption finds the ones not deleted yet, with their sizes still counted.
  w.remove('items', { _id: { $in: ids } }, true);
}

export function itemWrites(log: OperationLog): ItemWrites {
  return {
    insert(doc) {
      const fields = defined(doc);
      log.record(async (w) => {
        const base = await folderBase(w, doc.folderId, doc._id);
        w.put('items', {
          ...fields,
          lowerName: doc.name.toLowerCase(),
          baseParentType: base.type,
          baseParentId: base.id,
          size: 0,
        });
      });
    },

    update(id, fields) {
      const changes: Record<string, unknown> = { ...fields };
      if (typeof fields.name === 'string') changes.lowerName = fields.name.toLowerCase();
      const update = setFields(changes);
      if (Object.keys(update).length) log.record(async (w) => w.update('items', { _id: id }, update));
    },

    move(id, folderId, name, updated) {
      log.record(async (w) => {
        const item = await itemPosition(w, id);
        // The projection guards the write on the item (src/projections/lateEvents.ts).
        if (!item) throw notStored('item', id, id);
        if (w.wroteAlready(item)) return;
        const target = await folderBase(w, folderId, id);
        moveSize(
          w,
          { folderId: item.folderId, rootType: item.baseParentType, rootId: item.baseParentId },
          { folderId, rootType: target.type, rootId: target.id },
          item.size,
        );
        w.update(
          'items',
          { _id: id },
          {
            $set: {
              folderId,
              baseParentType: target.type,
              baseParentId: target.id,
              name,
              lowerName: name.toLowerCase(),
              updated,
            },
          },
        );
      });
    },

    delete(id) {
      log.record(async (w) => {
        const item = await itemPosition(w, id);
        if (item) deleteItems(w, [item]);
      });
    },

    deleteInFolder(folderId) {
      log.record(async (w) => {
        const items = (await w.find('items', { folderId }, POSITION)) as unknown as ItemPosition[];
        if (items.length) deleteItems(w, items);
      });
    },

    deleteUnderRoot(rootId) {
      log.record(async (w) => {
        const ids = (await w.find('items', { baseParentId: rootId }, { projection: { _id: 1 } })).map((d) => d._id);
        if (ids.length === 0) return;
        w.remove('files', { itemId: { $in: ids } }, true);
        w.remove('items', { _id: { $in: ids } }, true);
      });
    },

    addSize(id, delta) {
      if (delta === 0) return;
      log.record(async (w) => {
        const item = await itemPosition(w, id);
        if (!item || w.wroteAlready(item)) return;
        addFolderSize(w, item.folderId, delta);
        addRootSize(w, item.baseParentType, item.baseParentId, delta);
        w.increment('items', id, 'size', delta);
      });
    },
  };
}

export function fileWrites(log: OperationLog): FileWrites {
  return {
    insert(doc) {
      const stored = defined(doc);
      log.record(async (w) => w.put('files', stored));
    },

    update(id, fields) {
      const changes: Record<string, unknown> = { ...fields };
      if (typeof fields.name === 'string')
        changes.exts = fields.name
          .split('.')
          .slice(1)
          .map((e) => e.toLowerCase());
      const update = setFields(changes);
      if (Object.keys(update).length) log.record(async (w) => w.update('files', { _id: id }, update));
    },

    delete(id) {
      log.record(async (w) => w.remove('files', { _id: id }));
    },
  };
}
