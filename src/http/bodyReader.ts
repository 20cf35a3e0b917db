import type { Request } from 'express';

/** The largest request body the router reads (uploads stream their own bodies and are not bound by it). */
export const BODY_LIMIT = 16 * 1024 * 1024;
/**
 * How much of a body is still read, and dropped, once it is refused: past the limit before the 413 goes out, and
 * the rest of any body after an early answer (src/http/bodyRemainder.ts). A server that answers and closes while the
 * client is still sending makes the kernel reset the connection (unread bytes on close), and the client then sees a
 * reset instead of the answer; reading to the end avoids that, and keeps the connection usable. Past this much, the
 * connection is closed instead.
 */
export const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

/** An over-limit body; src/http/errorMapping.ts answers it with 413. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`The request body is larger than ${limit} bytes.`);
    this.name = 'BodyTooLargeError';
  }
}

/**
 * A request body that stopped arriving while the service waited for it (src/http/bodyRemainder.ts); answered 408.
 */
export class BodyStalledError extends Error {
  constructor(readonly idleMs: number) {
    super(`The request body stopped arriving: no byte came for ${idleMs / 1000} s.`);
    this.name = 'BodyStalledError';
  }
}

/**
 * Reads the whole request body, up to `limit` bytes. A longer body is read to its end without keeping it, then
 * rejected with {@link BodyTooLargeError}; one that goes on past {@link MAX_DRAIN_BYTES} more is rejected at once
 * (the connection is then closed after the answer).
 */
export function readBody(req: Request, limit: number = BODY_LIMIT): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (tooLarge) {
        if (size > limit + MAX_DRAIN_BYTES) {
          req.pause();
          reject(new BodyTooLargeError(limit));
        }
        return;
      }
      if (size > limit) {
        tooLarge = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => (tooLarge ? reject(new BodyTooLargeError(limit)) : resolve(Buffer.concat(chunks))));
    req.on('error', reject);
    req.on('close', () => reject(new Error('The request was aborted before its body was read.')));
  });
}
