import fs from 'node:fs';
import type { ReadModelDeps } from './readDeps';
import { AssetstoreType, type AssetstoreRecord, type AssetstoreState } from '../domain/assetstore';
import { blobRefsOf } from '../domain/assetstoreBlobRef';
import type { Paging } from '../domain/paging';
import type { Viewer } from '../domain/access';
import { fileView } from './itemQueries';

/** What these reads touch (src/queries/readDeps.ts). */
type Deps = ReadModelDeps<'files'>;

type View = Record<string, unknown>;

/** An assetstore document as Girder answers it: its fields, its type's settings and whether it is the current one. */
export function assetstoreView(state: AssetstoreState, store: AssetstoreRecord): View {
  return {
    _id: store.assetstoreId,
    name: store.name,
    created: store.created,
    current: state.currentId === store.assetstoreId,
    ...store.settings,
    // Stores made before the setting existed redirect, as Girder's do.
    ...(store.settings.type === AssetstoreType.S3 ? { redirect: store.settings.redirect ?? true } : {}),
  };
}

/**
 * Girder's capacityInfo: free and total bytes where the store can tell (a filesystem store's disk), else nulls.
 * Decision: no reserve is subtracted (Girder keeps 10 GiB aside to refuse uploads early; this service does not
 * refuse on it, so it reports the disk as it is).
 */
async function capacityOf(store: AssetstoreRecord): Promise<{ free: number | null; total: number | null }> {
  if (store.settings.type !== AssetstoreType.FILESYSTEM) return { free: null, total: null };
  try {
    const stats = await fs.promises.statfs(store.settings.root);
    return { free: stats.bavail * stats.bsize, total: stats.blocks * stats.bsize };
  } catch {
    return { free: null, total: null };
  }
}

/** Girder's addComputedInfo: the view with `capacity` and `hasFiles`. */
export async function assetstoreWithComputedInfo(
  deps: Deps,
  state: AssetstoreState,
  store: AssetstoreRecord,
): Promise<View> {
  return {
    ...assetstoreView(state, store),
    capacity: await capacityOf(store),
    hasFiles: await deps.readModel.files.anyInAssetstore(blobRefsOf(store.assetstoreId)),
  };
}

/**
 * `GET /assetstore/:id/files`: one page of the files whose bytes the store holds, each with `assetstoreId` (site
 * administrators see which store holds a file, as Girder's file filter shows them).
 */
export async function assetstoreFiles(
  deps: Deps,
  store: AssetstoreRecord,
  paging: Paging,
  viewer: Viewer | null,
): Promise<{ rows: View[]; total: number }> {
  const page = await deps.readModel.files.listInAssetstore(blobRefsOf(store.assetstoreId), paging);
  return { rows: page.rows.map((file) => fileView(file, viewer)), total: page.total };
}
