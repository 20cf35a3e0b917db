import type { FileDoc, FolderDoc, ItemDoc, Page } from '../../src/ports/readModel';
import type { Viewer } from '../../src/domain/access';
import {
  MAX_ZIP32_ENTRIES,
  needsZip64,
  sanitizeRoot,
  sanitizeSegment,
  summarizeLayout,
  zipLayout,
  type LayoutDeps,
  type ZipEntry,
} from '../../src/queries/zipLayout';
import type { Paging } from '../../src/domain/paging';

/** The archive layout of a folder, walked over an in-memory tree whose listings page like the read model's. */

let seq = 0;
const nextId = () => (++seq).toString(16).padStart(24, '0');

interface Tree {
  folders: FolderDoc[];
  items: ItemDoc[];
  files: FileDoc[];
  /** Folder ids the viewer may not read. */
  hidden: Set<string>;
  /** Every listing call, to check the walk is paged. */
  calls: Paging[];
}

function folder(tree: Tree, parentId: string, name: string, o: { hidden?: boolean } = {}): FolderDoc {
  const doc = {
    _id: nextId(),
    name,
    lowerName: name.toLowerCase(),
    description: '',
    parentCollection: 'folder',
    parentId,
    baseParentType: 'user',
    baseParentId: 'u',
    creatorId: null,
    created: '',
    updated: '',
    size: 0,
    access: { users: [], groups: [] },
    meta: {},
  } as FolderDoc;
  tree.folders.push(doc);
  if (o.hidden) tree.hidden.add(doc._id);
  return doc;
}

function item(
  tree: Tree,
  folderId: string,
  name: string,
  files: { name: string; size?: number; mimeType?: string }[] = [],
): ItemDoc {
  const doc = {
    _id: nextId(),
    name,
    lowerName: name.toLowerCase(),
    description: '',
    folderId,
    baseParentType: 'user',
    baseParentId: 'u',
    creatorId: null,
    created: '',
    updated: '',
    size: 0,
    meta: {},
  } as ItemDoc;
  tree.items.push(doc);
  for (const f of files) {
    tree.files.push({
      _id: nextId(),
      itemId: doc._id,
      name: f.name,
      mimeType: f.mimeType ?? 'application/octet-stream',
      size: f.size ?? 1,
      blobId: 'b',
      creatorId: null,
      created: '',
      exts: [],
    });
  }
  return doc;
}

function page<T extends { _id: string }>(tree: Tree, rows: T[], paging: Paging): Page<T> {
  tree.calls.push(paging);
  expect(paging.sort).toBe('_id');
  const sorted = [...rows].sort((a, b) => a._id.localeCompare(b._id));
  return { rows: sorted.slice(paging.offset, paging.offset + paging.limit), total: sorted.length };
}

function sourceOf(tree: Tree): LayoutDeps {
  return {
    readModel: {
      folders: {
        listChildren: async (o) =>
          page(
            tree,
            tree.folders.filter((f) => f.parentId === o.parentId && (o.viewer !== null || !tree.hidden.has(f._id))),
            o.paging,
          ),
      },
      items: {
        listInFolder: async (o) =>
          page(
            tree,
            tree.items.filter((i) => i.folderId === o.folderId),
            o.paging,
          ),
      },
      files: {
        listForItem: async (itemId, paging) =>
          page(
            tree,
            tree.files.filter((f) => f.itemId === itemId),
            paging,
          ),
      },
    },
  };
}

const newTree = (): Tree => ({ folders: [], items: [], files: [], hidden: new Set(), calls: [] });
const viewer: Viewer = { id: 'v', admin: false, groups: [] };

async function paths(entries: AsyncIterable<ZipEntry>): Promise<string[]> {
  const out: string[] = [];
  for await (const e of entries) out.push(e.entryPath);
  return out;
}

