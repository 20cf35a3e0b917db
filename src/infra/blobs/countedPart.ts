import { Transform } from 'node:stream';
import { TooManyBytesError } from '../../ports/blobStore';
import type { RunningHash } from '../../domain/contentHashes';

/**
 * The pass-through every store streams an upload's part through (`MultipartBlobStore.uploadPart`): it counts the bytes
 * (one more than `length` fails with TooManyBytesError, so a store never takes a chunk longer than announced) and feeds
 * `hasher`, waiting while a threaded hasher is behind, so the hash never falls a whole part behind the bytes.
 * `seen()` tells how many bytes passed: a part that ended short is refused by its store.
 */
export function countedPart(length: number, hasher?: RunningHash): { stream: Transform; seen: () => number } {
  let seen = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > length) {
        callback(new TooManyBytesError());
        return;
      }
      const waiting = hasher?.update(chunk);
      if (!waiting) callback(null, chunk);
      else waiting.then(() => callback(null, chunk), callback);
    },
  });
  return { stream, seen: () => seen };
}
