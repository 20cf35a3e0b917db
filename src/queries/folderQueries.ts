import type { ReadModelDeps } from './readDeps';
import { AccessLevel, accessDeniedMessage, hasAccess, type Viewer } from '../domain/access';
import { AccessDeniedError, RestError } from '../domain/errors';
import { loadModelAt, type LoadedParent } from './models';
import type { FolderDoc } from '../ports/readModel';
import { collectionView, folderView, userView } from './views';
import { fullAccessList, type FullAccessList } from './accessListView';
import type { Paging } from '../domain/paging';
import { accessTargets } from '../projections/folderAccess';

/** What these reads touch (src/queries/readDeps.ts). */
type Deps = ReadModelDeps;

/**
 * Read-side functions of the folder routes: given the models the route loaded at its declared levels, they query the
 * read model and return views.
 */

type View = Record<string, unknown>;

/**
 * Folder responses call Girder's `meta` field `metadata`, but the stored document keeps `meta`: a sort on
 * `metadata` or `metadata.<key>` is the same sort as on `meta` / `meta.<key>`.
 */
export function folderSortField(sort: string): string {
  if (sort === 'metadata') return 'meta';
  if (sort.startsWith('metadata.')) return `meta.${sort.slice('metadata.'.length)}`;
  return sort;
}

export interface FindFoldersInput {
  /** The parent, loaded at READ by the route, when both parentType and parentId were given. */
  parent?: LoadedParent;
  text?: string;
  name?: string;
  paging: Paging;
}

/**
 * `GET /folder` (Girder's Folder.find): with both parentType and parentId, the children of that parent (loaded at
 * READ) that the caller may read, optionally by exact name and text; else with text, a global text search whose
 * results carry `_textScore` and are ordered by the requested sort; else `Invalid search mode.`. Empty strings
 * count as absent, as Girder's truthiness tests do. `total` ignores limit and offset.
 */
export async function findFolders(
  deps: Deps,
  viewer: Viewer | null,
  input: FindFoldersInput,
): Promise<{ rows: View[]; total: number }> {
  const paging = { ...input.paging, sort: folderSortField(input.paging.sort) };
  const folders = deps.readModel.folders;
  const { parent } = input;
  if (parent) {
    const page = await folders.listChildren({
      parentType: parent.type,
      parentId: parent.doc._id,
      viewer,
      ...(input.name ? { name: input.name } : {}),
      ...(input.text ? { text: input.text } : {}),
      paging,
    });
    return { rows: page.rows.map((f) => folderView(f, viewer)), total: page.total };
  }
  if (input.text) {
    const page = await folders.search({ text: input.text, viewer, paging });
    return { rows: page.rows.map(({ _textScore, ...f }) => folderView(f, viewer, { _textScore })), total: page.total };
  }
  throw new RestError('Invalid search mode.');
}

/**
 * `GET /folder/:id/details`: `nItems` counts every item directly in the folder (items carry no ACL of their own, so
 * there is nothing to filter), `nFolders` the direct subfolders the caller may read.
 */
export async function folderDetails(
  deps: Deps,
  viewer: Viewer | null,
  folder: FolderDoc,
): Promise<{ nItems: number; nFolders: number }> {
  const folders = deps.readModel.folders;
  const [nItems, nFolders] = await Promise.all([
    folders.itemCount(folder._id),
    folders.countChildren({ parentType: 'folder', parentId: folder._id, viewer }),
  ]);
  return { nItems, nFolders };
}

export interface RootPathEntry {
  type: 'user' | 'collection' | 'folder';
  object: View;
}

/**
 * `GET /folder/:id/rootpath` (Girder's parentsToRoot): the root user or collection, then every ancestor folder down
 * to the parent; the folder itself is not included. Each ancestor must be readable by the caller; they are checked
 * from the parent upwards, so the nearest unreadable one is the one reported.
 */
export async function folderRootPath(deps: Deps, viewer: Viewer | null, folder: FolderDoc): Promise<RootPathEntry[]> {
  const rm = deps.readModel;
  const ancestorIds = await rm.folders.ancestorIds(folder._id);
  const ancestors = await rm.folders.getMany(ancestorIds);
  if (ancestors.length !== ancestorIds.length) {
    const missing = ancestorIds.find((ancestorId) => !ancestors.some((a) => a._id === ancestorId));
    throw new RestError(`Invalid folder id (${missing}).`);
  }
  for (const ancestor of [...ancestors].reverse()) {
    if (!hasAccess(ancestor, viewer, AccessLevel.READ))
      throw new AccessDeniedError(accessDeniedMessage(AccessLevel.READ, 'folder', ancestor._id, viewer));
  }
  const rootEntry: RootPathEntry =
    folder.baseParentType === 'user'
      ? {
          type: 'user',
          object: userView(await loadModelAt(deps, 'user', folder.baseParentId, viewer, AccessLevel.READ), viewer),
        }
      : {
          type: 'collection',
          object: collectionView(
            await loadModelAt(deps, 'collection', folder.baseParentId, viewer, AccessLevel.READ),
            viewer,
          ),
        };
  return [rootEntry, ...ancestors.map((a): RootPathEntry => ({ type: 'folder', object: folderView(a, viewer) }))];
}

/** `GET /folder/:id/access` (ADMIN, declared by the route): the ACL with names (see accessListView.ts). */
export async function folderAccessList(deps: Deps, folder: FolderDoc): Promise<FullAccessList> {
  return fullAccessList(deps, folder.access);
}

/** A folder re-read after a write (a concurrent delete may have removed it since). */
export async function currentFolder(deps: Deps, id: string): Promise<FolderDoc> {
  const doc = await deps.readModel.folders.get(id);
  if (!doc) throw new RestError(`Invalid folder id (${id}).`);
  return doc;
}

/** How many folders and items a subtree operation on the folder walks (the folder itself included): its progress total. */
export async function subtreeSize(deps: Deps, folderId: string): Promise<number> {
  return deps.readModel.subtree.subtreeCount(folderId);
}

/** How many folders a recursive access change by `viewer` rewrites (its progress total), as the projection counts them. */
export async function accessChangeSize(deps: Deps, folderId: string, viewer: Viewer): Promise<number> {
  return (await accessTargets(deps.readModel.folders, folderId, viewer)).length;
}
