import type { FileDoc, FileQueries, FolderDoc, FolderQueries, ItemDoc, ItemQueries, Page } from '../ports/readModel';
import type { Viewer } from '../domain/access';
import type { Paging } from '../domain/paging';

/**
 * The layout of a folder's zip archive (Girder's `Folder.fileList(subpath=False)` under `ZipGenerator(<folder name>)`):
 * every entry path starts with `<folder name>/`; a folder's readable subfolders come first, depth-first, then its
 * items; an item holding exactly one file named like the item gives `<dir>/<file>`, any other item
 * `<dir>/<item name>/<file>` for each of its files; files whose MIME type is not in a non-empty `mimeFilter` are left
 * out (the "exactly one file" test still counts them, as Girder's does). There are no directory entries, so empty
 * folders and items leave no trace. Children come in insertion order (by `_id`, which grows with creation time).
 *
 * The tree is walked lazily, a page at a time: at any moment it holds one page of children per level of depth, never
 * the whole tree.
 *
 * Entry names are sanitised so that no entry can leave the archive's root directory when extracted:
 * - each folder, item and file name is one path segment: `/` and `\` in it, NUL, the other C0 control characters
 *   and DEL become `_` (`a/b` → `a_b`, as girder_client names downloads);
 * - a segment that is empty, `.` or `..` is prefixed with `_` (`_`, `_.`, `_..`);
 * - in the root segment (the folder's own name) `:` also becomes `_`, so the path can never start with a drive
 *   letter (`C:`) nor with the `word:` prefix the zip writer strips.
 * Paths are therefore always relative, `/`-separated and free of `.`/`..` segments. Different names can sanitise to
 * the same path (`a/b` and `a_b`); such entries, like Girder's, simply share the path.
 */

export interface ZipEntry {
  /** The entry's path in the archive, sanitised. */
  entryPath: string;
  file: FileDoc;
}

/** What the walk reads: permission-filtered child folders, the items of a folder, the files of an item. */
export interface LayoutSource {
  folders: Pick<FolderQueries, 'listChildren'>;
  items: Pick<ItemQueries, 'listInFolder'>;
  files: Pick<FileQueries, 'listForItem'>;
}

export interface LayoutOptions {
  /** MIME types to keep; absent or empty keeps every file (Girder's `if not mimeFilter`). */
  mimeFilter?: readonly unknown[];
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

async function* itemEntries(
  source: LayoutSource,
  item: ItemDoc,
  dir: string,
  options: Required<LayoutOptions>,
): AsyncGenerator<ZipEntry> {
  const fetch = (paging: Paging) => source.files.listForItem(item._id, paging);
  const first = await fetch({ limit: options.pageSize, offset: 0, sort: '_id', sortdir: 1 });
  const single = first.total === 1 && first.rows[0]?.name === item.name;
  const base = single ? dir : `${dir}/${sanitizeSegment(item.name)}`;
  const rest = first.rows.length < options.pageSize ? [] : paged(fetch, options.pageSize, options.pageSize);
  for (const files of [first.rows, rest]) {
    for await (const file of files) {
      if (mimeAccepts(options.mimeFilter, file)) yield { entryPath: `${base}/${sanitizeSegment(file.name)}`, file };
    }
  }
}

async function* folderEntries(
  source: LayoutSource,
  folder: FolderDoc,
  dir: string,
  viewer: Viewer | null,
  options: Required<LayoutOptions>,
): AsyncGenerator<ZipEntry> {
  const subfolders = paged(
    (paging) => source.folders.listChildren({ parentType: 'folder', parentId: folder._id, viewer, paging }),
    options.pageSize,
  );
  for await (const sub of subfolders)
    yield* folderEntries(source, sub, `${dir}/${sanitizeSegment(sub.name)}`, viewer, options);
  for await (const item of paged(
    (paging) => source.items.listInFolder({ folderId: folder._id, paging }),
    options.pageSize,
  )) {
    yield* itemEntries(source, item, dir, options);
  }
}

/** The entries of `folder`'s archive as `viewer` may see them, in archive order. */
export function zipLayout(
  source: LayoutSource,
  folder: FolderDoc,
  viewer: Viewer | null,
  options: LayoutOptions = {},
): AsyncGenerator<ZipEntry> {
  const resolved: Required<LayoutOptions> = {
    mimeFilter: options.mimeFilter ?? [],
    pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE,
  };
  return folderEntries(source, folder, sanitizeRoot(folder.name), viewer, resolved);
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
  for await (const { entryPath, file } of entries) {
    summary.entries += 1;
    summary.bytes += file.size;
    summary.nameBytes += Buffer.byteLength(entryPath);
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
