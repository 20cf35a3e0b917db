import type { LogDeps } from './readDeps';
import { uploadNow } from './uploadQueries';
import type { UploadState } from '../domain/upload';
import { DEFAULT_ASSETSTORE_ID } from '../domain/assetstoreBlobRef';

/** What these reads touch (src/queries/readDeps.ts). */
type Deps = LogDeps;

/** Girder's filters of `GET` and `DELETE /system/uploads` (each optional; all given must match). */
export interface UploadFilters {
  uploadId?: string;
  userId?: string;
  /** The folder or item the upload's file goes to. */
  parentId?: string;
  /** The assetstore the upload's bytes go to (uploads that record none go to the default store). */
  assetstoreId?: string;
  /** Only uploads last written to at least this many days ago. */
  minimumAge?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** `minimumAge` as the latest time (epoch ms) an upload may have last been written to, when given. */
export function minimumAgeCutoff(minimumAge: number | undefined): number | undefined {
  return minimumAge !== undefined ? Date.now() - minimumAge * DAY_MS : undefined;
}

/**
 * The uploads in progress (started, neither completed nor cancelled) that pass the filters, least recently written
 * first (Girder's default sort, `updated`). Upload sessions are event streams with no read model (src/domain/upload.ts),
 * so this reads the `upload-` streams' starts from the log and folds each upload found: a cost that grows with every
 * upload ever started, paid only by this administrator's maintenance listing. One `uploadId` reads that upload alone.
 */
export async function uploadsInProgress(deps: Deps, filters: UploadFilters): Promise<UploadState[]> {
  const ids = filters.uploadId !== undefined ? [filters.uploadId] : await startedUploadIds(deps);
  const cutoff = minimumAgeCutoff(filters.minimumAge);
  const found: UploadState[] = [];
  for (const id of ids) {
    const state = await uploadNow(deps, id);
    const started = state.started;
    if (state.status !== 'active' || !started) continue;
    if (filters.userId !== undefined && started.userId !== filters.userId) continue;
    if (filters.parentId !== undefined && started.parentId !== filters.parentId) continue;
    if (filters.assetstoreId !== undefined && (started.assetstoreId ?? DEFAULT_ASSETSTORE_ID) !== filters.assetstoreId)
      continue;
    if (cutoff !== undefined && Date.parse(state.updated) > cutoff) continue;
    found.push(state);
  }
  return found.sort((a, b) => a.updated.localeCompare(b.updated) || a.uploadId.localeCompare(b.uploadId));
}

async function startedUploadIds(deps: Deps): Promise<string[]> {
  const ids = new Set<string>();
  for await (const event of deps.eventStore.readAll({ streamPrefixes: ['upload-'] })) {
    if (event.type === 'UploadStarted') ids.add((event.data as { uploadId: string }).uploadId);
  }
  return [...ids];
}
