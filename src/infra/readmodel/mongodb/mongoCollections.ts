import type { Collection, Db, Document, IndexDescription } from 'mongodb';

/**
 * The read-model collections. Each generation of the read models (see generations.ts) has its own set, named
 * `rm_<name>_g<generation>` (e.g. `rm_folders_g3`); `rm_meta` (outside any generation) says which one readers use.
 */
const COLLECTIONS = {
  users: 'users',
  groups: 'groups',
  groupMembers: 'group_members',
  tokens: 'tokens',
  apiKeys: 'api_keys',
  collections: 'collections',
  folders: 'folders',
  items: 'items',
  files: 'files',
  subtreeOps: 'subtree_ops',
  deletedFolders: 'deleted_folders',
  deletedItems: 'deleted_items',
  deletedFiles: 'deleted_files',
  folderTree: 'folder_tree',
  folderSizes: 'folder_sizes',
  childCounts: 'child_counts',
  checkpoints: 'checkpoints',
} as const;

export type CollectionName = keyof typeof COLLECTIONS;

/** Every read-model document has a string `_id` (the service's ids, a token's hash, a checkpoint's projection). */
export interface StoredDoc extends Document {
  _id: string;
}

export const META_COLLECTION = 'rm_meta';

export function physicalName(name: CollectionName, generation: number): string {
  return `rm_${COLLECTIONS[name]}_g${generation}`;
}

/** The collections of one generation, resolved from a Db. */
export class GenerationCollections {
  constructor(
    private readonly db: Db,
    readonly generation: number,
  ) {}

  get(name: CollectionName): Collection<StoredDoc> {
    return this.db.collection<StoredDoc>(physicalName(name, this.generation));
  }

  async createIndexes(): Promise<void> {
    for (const [name, indexes] of Object.entries(INDEXES) as [CollectionName, IndexDescription[]][]) {
      if (indexes.length) await this.get(name).createIndexes(indexes);
    }
  }

  async drop(): Promise<void> {
    for (const name of Object.keys(COLLECTIONS) as CollectionName[])
      await this.db.dropCollection(physicalName(name, this.generation));
  }
}

/** Permission filters look up ACL entries by principal; these make them index scans. */
const aclIndexes: IndexDescription[] = [
  { key: { 'access.users.id': 1 }, name: 'access_users' },
  { key: { 'access.groups.id': 1 }, name: 'access_groups' },
];

/** Text search over name and description, the name weighing more (collections, folders and items alike). */
const nameTextIndex: IndexDescription = {
  key: { name: 'text', description: 'text' },
  name: 'text',
  weights: { name: 10, description: 1 },
  default_language: 'english',
};

/**
 * Indexes per collection, created when a generation is created (and ensured at start). Text indexes weigh the name
 * ten times the description, as Girder's do.
 */
const INDEXES: Record<CollectionName, IndexDescription[]> = {
  groups: [{ key: { _lowerName: 1 }, name: 'lower_name' }],
  groupMembers: [
    { key: { groupId: 1, kind: 1 }, name: 'group_kind' },
    { key: { userId: 1 }, name: 'user' },
  ],
  users: [
    { key: { login: 1 }, name: 'login', unique: true },
    { key: { email: 1 }, name: 'email', unique: true },
    { key: { _lowerName: 1 }, name: 'lower_name' },
  ],
  tokens: [
    { key: { apiKeyId: 1 }, name: 'api_key' },
    { key: { userId: 1 }, name: 'user' },
  ],
  apiKeys: [
    { key: { key: 1 }, name: 'key', unique: true },
    { key: { userId: 1, name: 1 }, name: 'user_name' },
  ],
  collections: [{ key: { name: 1 }, name: 'name', unique: true }, nameTextIndex, ...aclIndexes],
  folders: [
    { key: { parentId: 1, lowerName: 1 }, name: 'parent_lower_name' },
    { key: { parentId: 1, parentCollection: 1, name: 1 }, name: 'parent_name' },
    { key: { ancestors: 1 }, name: 'ancestors' },
    { key: { baseParentId: 1 }, name: 'base_parent' },
    nameTextIndex,
    ...aclIndexes,
  ],
  items: [
    { key: { folderId: 1, lowerName: 1 }, name: 'folder_lower_name' },
    { key: { folderId: 1, name: 1 }, name: 'folder_name' },
    { key: { baseParentId: 1 }, name: 'base_parent' },
    nameTextIndex,
  ],
  files: [
    { key: { itemId: 1, name: 1 }, name: 'item_name' },
    { key: { blobId: 1 }, name: 'blob' },
    // Files stored before hashes were kept have none: sparse, so they take no room in it.
    { key: { sha512: 1 }, name: 'sha512', sparse: true },
  ],
  subtreeOps: [{ key: { folderId: 1, stamp: 1 }, name: 'folder_position' }],
  deletedFolders: [
    { key: { id: 1, stamp: -1 }, name: 'id_position' },
    { key: { stamp: 1, 'doc.ancestors': 1 }, name: 'position_ancestors' },
  ],
  deletedItems: [
    { key: { id: 1, stamp: -1 }, name: 'id_position' },
    { key: { stamp: 1, folderId: 1 }, name: 'position_folder' },
  ],
  deletedFiles: [
    { key: { stamp: 1, itemId: 1 }, name: 'position_item' },
    { key: { blobId: 1, deletedAt: 1 }, name: 'blob_time' },
    { key: { deletedAt: 1 }, name: 'time' },
  ],
  folderTree: [
    { key: { folderId: 1, from: 1 }, name: 'folder_from' },
    { key: { parentId: 1, from: 1 }, name: 'parent_from' },
    { key: { baseParentId: 1, to: 1 }, name: 'base_open' },
  ],
  folderSizes: [{ key: { folderId: 1, position: -1 }, name: 'folder_position' }],
  childCounts: [{ key: { parentId: 1, parentType: 1 }, name: 'parent' }],
  checkpoints: [],
};
