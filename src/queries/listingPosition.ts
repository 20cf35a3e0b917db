import type { ReadModelDeps } from './readDeps';
import type { Viewer } from '../domain/access';
import { RestError } from '../domain/errors';
import type { Paging } from '../domain/paging';
import { ownValue } from '../domain/ownMap';
import type { LoadedParent } from './models';
import type { FolderDoc, ItemDoc } from '../ports/readModel';
import { folderSortField } from './folderQueries';
import { itemSortField } from './itemQueries';

/** What these reads touch (src/queries/readDeps.ts). */
type Deps = ReadModelDeps<'folders' | 'items'>;

/**
 * `GET /folder/:id/position` and `GET /item/:id/position` (Girder's findPosition): the index the document has in the
 * listing the same parameters give, whatever its limit and offset. The sort must be a field the stored document has
 * at its top level (`Invalid sort mode.` otherwise, as Girder's `sort[0][0] in doc`). Without a parent, the position
 * is the one in the global text search (ordered by the same sort), as `GET /folder` and `GET /item` search.
 */
function checkSortField(doc: object, field: string): void {
  if (ownValue(doc as Record<string, unknown>, field) === undefined) throw new RestError('Invalid sort mode.');
}

export async function folderPosition(
  deps: Deps,
  viewer: Viewer | null,
  folder: FolderDoc,
  input: { parent?: LoadedParent; text?: string; name?: string; paging: Paging },
): Promise<number> {
  const paging = { ...input.paging, sort: folderSortField(input.paging.sort) };
  checkSortField(folder, paging.sort);
  const { parent } = input;
  if (!parent) {
    if (!input.text) throw new RestError('Invalid search mode.');
    return deps.readModel.folders.positionInSearch({ text: input.text, viewer, paging, id: folder._id });
  }
  return deps.readModel.folders.positionInChildren({
    parentType: parent.type,
    parentId: parent.doc._id,
    viewer,
    ...(input.name ? { name: input.name } : {}),
    ...(input.text ? { text: input.text } : {}),
    paging,
    id: folder._id,
  });
}

export async function itemPosition(
  deps: Deps,
  viewer: Viewer | null,
  item: ItemDoc,
  input: { folder?: FolderDoc; text?: string; name?: string; paging: Paging },
): Promise<number> {
  const paging = { ...input.paging, sort: itemSortField(input.paging.sort) };
  checkSortField(item, paging.sort);
  if (!input.folder) {
    if (input.text === undefined) throw new RestError('Invalid search mode.');
    return deps.readModel.items.positionInSearch({ text: input.text, viewer, paging, id: item._id });
  }
  return deps.readModel.items.positionInFolder({
    folderId: input.folder._id,
    ...(input.name ? { name: input.name } : {}),
    ...(input.text ? { text: input.text } : {}),
    paging,
    id: item._id,
  });
}
