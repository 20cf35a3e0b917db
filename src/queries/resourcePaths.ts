import type { ReadModelDeps } from './readDeps';
import type { CollectionDoc, FileDoc, FolderDoc, ItemDoc, UserDoc } from '../ports/readModel';
import { AccessLevel, accessDeniedMessage, hasAccess, type Viewer } from '../domain/access';
import { AccessDeniedError, RestError, ValidationError } from '../domain/errors';
import { isObjectId } from '../domain/ids';
import { collectionView, folderView, userView } from './views';
import { fileView, itemView } from './itemQueries';
import { loadModelAt } from './models';

/** What these reads touch (src/queries/readDeps.ts). */
type Deps = ReadModelDeps;

/**
 * Resource paths (Girder's girder/utility/path.py): `/user/<login>/<folder>/…/<item>/<file>` and
 * `/collection/<name>/…`. In a path, `\` and `/` inside a name are escaped as `\\` and `\/`.
 */

const RESOURCE_TYPES = ['folder', 'collection', 'user', 'item', 'file'] as const;
type ResourceType = (typeof RESOURCE_TYPES)[number];

type View = Record<string, unknown>;

/** Escapes `\` and `/` in a name (Girder's `encode`). */
export const encodeToken = (token: string): string => token.replace(/\\/g, '\\\\').replace(/\//g, '\\/');

/** Undoes `encodeToken` (Girder's `decode`, in its order: `\/` first, then `\\`). */
export const decodeToken = (token: string): string => token.replace(/\\\//g, '/').replace(/\\\\/g, '\\');

/** An odd number of backslashes at the end: the `/` that follows is escaped. */
const ESCAPING_END = /(?<!\\)(?:\\\\)*\\$/;

/** Splits an encoded path on its unescaped slashes and decodes each token (Girder's `split`). */
export function splitPath(path: string): string[] {
  const [first, ...rest] = path.split('/');
  const tokens = [first];
  for (const chunk of rest) {
    if (ESCAPING_END.test(tokens[tokens.length - 1])) tokens[tokens.length - 1] += `/${chunk}`;
    else tokens.push(chunk);
  }
  return tokens.map(decodeToken);
}

/** Joins names into an encoded path (Girder's `join`). */
export const joinPath = (tokens: string[]): string => tokens.map(encodeToken).join('/');

/** A document met on the way down a path, with what an access check on it needs. */
type Found =
  | { type: 'user'; doc: UserDoc }
  | { type: 'collection'; doc: CollectionDoc }
  | { type: 'folder'; doc: FolderDoc }
  | { type: 'item'; doc: ItemDoc; folder: FolderDoc }
  | { type: 'file'; doc: FileDoc; folder: FolderDoc };

/** Items and files have no ACL: they are readable when their folder is. */
const aclOf = (found: Found) => (found.type === 'item' || found.type === 'file' ? found.folder : found.doc);

function viewOf(found: Found, viewer: Viewer | null): View {
  switch (found.type) {
    case 'user':
      return userView(found.doc, viewer);
    case 'collection':
      return collectionView(found.doc, viewer);
    case 'folder':
      return folderView(found.doc, viewer);
    case 'item':
      return itemView(found.doc);
    case 'file':
      return fileView(found.doc, viewer);
  }
}

/** The first file of an item with this exact name, in insertion order (the files of an item are paged through). */
async function fileNamed(deps: Deps, itemId: string, name: string): Promise<FileDoc | null> {
  const limit = 100;
  for (let offset = 0; ; offset += limit) {
    const page = await deps.readModel.files.listForItem(itemId, { limit, offset, sort: '_id', sortdir: 1 });
    const match = page.rows.find((file) => file.name === name);
    if (match) return match;
    if (page.rows.length < limit) return null;
  }
}

/**
 * The child of `parent` named `token` (Girder's lookUpToken): under a user, collection or folder a folder of that
 * name, else under a folder an item of that name; under an item, a file of that name. Not permission filtered.
 */
async function childNamed(deps: Deps, parent: Found, token: string): Promise<Found | null> {
  const rm = deps.readModel;
  if (parent.type === 'user' || parent.type === 'collection' || parent.type === 'folder') {
    const folder = await rm.folders.childNamed(parent.type, parent.doc._id, token);
    if (folder) return { type: 'folder', doc: folder };
  }
  if (parent.type === 'folder') {
    const page = await rm.items.listInFolder({
      folderId: parent.doc._id,
      name: token,
      paging: { limit: 1, offset: 0, sort: '_id', sortdir: 1 },
    });
    if (page.rows[0]) return { type: 'item', doc: page.rows[0], folder: parent.doc };
  }
  if (parent.type === 'item') {
    const file = await fileNamed(deps, parent.doc._id, token);
    if (file) return { type: 'file', doc: file, folder: parent.folder };
  }
  return null;
}

/**
 * `GET /resource/lookup` (Girder's lookUpPath): resolves a path segment by segment, each document at READ. An unknown
 * root is `User not found: <login>` / `Collection not found: <name>`; a missing or unreadable descendant is
 * `Path not found: <path>` (the path without its leading slashes), so that a path does not reveal what the caller may
 * not read. With `test`, both give null instead. A path that names neither root kind is `Invalid path format`.
 */
export async function lookUpPath(deps: Deps, path: string, viewer: Viewer | null, test: boolean): Promise<View | null> {
  const stripped = path.replace(/^\/+/, '');
  // A path of one token (`user`) has no root name.
  const [model, rootName, ...tokens] = splitPath(stripped) as [string, string | undefined, ...string[]];
  const rm = deps.readModel;
  let current: Found;
  if (model === 'user' && rootName !== undefined) {
    const user = await rm.users.getByLogin(rootName);
    if (!user) {
      if (test) return null;
      throw new ValidationError(`User not found: ${rootName}`);
    }
    current = { type: 'user', doc: user };
  } else if (model === 'collection' && rootName !== undefined) {
    const collection = await rm.collections.getByName(rootName);
    if (!collection) {
      if (test) return null;
      throw new ValidationError(`Collection not found: ${rootName}`);
    }
    current = { type: 'collection', doc: collection };
  } else {
    throw new ValidationError('Invalid path format');
  }

  const notFound = () => {
    if (test) return null;
    throw new ValidationError(`Path not found: ${stripped}`);
  };
  if (!hasAccess(aclOf(current), viewer, AccessLevel.READ)) return notFound();
  for (const token of tokens) {
    const child = await childNamed(deps, current, token);
    if (!child || !hasAccess(aclOf(child), viewer, AccessLevel.READ)) return notFound();
    current = child;
  }
  return viewOf(current, viewer);
}

/** A resource by id, with the folder that decides access to items and files; null when it does not resolve. */
async function fetchResource(deps: Deps, type: ResourceType, id: string): Promise<Found | null> {
  if (!isObjectId(id)) return null;
  const rm = deps.readModel;
  switch (type) {
    case 'user': {
      const doc = await rm.users.get(id);
      return doc && { type, doc };
    }
    case 'collection': {
      const doc = await rm.collections.get(id);
      return doc && { type, doc };
    }
    case 'folder': {
      const doc = await rm.folders.get(id);
      return doc && { type, doc };
    }
    case 'item': {
      const doc = await rm.items.get(id);
      const folder = doc && (await rm.folders.get(doc.folderId));
      return doc && folder ? { type, doc, folder } : null;
    }
    case 'file': {
      const doc = await rm.files.get(id);
      const item = doc && (await rm.items.get(doc.itemId));
      const folder = item && (await rm.folders.get(item.folderId));
      return doc && folder ? { type, doc, folder } : null;
    }
  }
}

/** A parent on the way up, loaded at READ (`Invalid <model> id (<id>).` when it is gone). */
async function loadParentAtRead(deps: Deps, type: ResourceType, id: string, viewer: Viewer | null): Promise<Found> {
  if (type === 'user' || type === 'collection' || type === 'folder') {
    const doc = await loadModelAt(deps, type, id, viewer, AccessLevel.READ);
    return { type, doc } as Found;
  }
  const found = await fetchResource(deps, type, id);
  if (!found) throw new RestError(`Invalid ${type} id (${id}).`);
  if (!hasAccess(aclOf(found), viewer, AccessLevel.READ))
    throw new AccessDeniedError(accessDeniedMessage(AccessLevel.READ, type, id, viewer));
  return found;
}

const nameOf = (found: Found): string => (found.type === 'user' ? found.doc.login : found.doc.name);

function parentOf(found: Found): { type: ResourceType; id: string } | null {
  switch (found.type) {
    case 'file':
      return { type: 'item', id: found.doc.itemId };
    case 'item':
      return { type: 'folder', id: found.doc.folderId };
    case 'folder':
      return { type: found.doc.parentCollection, id: found.doc.parentId };
    default:
      return null;
  }
}

/**
 * `GET /resource/:id/path` (Girder's getResourcePath): the resource is loaded as `type` at READ (an id that is not a
 * `type` is 400 `Invalid resource id.`, which girder_client's `--parent-type auto` relies on to try the next type),
 * then every ancestor at READ; the path names them from the root down.
 */
export async function resourcePath(deps: Deps, type: string, id: string, viewer: Viewer | null): Promise<string> {
  if (!(RESOURCE_TYPES as readonly string[]).includes(type)) throw new RestError('Invalid resources format.');
  let current = await fetchResource(deps, type as ResourceType, id);
  if (!current) throw new RestError('Invalid resource id.');
  if (!hasAccess(aclOf(current), viewer, AccessLevel.READ))
    throw new AccessDeniedError(accessDeniedMessage(AccessLevel.READ, type, id, viewer));
  const names = [nameOf(current)];
  for (let parent = parentOf(current); parent; parent = parentOf(current)) {
    current = await loadParentAtRead(deps, parent.type, parent.id, viewer);
    names.unshift(nameOf(current));
  }
  return `/${joinPath([current.type, ...names])}`;
}
