import type { FileDoc, FileQueries, FolderDoc, FolderQueries, ItemDoc, ItemQueries, Page } from '../ports/readModel';
import type { Viewer } from '../domain/access';
import type { Paging } from '../domain/paging';
import type { LoadedResources } from './models';
import { pythonJsonDumps } from './pythonJson';

/**
 * The layout of a folder's zip archive (Girder's `Folder.fileList(subpath=False)` under `ZipGenerator(<folder name>)`):
 * every entry path starts with `<folder name>/`; a folder's readable subfolders come first, depth-first, then its
 * items; an item holding exactly one file named like the item gives `<dir>/<file>`, any other item
 * `<dir>/<item name>/<file>` for each of its files; files whose MIME type is not in a non-empty `mimeFilter` are left
 * out (the "exactly one file" test still counts them, as Girder's does). There are no directory entries, so empty
 * folders and items leave no trace. Children come in insertion order (by `_id`, which grows with creation time).
 *
 * The other archives follow the same rules from another root: a collection's (`<collection name>/<folder>/…` for each
 * readable top-level folder), an item's (`<item name>/<file>` for every file, even one named like the item), and a
 * resource set's (no common root: each resource under its own name, a user's under its login, an item as above).
 *
 * The tree is walked lazily, a page at a time: at any moment it holds one page of children per level of depth, never
 * the whole tree.
 *
 * Entry names are sanitised so that no entry can leave the archive's root directory when extracted:
 * - each folder, item and file name is one path segment: `/` and `\` in it, NUL, the other C0 control characters
 *   and DEL become `_` (`a/b` → `a_b`, as girder_client names downloads);
 * - a segment that is empty, `.` or `..` is prefixed with `_` (`_`, `_.`, `_..`);
 * - in the root segment (the name at the top of the archive) `:` also becomes `_`, so the path can never start with a drive
 *   letter (`C:`) nor with the `word:` prefix the zip writer strips.
 * Paths are therefore always relative, `/`-separated and free of `.`/`..` segments. Different names can sanitise to
 * the same path (`a/b` and `a_b`); such entries, like Girder's, simply share the path.
 */

/**
 * One entry of an archive, by its sanitised path: a file's bytes, or (with `includeMetadata`) a metadata document
 * written by the layout itself.
 */
export type ZipEntry =
  { entryPath: string; file: FileDoc; data?: undefined } | { entryPath: string; data: Buffer; file?: undefined };

/** The bytes an entry holds. */
export const entrySize = (entry: ZipEntry): number => (entry.file ? entry.file.size : entry.data.length);

/** What the walk reads: permission-filtered child folders, the items of a folder, the files of an item. */
interface LayoutSource {
  folders: Pick<FolderQueries, 'listChildren'>;
  items: Pick<ItemQueries, 'listInFolder'>;
  files: Pick<FileQueries, 'listForItem'>;
}

/** What a layout is handed: the read model, of which it reads only the listings above. */
export interface LayoutDeps {
  readModel: LayoutSource;
}

export interface LayoutOptions {
  /** MIME types to keep; absent or empty keeps every file (Girder's `if not mimeFilter`). */
  mimeFilter?: readonly unknown[];
  /**
   * Girder's `includeMetadata` (resource downloads): an item's or folder's non-empty metadata as
   * `girder-item-metadata.json` / `girder-folder-metadata.json` (Python's `json.dumps`) after its contents, unless a
   * file (item) or child (folder) already has that name; an item with metadata always gets a directory of its own.
   */
  includeMetadata?: boolean;
  /** Rows fetched per query. */
  pageSize?: number;
}

const DEFAULT_PAGE_SIZE = 200;
const UNSAFE_IN_SEGMENT = /[/\\\u0000-\u001f\u007f]/g;

/** One path segment of an entry name (see the module comment). */
export function sanitizeSegment(name: string): string {
  const cleaned = name.replace(UNSAFE_IN_SEGMENT, '_');
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? `_${cleaned}` : cleaned;
}

/** The archive's root directory: a segment in which `:` is also replaced. */
export function sanitizeRoot(name: string): string {
  return sanitizeSegment(name.replace(/:/g, '_'));
}

/** `dir/<name>`, the name sanitised; at the top of the archive (`dir` empty) the name is its root segment. */
function under(dir: string, name: string): string {
  return dir === '' ? sanitizeRoot(name) : `${dir}/${sanitizeSegment(name)}`;
}

