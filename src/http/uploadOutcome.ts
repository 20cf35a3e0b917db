import type { RouteContext } from './routeTable';
import type { Services } from '../services';
import type { UploadOutcome } from '../commands/uploadCommands';
import type { UploadState } from '../domain/upload';
import type { ClientRequest, DirectUploadStart } from '../ports/blobStore';
import { takesDirectUploads } from '../ports/blobStore';
import { DEFAULT_ASSETSTORE_ID } from '../domain/assetstoreBlobRef';
import { fileView, uploadView } from '../queries/itemQueries';
import { currentFile } from '../queries/fileQueries';
import { contentDisposition } from './contentDisposition';

type View = Record<string, unknown>;

/** Girder's `s3` of a direct upload: where its bytes go and its first request (a new signature each time). */
export async function directStart(services: Services, state: UploadState): Promise<DirectUploadStart | null> {
  const started = state.started;
  if (!started?.direct) return null;
  const store = await services.blobs.adapterOf(started.assetstoreId ?? DEFAULT_ASSETSTORE_ID);
  if (!takesDirectUploads(store)) return null;
  return store.startDirect(started.direct.key, {
    size: started.size,
    mimeType: started.mimeType,
    contentDisposition: contentDisposition(started.name),
    userId: started.userId,
  });
}

/**
 * The upload record, with Girder's `behavior: "s3"` and `s3` when the upload was offered the direct path (its store
 * is S3 with `redirect` on): `chunked`, `chunkLength`, `relpath`, `key` and the presigned `request`, which is the
 * first request of the upload, or (`part`) the upload of the part just signed.
 */
export async function uploadAnswer(
  services: Services,
  state: UploadState,
  part?: { s3UploadId: string; partNumber: number; request: ClientRequest },
): Promise<View> {
  const view = uploadView(state);
  const start = await directStart(services, state);
  if (!start) return view;
  const s3 = part ? { ...start, uploadId: part.s3UploadId, partNumber: part.partNumber, request: part.request } : start;
  return { ...view, behavior: 's3', s3 };
}

/** The response to an upload step: the upload record, or the finished file (after the `data.process` event). */
export async function outcomeView(
  services: Services,
  outcome: UploadOutcome,
  ctx: Pick<RouteContext, 'principal'>,
  reference?: string,
): Promise<View> {
  if (outcome.kind === 'upload') return uploadAnswer(services, outcome.state);
  const view = fileView(await currentFile(services, outcome.fileId), ctx.principal.viewer);
  await services.hooks.trigger('data.process', {
    file: view,
    userId: ctx.principal.user?._id ?? null,
    ...(reference !== undefined ? { reference } : {}),
  });
  return view;
}
