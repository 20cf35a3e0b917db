import type { Services } from '../services';
import { ValidationError } from '../domain/errors';
import { SettingKey } from '../domain/settings';
import { checkChunk, remainingBytes } from '../domain/upload';
import { settingNow } from '../queries/settingQueries';
import { loadUpload } from '../commands/fileCommands';

/**
 * Girder's `checkUploadSize` (filesystem and GridFS assetstores): a chunk that does not end the upload must hold at
 * least `core.upload_minimum_chunk_size` bytes (5 MiB by default; 0 turns the rule off). Checked after the upload's own
 * checks (it exists, the caller started it, the offset matches), before any byte is read; a chunk sent without a
 * length (chunked transfer) is not checked, as Girder cannot either.
 */
export async function checkChunkMinimum(
  services: Services,
  input: { uploadId: string; offset: number; userId: string },
  length: number | undefined,
): Promise<void> {
  if (length === undefined) return;
  const { state } = await loadUpload(services, input.uploadId);
  checkChunk(state, input.userId, input.offset);
  const remaining = remainingBytes(state);
  if (length >= remaining) return; // The last chunk, or one too many bytes (refused by the upload itself).
  const minimum = await settingNow(services, SettingKey.UPLOAD_MINIMUM_CHUNK_SIZE);
  if (length < (minimum as number)) throw new ValidationError('Chunk is smaller than the minimum size.');
}
