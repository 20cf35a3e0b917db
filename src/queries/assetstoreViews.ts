import fs from 'node:fs';
import type { LogDeps, ReadModelDeps } from './readDeps';
import { streamState } from './streamState';
import {
  ASSETSTORES_STREAM,
  AssetstoreType,
  findAssetstore,
  type AssetstoreRecord,
  type AssetstoreState,
} from '../domain/assetstore';
import type { AssetstoreDecider } from '../ports/blobStore';
import { RestError } from '../domain/errors';
import { blobRefsOf } from '../domain/assetstoreBlobRef';
import type { Paging } from '../domain/paging';
import type { Viewer } from '../domain/access';
import { fileView } from './itemQueries';

/** What these reads touch (src/queries/readDeps.ts). */
type Deps = ReadModelDeps<'files'>;

type View = Record<string, unknown>;

/** What a read of the stores themselves touches: their stream, folded by their decider. */
export type AssetstoresDeps = LogDeps & { assetstores: Pick<AssetstoreDecider, 'initialState' | 'evolve'> };

/**
 * The assetstores now, folded from their stream. Like settings they are a handful of small events, read from the log
 * itself (always current, in every process) rather than kept in a read model.
 */
export async function assetstoresNow(deps: AssetstoresDeps): Promise<AssetstoreState> {
  return (await streamState(deps, ASSETSTORES_STREAM, deps.assetstores)).state;
}

/** An assetstore by id: Girder's modelParam message when there is none. */
export async function assetstoreById(deps: AssetstoresDeps, assetstoreId: string): Promise<AssetstoreRecord> {
  const store = findAssetstore(await assetstoresNow(deps), assetstoreId);
  if (!store) throw new RestError(`Invalid assetstore id (${assetstoreId}).`);
  return store;
}

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
