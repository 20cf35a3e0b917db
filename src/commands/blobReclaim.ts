import type { BlobDeps } from './writeDeps';

/**
 * Deletes the blobs among `blobIds` that no file references any more (nor a file removed with a folder less than
 * BLOB_RETENTION_DAYS ago, see {@link isBlobInUse}). Call it after the command that dropped the
 * references has committed and the read models show it (the command's handle resolved): the ticket is taken before the
 * reference check, so a blob stored or copied again meanwhile is kept (see src/ports/blobStore.ts). A failure here
 * only leaves an unreferenced blob behind, which the startup sweep removes; it never fails the request.
 */
export async function reclaimBlobs(deps: BlobDeps, blobIds: Iterable<string>, now = Date.now()): Promise<void> {
  for (const blobId of new Set(blobIds)) {
    try {
      const ticket = deps.blobs.deletionTicket(blobId);
      if (await isBlobInUse(deps, blobId, now)) continue;
      await deps.blobs.delete(blobId, ticket);
    } catch (error) {
      deps.logger.warn({ err: error, blobId }, 'could not reclaim blob; the startup sweep will');
    }
  }
}

/**
 * Start of the retention window: files removed by a folder delete or clear at or after this time keep their bytes
 * (BLOB_RETENTION_DAYS), so that the folder can still be restored.
 */
export function retentionStart(deps: BlobDeps, now = Date.now()): string {
  return new Date(now - deps.config.blobRetentionDays * 86_400_000).toISOString();
}

/** Whether a live file references the bytes, or a file removed with a folder within the retention window does. */
export async function isBlobInUse(deps: BlobDeps, blobId: string, now = Date.now()): Promise<boolean> {
  if (await deps.readModel.files.isBlobReferenced(blobId)) return true;
  return deps.readModel.history.isBlobRetained(blobId, retentionStart(deps, now));
}

/**
 * The purge of retained bytes: reclaims the blobs of files removed by folder deletes or clears whose retention ended
 * in [from, to) (the window since the last purge), unless something else still uses them. Returns where the next
 * purge starts. Run periodically by {@link startRetentionPurge}; the startup sweep covers everything before.
 */
export async function purgeExpiredBlobs(deps: BlobDeps, from: string, now = Date.now()): Promise<string> {
  const history = deps.readModel.history;
  const to = retentionStart(deps, now);
  if (to <= from) return from;
  await reclaimBlobs(deps, await history.blobIdsRemovedBetween(from, to), now);
  return to;
}

/** How often the retention purge runs. */
const PURGE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Purges expired retained bytes every hour from now on (the startup sweep did everything up to now); returns a stop.
 */
export function startRetentionPurge(deps: BlobDeps, intervalMs = PURGE_INTERVAL_MS): () => void {
  let from = retentionStart(deps);
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    purgeExpiredBlobs(deps, from)
      .then((next) => {
        from = next;
      })
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'retention purge failed; it runs again later'))
      .finally(() => {
        running = false;
      });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