const ITEM_METADATA_FILE = 'girder-item-metadata.json';
const FOLDER_METADATA_FILE = 'girder-folder-metadata.json';

function metadataEntry(dir: string, name: string, meta: Record<string, unknown>): ZipEntry {
  return { entryPath: under(dir, name), data: Buffer.from(pythonJsonDumps(meta)) };
}

/** Every row of a paged listing from `start` on, one page in memory at a time (offset paging, sorted by `_id`). */
async function* paged<T>(fetch: (paging: Paging) => Promise<Page<T>>, pageSize: number, start = 0): AsyncGenerator<T> {
  for (let offset = start; ; offset += pageSize) {
    const page = await fetch({ limit: pageSize, offset, sort: '_id', sortdir: 1 });
    yield* page.rows;
    if (page.rows.length < pageSize) return;
  }
}

function mimeAccepts(mimeFilter: readonly unknown[], file: FileDoc): boolean {
  return mimeFilter.length === 0 || mimeFilter.includes(file.mimeType);
}

/**
 * An item's files (Girder's Item.fileList): with `subpath`, under `dir/<item name>` unless the item holds exactly one
 * file named like itself (and no metadata to write); without, right under `dir`.
 */
async function* itemEntries(
  source: LayoutSource,
  item: ItemDoc,
  dir: string,
  options: Required<LayoutOptions>,
  subpath = true,
): AsyncGenerator<ZipEntry> {
  const withMetadata = options.includeMetadata && Object.keys(item.meta).length > 0;
  const fetch = (paging: Paging) => source.files.listForItem(item._id, paging);
  const first = await fetch({ limit: options.pageSize, offset: 0, sort: '_id', sortdir: 1 });
  const single = first.total === 1 && first.rows[0]?.name === item.name && !withMetadata;
  const base = !subpath || single ? dir : under(dir, item.name);
  const rest = first.rows.length < options.pageSize ? [] : paged(fetch, options.pageSize, options.pageSize);
  let metadataNameFree = true;
  for (const files of [first.rows, rest]) {
    for await (const file of files) {
      if (!mimeAccepts(options.mimeFilter, file)) continue;
      if (file.name === ITEM_METADATA_FILE) metadataNameFree = false;
      yield { entryPath: under(base, file.name), file };
    }
  }
  if (withMetadata && metadataNameFree) yield metadataEntry(base, ITEM_METADATA_FILE, item.meta);
}

/** A folder's contents under `dir` (Girder's Folder.fileList): its readable subfolders, then its items. */
async function* folderEntries(
  source: LayoutSource,
  folder: FolderDoc,
  dir: string,
  viewer: Viewer | null,
  options: Required<LayoutOptions>,
): AsyncGenerator<ZipEntry> {
  let metadataNameFree = true;
  const subfolders = paged(
    (paging) => source.folders.listChildren({ parentType: 'folder', parentId: folder._id, viewer, paging }),
    options.pageSize,
  );
  for await (const sub of subfolders) {
    if (sub.name === FOLDER_METADATA_FILE) metadataNameFree = false;
    yield* folderEntries(source, sub, under(dir, sub.name), viewer, options);
  }
  for await (const item of paged(
    (paging) => source.items.listInFolder({ folderId: folder._id, paging }),
    options.pageSize,
  )) {
    if (item.name === FOLDER_METADATA_FILE) metadataNameFree = false;
    yield* itemEntries(source, item, dir, options);
  }
  if (options.includeMetadata && metadataNameFree && Object.keys(folder.meta).length > 0)
    yield metadataEntry(dir, FOLDER_METADATA_FILE, folder.meta);
}

/** The top-level folders of a user or collection, each under `dir/<folder name>` (Girder's fileList of either). */
async function* rootEntries(
  source: LayoutSource,
  root: { parentType: 'user' | 'collection'; parentId: string },
  dir: string,
  viewer: Viewer | null,
  options: Required<LayoutOptions>,
): AsyncGenerator<ZipEntry> {
  const folders = paged((paging) => source.folders.listChildren({ ...root, viewer, paging }), options.pageSize);
  for await (const folder of folders) yield* folderEntries(source, folder, under(dir, folder.name), viewer, options);
}

