import type { BlobDeps } from './writeDeps';
import type { ContentHashes, RunningHash } from '../domain/contentHashes';

/**
 * The hashes of chunked uploads, taken as their chunks stream in (one pass over the bytes: they are never read again
 * to be hashed). A process keeps the running hash of an upload whose every chunk it has seen, in order; when the last
 * chunk completes the upload there, its hashes are ready. When the chunks were spread over processes (or a chunk
 * failed midway, its bytes partly hashed), there is none, and the finished bytes are read once to hash them.
 */

interface Running {
  hasher: RunningHash;
  /** How many bytes of the upload the hash covers. */
  through: number;
}

/**
 * Running hashes by upload id, per service instance (keyed by its blob stores: two instances in one process, as tests
 * run them, are two processes here); bounded (a dropped one costs a read).
 */
const byInstance = new WeakMap<object, Map<string, Running>>();
const MAX_RUNNING = 1000;

function runningOf(deps: Pick<BlobDeps, 'blobs'>): Map<string, Running> {
  let running = byInstance.get(deps.blobs);
  if (!running) {
    running = new Map();
    byInstance.set(deps.blobs, running);
  }
  return running;
}

function drop(running: Map<string, Running>, uploadId: string): void {
  running.get(uploadId)?.hasher.abort();
  running.delete(uploadId);
}

/**
 * Feeds the chunk at `offset` of an upload through its running hash while `send` streams it: `send` gets the hasher
 * to feed, or none when this process has not seen everything before `offset`. A chunk that fails drops the hash.
 */
export async function hashingChunk<T extends { length: number }>(
  deps: Pick<BlobDeps, 'blobs'>,
  uploadId: string,
  offset: number,
  send: (hasher: RunningHash | undefined) => Promise<T>,
): Promise<T> {
  const running = runningOf(deps);
  let entry = running.get(uploadId);
  if (offset === 0) {
    drop(running, uploadId);
    if (running.size >= MAX_RUNNING) {
      const oldest = running.keys().next();
      if (!oldest.done) drop(running, oldest.value);
    }
    entry = { hasher: deps.blobs.runningHash(), through: 0 };
    running.set(uploadId, entry);
  } else if (entry?.through !== offset) {
    drop(running, uploadId);
    entry = undefined;
  }
  try {
    const sent = await send(entry?.hasher);
    if (entry) entry.through = offset + sent.length;
    return sent;
  } catch (error) {
    // Some of the chunk's bytes may have gone into the hash: the upload's bytes are hashed once at the end.
    if (entry) drop(running, uploadId);
    throw error;
  }
}

/** The hashes of a finished upload of `size` bytes when this process saw every byte; null otherwise. */
export async function finishedUploadHashes(
  deps: Pick<BlobDeps, 'blobs'>,
  uploadId: string,
  size: number,
): Promise<ContentHashes | null> {
  const running = runningOf(deps);
  const entry = running.get(uploadId);
  running.delete(uploadId);
  if (entry?.through !== size) {
    entry?.hasher.abort();
    return null;
  }
  return entry.hasher.digests();
}

/** Drops the running hash of a cancelled upload. */
export function forgetUploadHashes(deps: Pick<BlobDeps, 'blobs'>, uploadId: string): void {
  drop(runningOf(deps), uploadId);
}
