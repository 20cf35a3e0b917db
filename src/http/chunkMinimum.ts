import type { Services } from '../services';
import { ValidationError } from '../domain/errors';
import { SettingKey } from '../domain/settings';
import { checkChunk, remainingBytes } from '../domain/upload';
import { settingNow } from '../queries/settingQueries';
import { uploadNow } from '../queries/uploadQueries';

/**
 * Girder's `checkUploadSize` (filesystem and GridFS assetstores): a chunk that does not end the upload must hold at
 * least `core.upload_minimum_chunk_size` bytes (5 MiB by default; 0 turns the rule off). It holds for every chunk,
 * wherever it arrives: `POST /file/chunk`, and the first chunk sent in the body of `POST /file`. Checked before any
 * byte is read; a chunk sent without a length (chunked transfer) is not checked, as Girder cannot either.
 */
async function refuseShortChunk(services: Services, length: number, remaining: number): Promise<void> {
  if (length >= remaining) return; // The last chunk, or one too many bytes (refused by the upload itself).
  const minimum = await settingNow(services, SettingKey.UPLOAD_MINIMUM_CHUNK_SIZE);
  if (length < (minimum as number)) throw new ValidationError('Chunk is smaller than the minimum size.');
}

/** `POST /file/chunk`: after the upload's own checks (it exists, the caller started it, the offset matches). */
export async function checkChunkMinimum(
  services: Services,
  input: { uploadId: string; offset: number; userId: string },
  length: number | undefined,
): Promise<void> {
  if (length === undefined) return;
  const state = await uploadNow(services, input.uploadId);
  checkChunk(state, input.userId, input.offset);
  await refuseShortChunk(services, length, remainingBytes(state));
}

/**
 * `POST /file` with the first chunk in its body: refused before the upload starts, so a refused request leaves
 * nothing behind (Girder creates the upload, then refuses the chunk).
 */
export async function checkFirstChunkMinimum(
  services: Services,
  size: number,
  length: number | undefined,
): Promise<void> {
  if (length === undefined || length === 0 || size <= 0) return;
  await refuseShortChunk(services, length, size);
}
