import type { Services } from '../services';

/**
 * Deletes the blobs among `blobIds` that no file references any more. Call it after the command that dropped the
 * references has committed and the read models show it (`commands.run` resolved): the ticket is taken before the
 * reference check, so a blob stored or copied again meanwhile is kept (see src/ports/blobStore.ts). A failure here
 * only leaves an unreferenced blob behind, which the startup sweep removes; it never fails the request.
 */
export async function reclaimBlobs(services: Services, blobIds: Iterable<string>): Promise<void> {
  for (const blobId of new Set(blobIds)) {
    try {
      const ticket = services.blobs.deletionTicket(blobId);
      if (await services.readModel.files.isBlobReferenced(blobId)) continue;
      await services.blobs.delete(blobId, ticket);
    } catch (error) {
      services.logger.warn({ err: error, blobId }, 'could not reclaim blob; the startup sweep will');
    }
  }
}
