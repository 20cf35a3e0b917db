import type { CollectionDoc, FolderDoc, UserDoc } from '../ports/readModel';
import { AccessLevel, accessLevelOf, type Viewer } from '../domain/access';

/** Filtered user document (Girder's User.filter): READ fields for everyone, account fields for self and admins. */
export function userView(user: UserDoc, viewer: Viewer | null): Record<string, unknown> {
  const level = accessLevelOf(user, viewer);
  const view: Record<string, unknown> = {
    _id: user._id,
    _modelType: 'user',
    _accessLevel: level,
    login: user.login,
    public: user.public,
    firstName: user.firstName,
    lastName: user.lastName,
    admin: user.admin,
    created: user.created,
  };
  if (level >= AccessLevel.ADMIN) {
    Object.assign(view, {
      email: user.email,
      size: user.size,
      groups: user.groups,
      groupInvites: user.groupInvites,
      status: user.status,
      emailVerified: user.emailVerified,
      otp: user.otp?.enabled === true,
    });
  }
  return view;
}

/** Filtered collection document. */
export function collectionView(collection: CollectionDoc, viewer: Viewer | null): Record<string, unknown> {
  return {
    _id: collection._id,
    _modelType: 'collection',
    _accessLevel: accessLevelOf(collection, viewer),
    name: collection.name,
    description: collection.description,
    public: collection.public,
    created: collection.created,
    updated: collection.updated,
    size: collection.size,
    meta: collection.meta,
    ...(collection.publicFlags !== undefined ? { publicFlags: collection.publicFlags } : {}),
  };
}

/**
 * Filtered folder record: the whitelisted fields present on the document, `_modelType`, the caller's `_accessLevel`,
 * `metadata` (this service's name for Girder's `meta`, `{}` when empty). Never `access` nor `lowerName`.
 *
 * Built with its keys in sorted order, the order the answer is written in: such an object goes to the client through
 * JSON.stringify as it is (src/http/render.ts), a listing's fifty of them included.
 */
export function folderView(
  folder: FolderDoc,
  viewer: Viewer | null,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const view: Record<string, unknown> = {
    _accessLevel: accessLevelOf(folder, viewer),
    _id: folder._id,
    _modelType: 'folder',
    baseParentId: folder.baseParentId,
    baseParentType: folder.baseParentType,
    created: folder.created,
    creatorId: folder.creatorId,
    description: folder.description,
    metadata: folder.meta,
    name: folder.name,
    parentCollection: folder.parentCollection,
    parentId: folder.parentId,
  };
  if (folder.public !== undefined) view.public = folder.public;
  if (folder.publicFlags !== undefined) view.publicFlags = folder.publicFlags;
  view.size = folder.size;
  view.updated = folder.updated;
  return Object.assign(view, extra);
}
