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
      otp: false,
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
 */
export function folderView(
  folder: FolderDoc,
  viewer: Viewer | null,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    _id: folder._id,
    _modelType: 'folder',
    _accessLevel: accessLevelOf(folder, viewer),
    name: folder.name,
    description: folder.description,
    parentCollection: folder.parentCollection,
    parentId: folder.parentId,
    baseParentType: folder.baseParentType,
    baseParentId: folder.baseParentId,
    creatorId: folder.creatorId,
    created: folder.created,
    updated: folder.updated,
    size: folder.size,
    ...(folder.public !== undefined ? { public: folder.public } : {}),
    ...(folder.publicFlags !== undefined ? { publicFlags: folder.publicFlags } : {}),
    metadata: folder.meta,
    ...extra,
  };
}
