import type {
  ApiKeyDoc,
  CollectionDoc,
  FileDoc,
  FolderDoc,
  GroupDoc,
  ItemDoc,
  ReadModelQueries as ReadModel,
  UserDoc,
} from '../ports/readModel';
import { accessDeniedMessage, hasAccess, type Level, type Viewer } from '../domain/access';
import { AccessDeniedError, RestError, ValidationError } from '../domain/errors';
import { isObjectId } from '../domain/ids';
import { groupAccessLevel } from '../domain/group';
import type { ParentType } from '../domain/parents';
import type { ReadModelDeps } from './readDeps';

/** An item with the folder whose ACL decides access to it. */
interface ItemInFolder {
  item: ItemDoc;
  folder: FolderDoc;
}

/** A file with its item and the folder whose ACL decides access to it. */
interface FileInItem extends ItemInFolder {
  file: FileDoc;
}

/** What loading each model kind gives a route. */
export interface LoadedModels {
  folder: FolderDoc;
  user: UserDoc;
  collection: CollectionDoc;
  item: ItemInFolder;
  file: FileInItem;
  group: GroupDoc;
  api_key: ApiKeyDoc;
}

export type ModelKind = keyof LoadedModels;

/** A loaded parent of a folder: its type and document. */
export type LoadedParent = { [T in ParentType]: { type: T; doc: LoadedModels[T] } }[ParentType];

interface ModelKindRule<K extends ModelKind> {
  fetch(readModel: ReadModel, id: string): Promise<LoadedModels[K] | null>;
  /** Whether the caller holds `level` on the loaded model (Girder's per-model hasAccess). */
  allows(loaded: LoadedModels[K], viewer: Viewer | null, level: Level): boolean;
}

async function itemInFolder(readModel: ReadModel, item: ItemDoc | null): Promise<ItemInFolder | null> {
  const folder = item && (await readModel.folders.get(item.folderId));
  return item && folder ? { item, folder } : null;
}

/**
 * How each model kind is found and checked: access-controlled models by their own ACL, items and files by their
 * folder's, groups by membership and their ACL, API keys by ownership (a key's ACL gives its owner ADMIN only).
 */
const KINDS: { [K in ModelKind]: ModelKindRule<K> } = {
  folder: { fetch: (rm, id) => rm.folders.get(id), allows: hasAccess },
  user: { fetch: (rm, id) => rm.users.get(id), allows: hasAccess },
  collection: { fetch: (rm, id) => rm.collections.get(id), allows: hasAccess },
  item: {
    fetch: async (rm, id) => itemInFolder(rm, await rm.items.get(id)),
    allows: (loaded, viewer, level) => hasAccess(loaded.folder, viewer, level),
  },
  file: {
    async fetch(rm, id) {
      const file = await rm.files.get(id);
      const found = file && (await itemInFolder(rm, await rm.items.get(file.itemId)));
      return file && found ? { file, ...found } : null;
    },
    allows: (loaded, viewer, level) => hasAccess(loaded.folder, viewer, level),
  },
  group: {
    fetch: (rm, id) => rm.groups.get(id),
    allows: (group, viewer, level) => groupAccessLevel(group, viewer) >= level,
  },
  api_key: {
    fetch: (rm, id) => rm.apiKeys.get(id),
    allows: (key, viewer) => viewer !== null && (viewer.admin || viewer.id === key.userId),
  },
};

/** A loaded resource set: each kind's models in the order given, each once, and the kinds in the request's order. */
export interface LoadedResources {
  folder: FolderDoc[];
  item: ItemInFolder[];
  collection: CollectionDoc[];
  user: UserDoc[];
  order: ('folder' | 'item' | 'collection' | 'user')[];
}

/**
 * Girder's two ways to miss: a model parameter (`modelParam`) answers `Invalid <model> id (<id>).`; a parent loaded
 * with `load(…, exc=True)` answers `No such <model>: <id>` as a validation error. A resource download checks each
 * resource of its set first: `Resource <model> <id> not found.`
 */
export type MissingModel = 'invalid-id' | 'no-such' | 'resource-not-found';

/** Finds a model by id (a malformed id is simply not found); null when there is none. */
export function findModel<K extends ModelKind>(
  { readModel }: ReadModelDeps,
  kind: K,
  id: string,
): Promise<LoadedModels[K] | null> {
  return isObjectId(id) ? KINDS[kind].fetch(readModel, id) : Promise.resolve(null);
}

function missingError(kind: ModelKind, id: string, missing: MissingModel): Error {
  switch (missing) {
    case 'invalid-id':
      return new RestError(`Invalid ${kind} id (${id}).`);
    case 'no-such':
      return new ValidationError(`No such ${kind}: ${id}`, 'id');
    case 'resource-not-found':
      return new RestError(`Resource ${kind} ${id} not found.`);
  }
}

/** Loads a model and checks the caller's level on it, with Girder's messages for a miss and for too little access. */
export async function loadModelAt<K extends ModelKind>(
  deps: ReadModelDeps,
  kind: K,
  id: string,
  viewer: Viewer | null,
  level: Level,
  missing: MissingModel = 'invalid-id',
): Promise<LoadedModels[K]> {
  const found = await findModel(deps, kind, id);
  if (!found) throw missingError(kind, id, missing);
  if (!KINDS[kind].allows(found, viewer, level))
    throw new AccessDeniedError(accessDeniedMessage(level, kind, id, viewer));
  return found;
}
