import { assetstoresNow, type AssetstoresDeps } from './assetstoreViews';
import { minimumAgeCutoff, uploadsInProgress, type UploadFilters } from './uploadsInProgress';
import type { BlobStores, HeldUpload, PartialUploadStore } from '../ports/blobStore';
import { AssetstoreType, type AssetstoreRecord } from '../domain/assetstore';
import type { UploadState } from '../domain/upload';
import type { LogDeps } from './readDeps';
import { DEFAULT_ASSETSTORE_ID } from '../domain/assetstoreBlobRef';
import { girderTime } from '../domain/time';

/** What these reads touch: the assetstores (their stream, their adapters), the partial upload files and the log. */
type Deps = AssetstoresDeps & {
  blobs: Pick<BlobStores, 'uploadsHeldIn'>;
  partialUploads: Pick<PartialUploadStore, 'list' | 'modifiedAt'>;
};

/**
 * Bytes of uploads that no upload in progress records (Girder's "untracked uploads"): a store's multipart upload or
 * set of parts (`held`, named by the store as `s3` or `gridfs`), the partial file of an upload that ended (`partial`)
 * and an entry of the partial upload directory that names no upload (`stray`).
 */
export type UntrackedUpload =
  | { kind: 'held'; assetstoreId: string; storeType: 's3' | 'gridfs'; upload: HeldUpload }
  | { kind: 'partial'; uploadId: string }
  | { kind: 'stray'; name: string };

export interface UntrackedListing {
  found: UntrackedUpload[];
  /** Stores that could not be opened or listed (their leftovers wait for the next call): name, and what failed. */
  unreachable: { name: string; reason: string }[];
}

/** The name a store's entries carry their upload under (Girder's S3 adapter: `s3`). */
const heldName = (store: AssetstoreRecord) =>
  store.settings.type === AssetstoreType.S3 ? 's3' : store.settings.type === AssetstoreType.GRIDFS ? 'gridfs' : null;

/**
 * Every upload a store holds (none for a store that takes no multipart uploads), or why they could not be listed (the
 * store cannot be reached, or is gone).
 */
export async function heldUploadsOf(
  deps: { blobs: Pick<BlobStores, 'uploadsHeldIn'> },
  assetstoreId: string,
): Promise<{ uploads: HeldUpload[] } | { failure: string }> {
  return deps.blobs.uploadsHeldIn(assetstoreId).then(
    (uploads) => ({ uploads }),
    (error: unknown) => ({ failure: error instanceof Error ? error.message : String(error) }),
  );
}

const pairOf = (key: string, uploadId: string) => JSON.stringify([key, uploadId]);

/**
 * Whether an upload in progress records a held upload, in any store (as Girder hands every adapter all known uploads:
 * a store whose prefix lies inside another's `uploads/` keys is listed by both): the store's multipart upload it
 * began, or the client's multipart upload of its direct upload, any upload to the direct key while the client has not
 * yet said which.
 */
function trackedBy(active: UploadState[]): (held: HeldUpload) => boolean {
  const begun = new Set<string>();
  const direct = new Map<string, string | undefined>();
  for (const { started, s3UploadId } of active) {
    if (started?.storeUpload) begun.add(pairOf(started.storeUpload.key, started.storeUpload.uploadId));
    if (started?.direct) direct.set(started.direct.key, s3UploadId);
  }
  return (held) => {
    if (begun.has(pairOf(held.key, held.uploadId))) return true;
    if (!direct.has(held.key)) return false;
    const named = direct.get(held.key);
    return named === undefined || named === held.uploadId;
  };
}

/**
 * Whether an upload in progress into another store than `assetstoreId` records a held upload: what a store deleted
 * keeps (a store nested in its keys holds some of the same uploads; the deleted store's own go with it, as in Girder).
 */
