import type { Viewer } from '../domain/access';
import { fixedSortKeys, type SortKeys } from '../domain/sortKeys';

/**
 * The sort keys of every listing (domain/sortKeys.ts): the stored fields each resource's view shows (views.ts,
 * itemQueries.ts, groupQueries.ts, resources/apiKey.ts), under the names a sort uses. Computed view fields
 * (`_accessLevel`, `_modelType`, `otp`) are not stored and are left out: a sort on them could only be an order by id.
 * `lowerName` is the lower-cased name the view shows, the default sort of folders and items.
 *
 * Never here: `access`, password hashes (their salts are inside), tokens, an API key's `key` (a secret even to its
 * owner's listing), a file's blob and copy bookkeeping, a group's `creatorId`, another user's account fields.
 */

export const FOLDER_SORT = fixedSortKeys(
  'lowerName',
  [
    '_id',
    'name',
    'lowerName',
    'description',
    'parentCollection',
    'parentId',
    'baseParentType',
    'baseParentId',
    'creatorId',
    'created',
    'updated',
    'size',
    'public',
    'publicFlags',
    'metadata',
    'meta',
  ],
  // The view's name first (the one the 400 names); `meta` is Girder's name for the same field.
  ['metadata', 'meta'],
);

const ITEM_FIELDS = [
  '_id',
  'name',
  'lowerName',
  'description',
  'folderId',
  'baseParentType',
  'baseParentId',
  'creatorId',
  'created',
  'updated',
  'size',
  'copyOfItem',
  'metadata',
  'meta',
];
export const ITEM_SORT = fixedSortKeys('lowerName', ITEM_FIELDS, ['metadata', 'meta']);

const FILE_FIELDS = ['_id', 'name', 'mimeType', 'size', 'itemId', 'creatorId', 'created', 'exts'];

export const FILE_SORT = fixedSortKeys('name', FILE_FIELDS);

/** A store's files (`GET /assetstore/:id/files`): the file fields, by id as Girder sorts them. */
export const ASSETSTORE_FILE_SORT = fixedSortKeys('_id', FILE_FIELDS);

/** Assetstores (`GET /assetstore`): their scalar fields, by name as Girder sorts them. */
export const ASSETSTORE_SORT = fixedSortKeys('name', [
  '_id',
  'name',
  'created',
  'type',
  'current',
  'root',
  'perms',
  'db',
  'mongohost',
  'replicaset',
  'bucket',
  'prefix',
  'service',
  'region',
  'readOnly',
]);

export const COLLECTION_SORT = fixedSortKeys(
  'name',
  ['_id', 'name', 'description', 'public', 'publicFlags', 'created', 'updated', 'size', 'meta'],
  ['meta'],
);

export const GROUP_SORT = fixedSortKeys('name', [
  '_id',
  'name',
  'lowerName',
  'description',
  'public',
  'created',
  'updated',
  'addAllowed',
]);

export const API_KEY_SORT = fixedSortKeys('name', [
  '_id',
  'name',
  'scope',
  'tokenDuration',
  'active',
  'created',
  'lastUse',
  'userId',
]);

/** What every caller sees of every user (views.ts `userView` at READ). */
const USER_FIELDS: ReadonlySet<string> = new Set([
  '_id',
  'login',
  'firstName',
  'lastName',
  'public',
  'admin',
  'created',
]);
/**
 * What a site admin also sees of every user (ADMIN level). A user sees their own account fields too, but a listing
 * holds other users: sorting it on `email` would order them by what the caller cannot see.
 */
const ADMIN_USER_FIELDS: ReadonlySet<string> = new Set([...USER_FIELDS, 'email', 'size', 'status', 'emailVerified']);

/** The user fields shown to `viewer` on every user of a listing (also what a user search may match). */
export function userFieldsSeenBy(viewer: Viewer | null): ReadonlySet<string> {
  return viewer?.admin ? ADMIN_USER_FIELDS : USER_FIELDS;
}

/** User listings (`GET /user`, a group's members and invitations). */
export const USER_SORT: SortKeys = { default: 'lastName', fields: userFieldsSeenBy, metadata: [] };
