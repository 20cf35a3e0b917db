import type { BlobDeps } from './writeDeps';
import type { RequestMeta } from './requestMeta';
import type { ProgressContext } from '../bus/progress';
import type { LoadedParent } from '../queries/models';
import type { ImportableBlobStore } from '../ports/blobStore';
import { createFolder } from './folderCommands';
import { createItem } from './itemCommands';
import { importFile, shouldImport, type ImportInput } from './importCommands';
import { importedRef } from '../domain/assetstoreBlobRef';
import { RestError, ValidationError } from '../domain/errors';

/**
 * Import in place from an S3 bucket (Girder's S3 adapter importData): the objects under `importPath` (a key prefix,
 * leading `/` dropped) become items of one file each in the destination folder, and the prefixes below it (`/` as
 * the delimiter) become folders, imported the same way. The files reference the objects by key
 * (`<assetstoreId>:imported:<key>`): nothing is copied, and the service never deletes them. Folders and items are
 * reused and a file is added only when its item has none of that name, so a second import adds nothing twice.
 *
 * As Girder: the prefix is matched as given (`data` also matches `data.txt` and imports `data/` as a folder `data`,
 * `data/` imports what is inside), `leafFoldersAsItems` does not apply to S3, names that would lose leading or
 * trailing whitespace keep it as underscores, and a folder named as an item beside it gets a `/` appended.
 */

/** Girder's safeName: leading and trailing whitespace becomes underscores (names are stripped otherwise). */
const safeName = (name: string) => name.replace(/^\s+|\s+$/g, (space) => '_'.repeat(space.length));

async function folderDoc(deps: BlobDeps, folderId: string): Promise<LoadedParent> {
  const folder = await deps.readModel.folders.get(folderId);
  if (!folder) throw new RestError(`Invalid folder id (${folderId}).`);
  return { type: 'folder', doc: folder };
}

async function importPrefix(
  deps: BlobDeps,
  store: ImportableBlobStore,
  input: ImportInput,
  parent: LoadedParent,
  prefix: string,
  progress: ProgressContext,
  meta: RequestMeta,
): Promise<void> {
  for await (const page of store.listForImport(prefix)) {
    for (const object of page.objects) {
      await progress.update({ message: object.key });
      const name = object.key.slice(object.key.lastIndexOf('/') + 1);
      if (!name) continue;
      if (parent.type !== 'folder')
        throw new ValidationError(`Keys cannot be imported directly underneath a ${parent.type}.`);
      if (!shouldImport(input, name)) continue;
      const itemId = await createItem(
        deps,
        { folder: parent.doc, name: safeName(name), description: '', reuseExisting: true, creatorId: input.userId },
        meta,
      );
      const blobId = importedRef(input.assetstoreId, object.key);
      await importFile(deps, input, itemId, { name, size: object.size, blobId }, meta);
    }
    for (const below of page.prefixes) {
      await progress.update({ message: below });
      const trimmed = below.replace(/\/+$/, '');
      let name = trimmed.slice(trimmed.lastIndexOf('/') + 1);
      if (!name) continue;
      // S3's own way of showing a folder and a file of the same name: the folder keeps its `/`.
      if (parent.type === 'folder' && (await deps.readModel.items.namedInFolder(parent.doc._id, safeName(name))))
        name += '/';
      const folderId = await createFolder(
        deps,
        { parent, name: safeName(name), description: '', reuseExisting: true, creatorId: input.userId },
        meta,
      );
      await importPrefix(deps, store, input, await folderDoc(deps, folderId), below, progress, meta);
    }
  }
}

/** `POST /assetstore/:id/import` into an S3 store. */
export async function importS3Data(
  deps: BlobDeps,
  store: ImportableBlobStore,
  input: ImportInput,
  progress: ProgressContext,
  meta: RequestMeta,
): Promise<void> {
  const importPath = input.importPath.trim().replace(/^\/+/, '');
  await importPrefix(deps, store, input, input.destination, importPath, progress, meta);
}