export async function trackedElsewhere(deps: LogDeps, assetstoreId: string): Promise<(held: HeldUpload) => boolean> {
  const active = await uploadsInProgress(deps, {});
  return trackedBy(active.filter(({ started }) => (started?.assetstoreId ?? DEFAULT_ASSETSTORE_ID) !== assetstoreId));
}

/**
 * The untracked uploads of every store (only `assetstoreId`'s when given; the partial upload directory belongs to no
 * store, so only without it), each last written to at least `minimumAge` days ago when given (a held upload by its
 * newest part or its start, a partial file by its modification time). The stores are listed before the uploads in
 * progress are read: an upload that began its store's upload meanwhile is then seen as tracked. One that began it
 * before the listing and records it after the read (a few milliseconds, between S3's CreateMultipartUpload and the
 * UploadStarted event) is not, as in Girder.
 */
export async function untrackedUploads(
  deps: Deps,
  filters: Pick<UploadFilters, 'assetstoreId' | 'minimumAge'>,
): Promise<UntrackedListing> {
  const embedded = filters.assetstoreId === undefined ? await deps.partialUploads.list() : { uploads: [], stray: [] };
  const stores = (await assetstoresNow(deps)).stores.filter(
    (store) => filters.assetstoreId === undefined || store.assetstoreId === filters.assetstoreId,
  );
  const unreachable: UntrackedListing['unreachable'] = [];
  const held: { store: AssetstoreRecord; uploads: HeldUpload[] }[] = [];
  for (const store of stores) {
    const listed = await heldUploadsOf(deps, store.assetstoreId);
    if ('failure' in listed) unreachable.push({ name: store.name, reason: listed.failure });
    else held.push({ store, uploads: listed.uploads });
  }

  const active = await uploadsInProgress(deps, {});
  const activeIds = new Set(active.map((upload) => upload.uploadId));
  const tracked = trackedBy(active);
  const cutoff = minimumAgeCutoff(filters.minimumAge);
  // Every entry by the same age rule: last written at least `minimumAge` days ago (a partial file by its mtime).
  const oldEnough = async (name: string): Promise<boolean> => {
    if (cutoff === undefined) return true;
    const modified = await deps.partialUploads.modifiedAt(name);
    return modified !== null && modified <= cutoff;
  };
  const found: UntrackedUpload[] = [];
  for (const uploadId of embedded.uploads)
    if (!activeIds.has(uploadId) && (await oldEnough(uploadId))) found.push({ kind: 'partial', uploadId });
  for (const name of embedded.stray) if (await oldEnough(name)) found.push({ kind: 'stray', name });
  for (const { store, uploads } of held) {
    const storeType = heldName(store);
    if (!storeType) continue;
    for (const upload of uploads) {
      if (tracked(upload)) continue;
      if (cutoff !== undefined && (upload.updated ?? upload.created) > cutoff) continue;
      found.push({ kind: 'held', assetstoreId: store.assetstoreId, storeType, upload });
    }
  }
  return { found, unreachable };
}

/**
 * An untracked upload as `GET` and `DELETE /system/uploads` list it: a store's as Girder's S3 adapter does
 * (`{"s3": {"uploadId", "key", "created"}}`), with its store's id, and for GridFS when its newest part was stored and
 * how many bytes the parts hold; a partial file by its name.
 */
export function untrackedUploadView(entry: UntrackedUpload): Record<string, unknown> {
  switch (entry.kind) {
    case 'held': {
      const { uploadId, key, created, updated, size } = entry.upload;
      return {
        [entry.storeType]: {
          uploadId,
          key,
          created: girderTime(new Date(created)),
          ...(updated !== undefined ? { updated: girderTime(new Date(updated)) } : {}),
          ...(size !== undefined ? { size } : {}),
        },
        assetstoreId: entry.assetstoreId,
      };
    }
    case 'partial':
      return { _modelType: 'untrackedUpload', name: entry.uploadId };
    case 'stray':
      return { _modelType: 'untrackedUpload', name: entry.name };
  }
}
