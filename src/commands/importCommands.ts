import fs from 'node:fs';
import path from 'node:path';
import type { RequestMeta } from './requestMeta';
import type { ProgressContext } from '../bus/progress';
import type { LoadedParent } from '../queries/models';
import { createFolder } from './folderCommands';
import { createItem, loadItemStream } from './itemCommands';
import { extensionsOf, type FileRecord } from '../domain/item';
import { importedRef } from '../domain/assetstoreBlobRef';
import { RestError, ValidationError } from '../domain/errors';
import { newId } from '../domain/ids';
import { girderTime } from '../domain/time';
import type { BlobDeps } from './writeDeps';

/**
 * Import in place (Girder's filesystem importData): a directory tree becomes folders, items and files whose bytes are
 * the imported files themselves (src/domain/assetstoreBlobRef.ts `importedRef`): nothing is copied, and the service
 * never deletes them. Every folder and item is created with `reuseExisting` and a file is added only when its item
 * has none of that name, so importing the same path again adds nothing twice.
 */
export interface ImportInput {
  assetstoreId: string;
  importPath: string;
  destination: LoadedParent;
  leafFoldersAsItems: boolean;
  /** Python's `re.match`: anchored at the start of the file name. */
  fileIncludeRegex?: RegExp;
  fileExcludeRegex?: RegExp;
  userId: string;
}

/** Girder's shouldImportFile: exclusion wins over inclusion. */
export function shouldImport(input: Pick<ImportInput, 'fileIncludeRegex' | 'fileExcludeRegex'>, name: string): boolean {
  if (input.fileExcludeRegex?.test(name)) return false;
  return input.fileIncludeRegex ? input.fileIncludeRegex.test(name) : true;
}

const isDirectory = async (p: string) => (await fs.promises.stat(p).catch(() => null))?.isDirectory() ?? false;

/** A directory's entries, sorted (the order of the folders and items created does not depend on the disk). */
const entriesOf = async (dir: string) => (await fs.promises.readdir(dir)).sort();

async function hasOnlyFiles(dir: string, names: string[]): Promise<boolean> {
  for (const name of names) if (await isDirectory(path.join(dir, name))) return false;
  return true;
}

/** Adds an imported file (its bytes: `blobId`) to the item unless the item has a file of that name already. */
export async function importFile(
  deps: BlobDeps,
  input: { userId: string },
  itemId: string,
  bytes: { name: string; size: number; blobId: string },
  meta: RequestMeta,
): Promise<void> {
  const { name } = bytes;
  await deps.commands.handleGroup(meta, async (attempt) => {
    const item = await loadItemStream(deps, attempt, itemId);
    if (Object.values(item.state.files).some((file) => file.name === name)) return { append: [], result: undefined };
    const file: FileRecord = {
      fileId: newId(),
      name,
      mimeType: 'application/octet-stream',
      size: bytes.size,
      blobId: bytes.blobId,
      creatorId: input.userId,
      created: girderTime(),
      exts: extensionsOf(name),
    };
    item.decide({ type: 'AddFile', data: { file } });
    return { append: [item], result: undefined };
  });
}

/** A file of the imported tree, by its path. */
async function importPathFile(
  deps: BlobDeps,
  input: ImportInput,
  itemId: string,
  filePath: string,
  name: string,
  meta: RequestMeta,
): Promise<void> {
  const stat = await fs.promises.stat(filePath);
  const blobId = importedRef(input.assetstoreId, path.resolve(filePath));
  await importFile(deps, input, itemId, { name, size: stat.size, blobId }, meta);
}

async function itemIn(deps: BlobDeps, folderId: string, name: string, input: ImportInput, meta: RequestMeta) {
  const folder = await deps.readModel.folders.get(folderId);
  if (!folder) throw new ValidationError(`No such folder: ${folderId}`, 'id');
  return createItem(deps, { folder, name, description: '', reuseExisting: true, creatorId: input.userId }, meta);
}

