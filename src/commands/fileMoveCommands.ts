import { Transform, pipeline } from 'node:stream';
import type { BlobDeps } from './writeDeps';
import type { FileDoc } from '../ports/readModel';
import type { RequestMeta } from './requestMeta';
import type { ProgressContext } from '../bus/progress';
import { reclaimBlobs } from './blobReclaim';
import { withStoredBlob } from './fileCommands';
import { itemDecider, itemStream } from '../domain/item';
import { parseBlobRef } from '../domain/assetstoreBlobRef';
import { RestError } from '../domain/errors';

/**
 * `PUT /file/:id/move` (Girder's Upload.moveFileToAssetstore): the file's bytes are read from the store that holds
 * them and stored into `assetstoreId` (hashed as they pass), then one `FileMoved` event points the file at the new
 * copy. The old bytes stay held while they are read, and are released afterwards like any replaced bytes: deleted
 * once nothing references them and no folder removed within the retention window does (imported bytes never are).
 * A file already in that store is left as it is. Resolves with whether the file was moved.
 */
export async function moveFile(
  deps: BlobDeps,
  input: { file: FileDoc; assetstoreId: string },
  progress: ProgressContext,
  meta: RequestMeta,
): Promise<boolean> {
  const { file, assetstoreId } = input;
  if (parseBlobRef(file.blobId).assetstoreId === assetstoreId) return false;
  const from = file.blobId;
  await deps.blobs.hold(from);
  try {
    const source = await deps.blobs.get(from);
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        progress.update({ increment: chunk.length }).then(() => callback(null, chunk), callback);
      },
    });
    await withStoredBlob(
      deps,
      pipeline(source, counted, () => undefined),
      async (blob) => {
        if (blob.size !== file.size)
          throw new RestError(`Read ${blob.size} bytes of the file, but it should be ${file.size} bytes.`);
        await deps.commands.handle(itemStream(file.itemId), itemDecider, meta, (item) =>
          item.decide({
            type: 'MoveFile',
            data: { fileId: file._id, fromBlobId: from, blobId: blob.blobId, sha512: blob.sha512 },
          }),
        );
      },
      assetstoreId,
    );
  } finally {
    deps.blobs.release(from);
  }
  await reclaimBlobs(deps, [from]);
  return true;
}
