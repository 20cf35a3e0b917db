import type { Services } from '../services';
import type { CollectionDoc, FolderDoc, UserDoc } from '../ports/readModel';
import { accessDeniedMessage, hasAccess, type Level, type Viewer } from '../domain/access';
import { AccessDeniedError, RestError, ValidationError } from '../domain/errors';
import { isObjectId } from '../domain/ids';
import type { ParentType } from '../domain/parents';

export type ParentDoc =
  { type: 'folder'; doc: FolderDoc } | { type: 'user'; doc: UserDoc } | { type: 'collection'; doc: CollectionDoc };

async function fetchModel(services: Services, model: ParentType, id: string): Promise<ParentDoc | null> {
  if (!isObjectId(id)) return null;
  const rm = services.readModel;
  switch (model) {
    case 'folder': {
      const doc = await rm.folders.get(id);
      return doc && { type: 'folder', doc };
    }
    case 'user': {
      const doc = await rm.users.get(id);
      return doc && { type: 'user', doc };
    }
    case 'collection': {
      const doc = await rm.collections.get(id);
      return doc && { type: 'collection', doc };
    }
  }
}

function requireLevel(found: ParentDoc, model: string, id: string, viewer: Viewer | null, level: Level): void {
  if (!hasAccess(found.doc, viewer, level)) throw new AccessDeniedError(accessDeniedMessage(level, model, id, viewer));
}

/**
 * Loads the resource named by a route's `:id` at an access level: an id that does not resolve (malformed or
 * missing) is 400 `Invalid <model> id (<id>).`; too little access is `<Level> access denied for <model> <id> (user …).`
 */
type DocOf<M extends ParentType> = { folder: FolderDoc; user: UserDoc; collection: CollectionDoc }[M];

export async function loadModel<M extends ParentType>(
  services: Services,
  model: M,
  id: string,
  viewer: Viewer | null,
  level: Level,
): Promise<DocOf<M>> {
  const found = await fetchModel(services, model, id);
  if (!found) throw new RestError(`Invalid ${model} id (${id}).`);
  requireLevel(found, model, id, viewer, level);
  return found.doc as DocOf<M>;
}

/** Loads a parent named by a parameter (Girder's `load(…, exc=True)`): `No such <model>: <id>` when it does not
 * resolve. */
export async function loadParent(
  services: Services,
  model: ParentType,
  id: string,
  viewer: Viewer | null,
  level: Level,
): Promise<ParentDoc> {
  const found = await fetchModel(services, model, id);
  if (!found) throw new ValidationError(`No such ${model}: ${id}`, 'id');
  requireLevel(found, model, id, viewer, level);
  return found;
}