/** Girder's _importFileToFolder: the file becomes an item named after it, in a folder. */
async function importFileToFolder(
  deps: BlobDeps,
  input: ImportInput,
  parent: LoadedParent,
  filePath: string,
  name: string,
  meta: RequestMeta,
): Promise<void> {
  if (parent.type !== 'folder')
    throw new ValidationError(`Files cannot be imported directly underneath a ${parent.type}.`);
  const itemId = await itemIn(deps, parent.doc._id, name, input, meta);
  await importPathFile(deps, input, itemId, filePath, name, meta);
}

/** Girder's _importDataAsItem: a directory of files only becomes one item holding them. */
async function importDirectoryAsItem(
  deps: BlobDeps,
  input: ImportInput,
  parent: LoadedParent,
  dir: string,
  names: string[],
  meta: RequestMeta,
): Promise<void> {
  if (parent.type !== 'folder')
    throw new ValidationError(`Files cannot be imported directly underneath a ${parent.type}.`);
  const itemId = await itemIn(deps, parent.doc._id, path.basename(dir), input, meta);
  for (const name of names)
    if (shouldImport(input, name)) await importPathFile(deps, input, itemId, path.join(dir, name), name, meta);
}

async function importTree(
  deps: BlobDeps,
  input: ImportInput,
  parent: LoadedParent,
  dir: string,
  progress: ProgressContext,
  meta: RequestMeta,
  /** Real paths of the directories being imported above this one (a symbolic link back up is not followed). */
  above: Set<string>,
): Promise<void> {
  const names = await entriesOf(dir);
  if (parent.type !== 'folder') {
    for (const name of names)
      if (!(await isDirectory(path.join(dir, name))))
        throw new ValidationError(`Files cannot be imported directly underneath a ${parent.type}.`);
  }
  for (const name of names) {
    await progress.update({ message: name });
    const entry = path.join(dir, name);
    if (!(await isDirectory(entry))) {
      if (shouldImport(input, name)) await importFileToFolder(deps, input, parent, entry, name, meta);
      continue;
    }
    const real = await fs.promises.realpath(entry);
    if (above.has(real)) continue;
    const inner = await entriesOf(entry);
    if (input.leafFoldersAsItems && (await hasOnlyFiles(entry, inner))) {
      await importDirectoryAsItem(deps, input, parent, entry, inner, meta);
      continue;
    }
    const folderId = await createFolder(
      deps,
      { parent, name, description: '', reuseExisting: true, creatorId: input.userId },
      meta,
    );
    const folder = await deps.readModel.folders.get(folderId);
    if (!folder) throw new RestError(`Invalid folder id (${folderId}).`);
    await importTree(deps, input, { type: 'folder', doc: folder }, entry, progress, meta, new Set([...above, real]));
  }
}

/** `POST /assetstore/:id/import` from a filesystem path (Girder's messages). */
export async function importData(
  deps: BlobDeps,
  input: ImportInput,
  progress: ProgressContext,
  meta: RequestMeta,
): Promise<void> {
  const importPath = path.resolve(input.importPath);
  const stat = await fs.promises.stat(importPath).catch(() => null);
  if (!stat) throw new ValidationError(`Not found: ${input.importPath}.`);
  if (!stat.isDirectory()) {
    await progress.update({ message: path.basename(importPath) });
    await importFileToFolder(deps, input, input.destination, importPath, path.basename(importPath), meta);
    return;
  }
  const names = await entriesOf(importPath);
  if (input.leafFoldersAsItems && (await hasOnlyFiles(importPath, names))) {
    if (input.destination.type !== 'folder' && names.length > 0)
      throw new ValidationError(`Files cannot be imported directly underneath a ${input.destination.type}.`);
    await importDirectoryAsItem(deps, input, input.destination, importPath, names, meta);
    return;
  }
  await importTree(
    deps,
    input,
    input.destination,
    importPath,
    progress,
    meta,
    new Set([await fs.promises.realpath(importPath)]),
  );
}
