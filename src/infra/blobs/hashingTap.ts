import crypto from 'node:crypto';
import path from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import type { ContentHashes, RunningHash } from '../../domain/contentHashes';
import { startWorkerThread } from '../startWorkerThread';
import { WorkerCalls } from '../workerCalls';

/** A batch of a stream's bytes for the hashing thread; `end` asks for the digest (or drops the stream's hash). */
export interface Sha512Request {
  id: number;
  stream: number;
  bytes?: Uint8Array;
  end?: 'digest' | 'abort';
}

export interface Sha512Reply {
  id: number;
  digest?: string;
  /** The request's batch buffer, moved back for reuse. */
  returned?: ArrayBuffer;
}

/** Bytes per message to the hashing thread: few messages, each one copy into a buffer that is then moved. */
const BATCH_BYTES = 1024 * 1024;
/** Batches sent and not yet hashed, per stream, before the stream waits for the thread (bounds what is buffered). */
const MAX_BATCHES_IN_FLIGHT = 8;

/** Batch buffers the thread gave back, to fill again (at most this many are kept). */
const POOL_LIMIT = 32;
const pool: Buffer[] = [];
const batchBuffer = (): Buffer => pool.pop() ?? Buffer.allocUnsafeSlow(BATCH_BYTES);

/** One thread for the whole process: it starts with the first blob stored and keeps nothing alive when idle. */
let thread: WorkerCalls<Sha512Reply, string | undefined> | null = null;
function hashingThread(): WorkerCalls<Sha512Reply, string | undefined> {
  thread ??= new WorkerCalls({
    name: 'hashing thread',
    spawn: () => startWorkerThread(path.join(__dirname, 'sha512Thread'), __filename.endsWith('.js'), null),
    settle: (reply) => {
      if (reply.returned && pool.length < POOL_LIMIT) pool.push(Buffer.from(reply.returned));
      return reply.digest;
    },
  });
  return thread;
}
let nextStream = 1;

/**
 * The hashes of bytes fed to it in order (src/domain/contentHashes.ts), across as many streams as carry them (the
 * chunks of one upload, one request each): `update` with each chunk (and wait when it returns a promise), then
 * `digests()` once, or `abort()`.
 *
 * The SHA-256 (the blob id) is taken on the calling thread; the SHA-512 on the hashing thread, in parallel, so that
 * the second hash costs the upload no time while a core is free (on one thread the two ran one after the other:
 * SHA-512 alone hashes at about two thirds of SHA-256's speed here). The bytes go over in 1 MiB batches, copied once
 * into a buffer that is then moved to the thread and back (buffers are reused), and at most 8 batches are in flight:
 * when the thread falls behind, `update` returns a promise to wait for.
 */
export class ThreadedHasher implements RunningHash {
  private readonly sha256 = crypto.createHash('sha256');
  private readonly stream = nextStream++;
  private size = 0;
  private batch = batchBuffer();
  private filled = 0;
  private readonly inFlight: Promise<void>[] = [];
  private failure: Error | null = null;
  private settled = false;

  update(chunk: Buffer): Promise<void> | undefined {
    if (this.settled) throw new Error('ThreadedHasher.update() after digests() or abort().');
    this.sha256.update(chunk);
    this.size += chunk.length;
    for (let offset = 0; offset < chunk.length;) {
      const n = Math.min(chunk.length - offset, BATCH_BYTES - this.filled);
      chunk.copy(this.batch, this.filled, offset, offset + n);
      this.filled += n;
      offset += n;
      if (this.filled === BATCH_BYTES) this.send();
    }
    const excess = this.inFlight.length - MAX_BATCHES_IN_FLIGHT;
    if (excess <= 0 && !this.failure) return undefined;
    return Promise.all(this.inFlight.splice(0, Math.max(excess, 0))).then(() => {
      if (this.failure) throw this.failure;
    });
  }

  /** The hashes of every byte fed so far; the hasher is done with. */
  async digests(): Promise<ContentHashes> {
    if (this.settled) throw new Error('ThreadedHasher.digests() twice, or after abort().');
    this.settled = true;
    const sha512 = await hashingThread().call(...this.request('digest'));
    if (this.failure) throw this.failure;
    if (sha512 === undefined) throw new Error('The hashing thread answered no digest.');
    return { sha256: this.sha256.digest('hex'), sha512, size: this.size };
  }

  /** Drops the running hashes (the thread's reply is not waited for). */
  abort(): void {
    if (this.settled) return;
    this.settled = true;
    if (thread) thread.call(...this.request('abort')).catch(() => undefined);
  }

  /** Sends the full batch; a failure of the thread fails the next `update` that waits, or `digests()`. */
  private send(): void {
    const sent = hashingThread()
      .call(...this.request())
      .then(
        () => undefined,
        (error: unknown) => {
          this.failure ??= error instanceof Error ? error : new Error(String(error));
        },
      );
    this.inFlight.push(sent);
  }

  /** The message for the bytes batched so far (moved to the thread, the batch starts afresh), with `end` if given. */
  private request(end?: 'digest' | 'abort'): [(id: number) => Sha512Request, ArrayBuffer[]] {
    const bytes = end === 'abort' || this.filled === 0 ? undefined : this.batch.subarray(0, this.filled);
    // Batch buffers are ours alone (allocUnsafeSlow, not the shared pool), never a SharedArrayBuffer.
    const transfer = bytes ? [this.batch.buffer as ArrayBuffer] : [];
    if (bytes) {
      this.batch = batchBuffer();
      this.filled = 0;
    }
    const stream = this.stream;
    return [(id) => ({ id, stream, ...(bytes ? { bytes } : {}), ...(end ? { end } : {}) }), transfer];
  }
}

/**
 * A pass-through stream that takes the hashes of what flows through it with a ThreadedHasher: put it between a
 * source and where the bytes go, and read `digests()` once the pipeline has finished.
 */
export class HashingTap extends Transform {
  private readonly hasher = new ThreadedHasher();
  private hashes: ContentHashes | undefined;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const waiting = this.hasher.update(chunk);
    if (!waiting) {
      callback(null, chunk);
      return;
    }
    waiting.then(
      () => callback(null, chunk),
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
    );
  }

  override _flush(callback: TransformCallback): void {
    this.hasher.digests().then(
      (hashes) => {
        this.hashes = hashes;
        callback();
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.hasher.abort();
    callback(error);
  }

  /** The hashes of every byte that passed (after the stream ended). */
  digests(): ContentHashes {
    if (this.hashes === undefined) throw new Error('HashingTap.digests() before the stream ended.');
    return this.hashes;
  }
}
