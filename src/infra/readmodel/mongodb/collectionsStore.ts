import type { CollectionDoc, CollectionQueries, CollectionWrites, Page } from '../../../ports/readModel';
import type { Viewer } from '../../../domain/access';
import type { ReadSource } from './generations';
import type { OperationLog } from './writes';
import { and, defined, hidden, readableFilter, setFields, sortOf, textSearch, windowOf } from './queryHelpers';
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

  /** Collections the viewer may READ (the permission filter is part of the query), optionally by `$text`. */
  async list({
    viewer,
    text,
    paging,
  }: {
    viewer: Viewer | null;
    text?: string;
    paging: Paging;
  }): Promise<Page<CollectionDoc>> {
    let search: string | null = null;
    if (text !== undefined) {
      search = textSearch(text);
      if (search === null) return { rows: [], total: 0 };
    }
    const filter = and(readableFilter(viewer), search !== null ? { $text: { $search: search } } : {});
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
