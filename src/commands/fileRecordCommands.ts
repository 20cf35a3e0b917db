import type { FileDoc, ItemDoc } from '../ports/readModel';
import type { RequestMeta } from './requestMeta';
import { loadItemStream } from './itemCommands';
import type { FileRecord } from '../domain/item';
import { newId } from '../domain/ids';
import { ownValue } from '../domain/ownMap';
import { girderTime } from '../domain/time';
import type { BlobDeps } from './writeDeps';

/**
 * Writes to a file's record (not its bytes, which src/commands/fileCommands.ts handles): Girder's `PUT /file/:id`
 * and `POST /file/:id/copy`. A file's events are on its item's stream.
 */

/** `PUT /file/:id`: a new name (stripped by the route) and/or MIME type; nothing given changes nothing. */
export async function updateFile(
  deps: BlobDeps,
  file: FileDoc,
  change: { name?: string; mimeType?: string },
  meta: RequestMeta,
): Promise<void> {
  await deps.commands.handleGroup(meta, async (attempt) => {
    const item = await loadItemStream(deps, attempt, file.itemId);
    item.decide({ type: 'UpdateFile', data: { fileId: file._id, ...change } });
    return { append: [item], result: undefined };
  });
}

/**
 * `POST /file/:id/copy` (Girder's copyFile): a new file in `item` sharing the source's bytes (no byte is copied),
 * with the source's record plus who copied it, when. FileCopied goes on the source's stream with its expected
 * revision, so the copy conflicts with a concurrent delete of the source; the blob is held until the copy is
 * visible, so a concurrent reclaim keeps it. A copy into the source's own item is one append of both events.
 * Resolves with the new file's id.
 */
export async function copyFile(
  deps: BlobDeps,
  input: { file: FileDoc; item: ItemDoc; copierId: string },
  meta: RequestMeta,
): Promise<string> {
  const { file, item } = input;
  await deps.blobs.hold(file.blobId);
  try {
    return await deps.commands.handleGroup(meta, async (attempt) => {
      const source = await loadItemStream(deps, attempt, file.itemId);
      const copyFileId = newId();
      source.decide({ type: 'RecordFileCopy', data: { fileId: file._id, copyFileId, toItemId: item._id } });
      // The source's record as its item's state holds it (decided above that it is there).
      const {
        copyOfFile: _of,
        copierId: _by,
        copied: _at,
        ...record
      } = ownValue(source.state.files, file._id) as FileRecord;
      const copy: FileRecord = {
        ...record,
        fileId: copyFileId,
        copyOfFile: file._id,
        copierId: input.copierId,
        copied: girderTime(),
      };
      // A copy into the source's own item: both events on the one stream, in one append.
      const destination = item._id === file.itemId ? source : await loadItemStream(deps, attempt, item._id);
      destination.decide({ type: 'AddFile', data: { file: copy } });
      return { append: destination === source ? [source] : [source, destination], result: copyFileId };
    });
  } finally {
    deps.blobs.release(file.blobId);
  }
}
