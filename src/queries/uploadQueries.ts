import type { LogDeps } from './readDeps';
import { streamState } from './streamState';
import { uploadDecider, uploadStateFor, uploadStream, type UploadState } from '../domain/upload';

/**
 * An upload's state now, folded from its stream (upload sessions keep no read model: src/domain/upload.ts); an id
 * no upload has reads as a fresh session of that id, whose status says it does not exist. The routes of the upload
 * lifecycle read it, and so do its commands before they decide (they append through `openUpload` in their attempt).
 */
export async function uploadNow(deps: LogDeps, uploadId: string): Promise<UploadState> {
  const loaded = await streamState(deps, uploadStream(uploadId), uploadDecider);
  return loaded.exists ? loaded.state : uploadStateFor(uploadId);
}
