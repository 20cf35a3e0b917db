import { takesMultipartUploads, type BlobStores, type PartialUploadStore } from '../ports/blobStore';
import type { UntrackedUpload } from '../queries/untrackedUploads';

/** What discarding touches: the stores' adapters and the partial upload files. */
interface Deps {
  blobs: Pick<BlobStores, 'adapterOf'>;
  partialUploads: Pick<PartialUploadStore, 'remove' | 'removeStray'>;
}

/**
 * Discards untracked uploads (src/queries/untrackedUploads.ts), as `DELETE /system/uploads?includeUntracked=true`
 * does (Girder's adapters' `untrackedUploads(…, delete=True)`): a store's upload is aborted (S3's
 * AbortMultipartUpload; GridFS's parts removed), a partial file removed. No event records them: nothing in the log
 * names these bytes.
 */
export async function discardUntrackedUploads(deps: Deps, found: UntrackedUpload[]): Promise<void> {
  for (const entry of found) {
    switch (entry.kind) {
      case 'held': {
        const store = await deps.blobs.adapterOf(entry.assetstoreId);
        if (takesMultipartUploads(store)) await store.abortUpload(entry.upload);
        break;
      }
      case 'partial':
        await deps.partialUploads.remove(entry.uploadId);
        break;
      case 'stray':
        await deps.partialUploads.removeStray(entry.name);
        break;
    }
  }
}
