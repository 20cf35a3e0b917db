import type { Services } from '../services';
import { loadUpload } from './fileCommands';
import { isBlobInUse } from './blobReclaim';

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
export async function sweepStorage(services: Services): Promise<StorageSweepReport> {
  // Bytes of files removed with a folder stay for the retention period (restore); expired ones go here too.
  const blobs = await services.blobs.sweep((blobId) => isBlobInUse(services, blobId));
  const { uploads, stray } = await services.partialUploads.list();
  let removedPartialUploads = 0;
  let trimmedPartialUploads = 0;
  for (const name of stray) {
    await services.partialUploads.removeStray(name);
    removedPartialUploads += 1;
  }
  for (const uploadId of uploads) {
    const { state } = await loadUpload(services, uploadId);
    if (state.status === 'active') {
      await services.partialUploads.truncate(uploadId, state.received);
      trimmedPartialUploads += 1;
    } else {
      await services.partialUploads.remove(uploadId);
      removedPartialUploads += 1;
    }
  }
  const report = { ...blobs, removedPartialUploads, trimmedPartialUploads };
  services.logger.info(report, 'storage sweep done');
  return report;
}