function resolve(options: LayoutOptions): Required<LayoutOptions> {
  return {
    mimeFilter: options.mimeFilter ?? [],
    includeMetadata: options.includeMetadata ?? false,
    pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE,
  };
}

/** The entries of `folder`'s archive as `viewer` may see them, in archive order. */
export function zipLayout(
  { readModel: source }: LayoutDeps,
  folder: FolderDoc,
  viewer: Viewer | null,
  options: LayoutOptions = {},
): AsyncGenerator<ZipEntry> {
  return folderEntries(source, folder, sanitizeRoot(folder.name), viewer, resolve(options));
}

/** A collection's archive (Girder's downloadCollection): its readable folders under `<collection name>/`. */
export function collectionZipLayout(
  { readModel: source }: LayoutDeps,
  collection: { _id: string; name: string },
  viewer: Viewer | null,
  options: LayoutOptions = {},
): AsyncGenerator<ZipEntry> {
  const root = { parentType: 'collection' as const, parentId: collection._id };
  return rootEntries(source, root, sanitizeRoot(collection.name), viewer, resolve(options));
}

/** An item's archive (Girder's _downloadMultifileItem): its files right under `<item name>/`. */
export function itemZipLayout({ readModel: source }: LayoutDeps, item: ItemDoc): AsyncGenerator<ZipEntry> {
  return itemEntries(source, item, sanitizeRoot(item.name), resolve({}), false);
}

/**
 * The archive of a resource set (Girder's resource download, `ZipGenerator()` without a root): each resource in the
 * order the set names them, under its own name (a user's: the login); an item holding one file named like itself is
 * that file at the top.
 */
export async function* resourceSetZipLayout(
  { readModel: source }: LayoutDeps,
  resources: LoadedResources,
  viewer: Viewer | null,
  options: LayoutOptions = {},
): AsyncGenerator<ZipEntry> {
  const resolved = resolve(options);
  for (const kind of resources.order) {
    if (kind === 'folder')
      for (const folder of resources.folder)
        yield* folderEntries(source, folder, under('', folder.name), viewer, resolved);
    if (kind === 'item') for (const { item } of resources.item) yield* itemEntries(source, item, '', resolved);
    if (kind === 'collection')
      for (const collection of resources.collection) {
        const root = { parentType: 'collection' as const, parentId: collection._id };
        yield* rootEntries(source, root, under('', collection.name), viewer, resolved);
      }
    if (kind === 'user')
      for (const user of resources.user) {
        const root = { parentType: 'user' as const, parentId: user._id };
        yield* rootEntries(source, root, under('', user.login), viewer, resolved);
      }
  }
}

export interface LayoutSummary {
  entries: number;
  /** Sum of the file sizes. */
  bytes: number;
  /** Sum of the UTF-8 lengths of the entry paths. */
  nameBytes: number;
}

/** Counts what an archive will hold without reading any file (the walk only). */
export async function summarizeLayout(entries: AsyncIterable<ZipEntry>): Promise<LayoutSummary> {
  const summary: LayoutSummary = { entries: 0, bytes: 0, nameBytes: 0 };
  for await (const entry of entries) {
    summary.entries += 1;
    summary.bytes += entrySize(entry);
    summary.nameBytes += Buffer.byteLength(entry.entryPath);
  }
  return summary;
}

/** The most entries a zip without zip64 records can count (0xffff itself is the "see zip64" marker). */
export const MAX_ZIP32_ENTRIES = 0xfffe;
/** The largest size or offset a zip without zip64 records can hold (0xffffffff itself is the marker). */
export const MAX_ZIP32_OFFSET = 0xfffffffe;
/**
 * Upper bound of the bytes an entry adds besides its data and its name (twice: local and central header): local
 * header 30, data descriptor up to 24, central header 46, zip64 extra field up to 28.
 */
const ENTRY_OVERHEAD = 30 + 24 + 46 + 28;
const END_RECORDS = 22 + 56 + 20;

/** Whether an archive of this summary needs zip64 records: too many entries, or sizes/offsets beyond 32 bits. */
export function needsZip64(summary: LayoutSummary): boolean {
  const upperBound = summary.bytes + 2 * summary.nameBytes + summary.entries * ENTRY_OVERHEAD + END_RECORDS;
  return summary.entries > MAX_ZIP32_ENTRIES || upperBound > MAX_ZIP32_OFFSET;
}
