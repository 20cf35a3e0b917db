import { isBlobInUse } from './blobReclaim';
import type { UploadDeps } from './writeDeps';
import { uploadNow } from '../queries/uploadQueries';

export interface StorageSweepReport {
  removedBlobs: number;
  removedTemporary: number;
  removedPartialUploads: number;
  trimmedPartialUploads: number;
}

/**
 * The startup sweep, run by bootstrap once the read models have caught up with the log and before any request is
 * served (so no put, chunk or reclaim is in flight in this process):
 *  - blobs: temporary files of interrupted puts go, and so does every blob no file in the read model references
 *    (the bytes of a commit that failed after its put, or of a reclaim that failed after its commit);
 *  - partial uploads: the bytes of uploads that are not active any more (completed, cancelled, or never recorded)
 *    go; an active upload keeps exactly the bytes its record says were received (an interrupted chunk's tail is cut
 *    off), so the client can resume at `GET /file/offset`.
 */
export async function sweepStorage(deps: UploadDeps): Promise<StorageSweepReport> {
  // Bytes of files removed with a folder stay for the retention period (restore); expired ones go here too.
  const blobs = await deps.blobs.sweep((blobId) => isBlobInUse(deps, blobId));
  const { uploads, stray } = await deps.partialUploads.list();
  let removedPartialUploads = 0;
  let trimmedPartialUploads = 0;
  for (const name of stray) {
    await deps.partialUploads.removeStray(name);
    removedPartialUploads += 1;
  }
  for (const uploadId of uploads) {
    const state = await uploadNow(deps, uploadId);
    if (state.status === 'active') {
      await deps.partialUploads.truncate(uploadId, state.received);
      trimmedPartialUploads += 1;
    } else {
      await deps.partialUploads.remove(uploadId);
      removedPartialUploads += 1;
    }
  }
  const report = { ...blobs, removedPartialUploads, trimmedPartialUploads };
  deps.logger.info(report, 'storage sweep done');
  return report;
}
