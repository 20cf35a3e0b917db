import type { CollectionDoc } from '../ports/readModel';
import type { Viewer } from '../domain/access';
import { RestError } from '../domain/errors';
import type { Paging } from '../domain/paging';
import { collectionView } from './views';
import type { ReadModelDeps } from './readDeps';

/** Read-side functions of the collection routes (src/http/resources/collection*.ts). */
type Deps = ReadModelDeps<'collections'>;

/** A collection re-read after a write (a concurrent delete may have removed it since). */
export async function currentCollection(deps: Deps, id: string): Promise<CollectionDoc> {
  const doc = await deps.readModel.collections.get(id);
  if (!doc) throw new RestError(`Invalid collection id (${id}).`);
  return doc;
}

/** `GET /collection`: one page of the collections `viewer` may read, optionally by text, filtered for `viewer`. */
export async function listCollections(
  deps: Deps,
  viewer: Viewer | null,
  input: { text?: string; paging: Paging },
): Promise<{ rows: Record<string, unknown>[]; total: number }> {
  const page = await deps.readModel.collections.list({ viewer, text: input.text, paging: input.paging });
  return { rows: page.rows.map((c) => collectionView(c, viewer)), total: page.total };
}

/** `GET /collection/details`: how many collections `viewer` may read (the total of a one-row page). */
export async function collectionCount(deps: Deps, viewer: Viewer | null): Promise<number> {
  const page = await deps.readModel.collections.list({
    viewer,
    paging: { limit: 1, offset: 0, sort: 'name', sortdir: 1 },
  });
  return page.total;
}

/** `GET /collection/:id/details`: how many of the collection's top-level folders `viewer` may see. */
export async function collectionDetails(
  deps: ReadModelDeps<'folders'>,
  collection: CollectionDoc,
  viewer: Viewer | null,
): Promise<{ nFolders: number }> {
  return {
    nFolders: await deps.readModel.folders.countChildren({
      parentType: 'collection',
      parentId: collection._id,
      viewer,
    }),
  };
}