describe('zipLayout', () => {
  it('lists subfolders first (depth-first), then items; single-file items named like the file lose their directory', async () => {
    const tree = newTree();
    const root = folder(tree, 'p', 'Root');
    item(tree, root._id, 'single.txt', [{ name: 'single.txt' }]);
    const a = folder(tree, root._id, 'A');
    item(tree, a._id, 'multi', [{ name: 'one' }, { name: 'two' }]);
    const deep = folder(tree, a._id, 'Deep');
    item(tree, deep._id, 'x', [{ name: 'x' }]);
    folder(tree, root._id, 'Empty');
    item(tree, root._id, 'other', [{ name: 'not-other.bin' }]);
    item(tree, root._id, 'no files');
    item(tree, root._id, 'twice', [{ name: 'twice' }, { name: 'twice' }]);
    expect(await paths(zipLayout(sourceOf(tree), root, viewer))).toEqual([
      'Root/A/Deep/x',
      'Root/A/multi/one',
      'Root/A/multi/two',
      'Root/single.txt',
      'Root/other/not-other.bin',
      'Root/twice/twice',
      'Root/twice/twice',
    ]);
  });

  it('leaves out the folders the viewer may not read', async () => {
    const tree = newTree();
    const root = folder(tree, 'p', 'Root');
    const hidden = folder(tree, root._id, 'Hidden', { hidden: true });
    item(tree, hidden._id, 'secret', [{ name: 'secret' }]);
    item(tree, root._id, 'open', [{ name: 'open' }]);
    expect(await paths(zipLayout(sourceOf(tree), root, null))).toEqual(['Root/open']);
    expect(await paths(zipLayout(sourceOf(tree), root, viewer))).toEqual(['Root/Hidden/secret', 'Root/open']);
  });

  it('keeps only files of the filtered MIME types (an empty filter keeps all), judging "single file" on all files', async () => {
    const tree = newTree();
    const root = folder(tree, 'p', 'Root');
    item(tree, root._id, 'pic.jpeg', [{ name: 'pic.jpeg', mimeType: 'image/jpeg' }]);
    item(tree, root._id, 'mixed', [
      { name: 'a.txt', mimeType: 'text/plain' },
      { name: 'mixed', mimeType: 'image/jpeg' },
    ]);
    const source = sourceOf(tree);
    expect(await paths(zipLayout(source, root, viewer, { mimeFilter: ['image/jpeg'] }))).toEqual([
      'Root/pic.jpeg',
      'Root/mixed/mixed',
    ]);
    expect(await paths(zipLayout(source, root, viewer, { mimeFilter: ['text/plain'] }))).toEqual(['Root/mixed/a.txt']);
    expect(await paths(zipLayout(source, root, viewer, { mimeFilter: [] }))).toHaveLength(3);
    expect(await paths(zipLayout(source, root, viewer, { mimeFilter: ['nothing/else'] }))).toEqual([]);
  });

  it('pages through every listing and keeps insertion order across pages', async () => {
    const tree = newTree();
    const root = folder(tree, 'p', 'Root');
    for (let i = 0; i < 5; i++) folder(tree, root._id, `f${i}`);
    item(
      tree,
      root._id,
      'big',
      Array.from({ length: 7 }, (_, i) => ({ name: `file${i}` })),
    );
    for (let i = 0; i < 4; i++) item(tree, root._id, `i${i}`, [{ name: `i${i}` }]);
    item(tree, tree.folders[1]._id, 'inner', [{ name: 'inner' }]);
    const got = await paths(zipLayout(sourceOf(tree), root, viewer, { pageSize: 2 }));
    expect(got).toEqual([
      'Root/f0/inner',
      ...Array.from({ length: 7 }, (_, i) => `Root/big/file${i}`),
      'Root/i0',
      'Root/i1',
      'Root/i2',
      'Root/i3',
    ]);
    expect(tree.calls.every((p) => p.limit === 2)).toBe(true);
  });

  it('is lazy: nothing below the first entry is read before it is asked for', async () => {
    const tree = newTree();
    const root = folder(tree, 'p', 'Root');
    item(tree, root._id, 'first', [{ name: 'first' }]);
    for (let i = 0; i < 50; i++) item(tree, root._id, `n${i}`, [{ name: `n${i}` }]);
    const walk = zipLayout(sourceOf(tree), root, viewer, { pageSize: 10 });
    await walk.next();
    // One subfolder listing, one item page and the first item's files.
    expect(tree.calls).toHaveLength(3);
    await walk.return(undefined);
  });

  it('sanitises every name so that no entry can leave the archive root', async () => {
    const tree = newTree();
    const root = folder(tree, 'p', '..');
    const dot = folder(tree, root._id, '.');
    item(tree, dot._id, 'a/b', [{ name: 'a/b' }]);
    item(tree, root._id, '..\\..\\evil', [{ name: 'x' }]);
    item(tree, root._id, 'nul\u0000byte', [{ name: 'tab\tand\u007fdel\r\n' }]);
    item(tree, root._id, '/abs', [{ name: '/abs' }]);
    const got = await paths(zipLayout(sourceOf(tree), root, viewer));
    expect(got).toEqual(['_../_./a_b', '_../.._.._evil/x', '_../nul_byte/tab_and_del__', '_../_abs']);
    for (const p of got) {
      const segments = p.split('/');
      expect(segments.some((s) => s === '.' || s === '..' || s === '')).toBe(false);
      expect(p).not.toMatch(/[\\\u0000-\u001f\u007f]/);
      expect(p.startsWith('/')).toBe(false);
    }
  });

  it('sanitizeSegment and sanitizeRoot follow the documented rule', () => {
    expect(sanitizeSegment('')).toBe('_');
    expect(sanitizeSegment('.')).toBe('_.');
    expect(sanitizeSegment('..')).toBe('_..');
    expect(sanitizeSegment('...')).toBe('...');
    expect(sanitizeSegment('.hidden')).toBe('.hidden');
    expect(sanitizeSegment('a\\b/c')).toBe('a_b_c');
    expect(sanitizeSegment('ünïcødé ✓')).toBe('ünïcødé ✓');
    expect(sanitizeSegment('C:')).toBe('C:');
    expect(sanitizeRoot('C:')).toBe('C_');
    expect(sanitizeRoot('data:set')).toBe('data_set');
    expect(sanitizeRoot('..')).toBe('_..');
  });
});

describe('summarizeLayout and needsZip64', () => {
  it('counts entries, bytes and name bytes', async () => {
    const tree = newTree();
    const root = folder(tree, 'p', 'R');
    item(tree, root._id, 'é', [{ name: 'é', size: 10 }]);
    item(tree, root._id, 'b', [{ name: 'b', size: 5 }]);
    expect(await summarizeLayout(zipLayout(sourceOf(tree), root, viewer))).toEqual({
      entries: 2,
      bytes: 15,
      nameBytes: 4 + 3,
    });
  });

  it('asks for zip64 from 65535 entries or when sizes may pass 32 bits', () => {
    expect(needsZip64({ entries: MAX_ZIP32_ENTRIES, bytes: 0, nameBytes: 0 })).toBe(false);
    expect(needsZip64({ entries: 65535, bytes: 0, nameBytes: 0 })).toBe(true);
    expect(needsZip64({ entries: 1, bytes: 2 ** 31, nameBytes: 10 })).toBe(false);
    expect(needsZip64({ entries: 1, bytes: 2 ** 32, nameBytes: 10 })).toBe(true);
    expect(needsZip64({ entries: 1, bytes: 0xffffffff - 100, nameBytes: 10 })).toBe(true);
  });
});
