import type { Document } from 'mongodb';
import type { GenerationCollections } from './mongoCollections';
import { COUNTED_MARK } from './childCounts';

/**
 * A canonical dump of one generation, for comparing a rebuild with the live state: one entry per collection under
 * the same names as the SQLite adapter's tables (`rm_users`, `rm_folders`, …), each row a JSON string with sorted
 * keys and without the adapter's write stamps (`_rev`), rows sorted. The ACL entries, which live inside the documents
 * here, are also listed the way the SQLite adapter stores them (`rm_acl`), so that both adapters' dumps cover the
 * same facts (the folders' ancestry is in their rows on both: `ancestors` here, `path` there).
 */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, sortKeys(v)]),
    );
  }
  return value;
}

const row = (value: unknown) => JSON.stringify(sortKeys(value));

interface AccessEntry {
  id: string;
  level: number;
}

function aclRows(docs: Document[]): string[] {
  const rows: string[] = [];
  for (const doc of docs) {
    const access = doc.access as { users?: AccessEntry[]; groups?: AccessEntry[] } | undefined;
    for (const [type, entries] of [
      ['user', access?.users ?? []],
      ['group', access?.groups ?? []],
    ] as const) {
      for (const entry of entries)
        rows.push(
          row({ resource_id: doc._id as string, principal_type: type, principal_id: entry.id, level: entry.level }),
        );
    }
  }
  return rows;
}

export async function dumpGeneration(collections: GenerationCollections): Promise<Record<string, unknown[]>> {
  const all = async (name: Parameters<GenerationCollections['get']>[0]) =>
    collections
      .get(name)
      .find({}, { projection: { _rev: 0 } })
      .toArray();
  const [
    users,
    tokens,
    apiKeys,
    collectionDocs,
    folders,
    items,
    files,
    subtreeOps,
    deletedFolders,
    deletedItems,
    deletedFiles,
    tree,
    sizes,
    groups,
    groupMembers,
    childCounts,
  ] = await Promise.all([
    all('users'),
    all('tokens'),
    all('apiKeys'),
    all('collections'),
    all('folders'),
    all('items'),
    all('files'),
    all('subtreeOps'),
    all('deletedFolders'),
    all('deletedItems'),
    all('deletedFiles'),
    all('folderTree'),
    all('folderSizes'),
    all('groups'),
    all('groupMembers'),
    all('childCounts'),
  ]);
  const out: Record<string, string[]> = {
    rm_acl: aclRows([...users, ...collectionDocs, ...folders]),
    rm_api_keys: apiKeys.map(row),
    rm_collections: collectionDocs.map(row),
    rm_deleted_files: deletedFiles.map(row),
    rm_deleted_folders: deletedFolders.map(row),
    rm_deleted_items: deletedItems.map(row),
    rm_files: files.map(row),
    rm_folder_sizes: sizes.map(row),
    rm_folder_tree: tree.map(row),
    rm_folders: folders.map(row),
    rm_groups: groups.map(row),
    rm_group_members: groupMembers.map(row),
    rm_items: items.map(row),
    rm_subtree_ops: subtreeOps.map(row),
    rm_tokens: tokens.map(row),
    rm_users: users.map(row),
    // This adapter's own (childCounts.ts): the counters that count something, so a replay must equal the live ones.
    rm_child_counts: childCounts.filter((c) => c._id !== COUNTED_MARK && c.n !== 0).map(row),
  };
  for (const rows of Object.values(out)) rows.sort();
  return out;
}
