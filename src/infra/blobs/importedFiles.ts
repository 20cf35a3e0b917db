import fs from 'node:fs';
import { Readable } from 'node:stream';
import type { ByteRange } from '../../ports/blobStore';

/**
 * The bytes of files imported in place (src/domain/assetstoreBlobRef.ts `importedRef`): read where they are, never
 * stored, held or deleted by the service (they belong to whoever put them there).
 */
export const importedFiles = {
  async get(filePath: string, range?: ByteRange): Promise<Readable> {
    // Opened before the stream is handed out, so a missing file rejects here as a missing blob does.
    const handle = await fs.promises.open(filePath, 'r');
    if (range && range.end <= range.start) {
      await handle.close();
      return Readable.from([]);
    }
    return handle.createReadStream(range ? { start: range.start, end: range.end - 1 } : {});
  },
  async exists(filePath: string): Promise<boolean> {
    return (await fs.promises.stat(filePath).catch(() => null))?.isFile() ?? false;
  },
};
