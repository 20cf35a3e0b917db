import type { Filter } from 'mongodb';
import type { CollectionDoc, CollectionQueries, CollectionWrites, Page, PrefixSearch } from '../../../ports/readModel';
import type { Level, Viewer } from '../../../domain/access';
import type { ReadSource } from './generations';
import type { OperationLog } from './writes';
import type { StoredDoc } from './mongoCollections';
import {
  and,
  defined,
  hidden,
  namePrefixFilter,
  readableFilter,
  setFields,
  sortOf,
  textSearch,
  windowOf,
} from './queryHelpers';
import type { Paging } from '../../../domain/paging';

const OUT = hidden();

export class MongoCollections implements CollectionQueries {
  constructor(private readonly source: ReadSource) {}

  async get(id: string) {
    return (await (
      await this.source.get('collections')
    ).findOne({ _id: id }, { projection: OUT })) as CollectionDoc | null;
  }

  async getByName(name: string) {
    return (await (
      await this.source.get('collections')
    ).findOne({ name }, { projection: OUT })) as CollectionDoc | null;
  }

  /** Collections the viewer holds `level` on (the permission filter is part of the query), optionally by `$text`. */
  async list({
    viewer,
    text,
    level,
    paging,
  }: {
    viewer: Viewer | null;
    text?: string;
    level?: Level;
    paging: Paging;
  }): Promise<Page<CollectionDoc>> {
    let search: string | null = null;
    if (text !== undefined) {
      search = textSearch(text);
      if (search === null) return { rows: [], total: 0 };
    }
    return this.page(and(readableFilter(viewer, level), search !== null ? { $text: { $search: search } } : {}), paging);
  }

  async prefixSearch(o: PrefixSearch): Promise<Page<CollectionDoc>> {
    return this.page(and(namePrefixFilter(o.prefix), readableFilter(o.viewer, o.level)), o.paging);
  }

  private async page(filter: Filter<StoredDoc>, paging: Paging): Promise<Page<CollectionDoc>> {
    const collections = await this.source.get('collections');
    const [rows, total] = await Promise.all([
      collections.find(filter, { projection: OUT, sort: sortOf(paging), ...windowOf(paging) }).toArray(),
      collections.countDocuments(filter),
    ]);
    return { rows: rows as unknown as CollectionDoc[], total };
  }
}

export function collectionWrites(log: OperationLog): CollectionWrites {
  return {
    put(doc) {
      const stored = defined(doc);
      log.record(async (w) => w.put('collections', stored));
    },
    update(id, fields) {
      const { _id, ...rest } = fields as Partial<CollectionDoc>;
      const update = setFields(rest);
      if (Object.keys(update).length) log.record(async (w) => w.update('collections', { _id: id }, update));
    },
    delete(id) {
      log.record(async (w) => w.remove('collections', { _id: id }));
    },
    addSize(id, delta) {
      log.record(async (w) => w.increment('collections', id, 'size', delta));
    },
  };
}
