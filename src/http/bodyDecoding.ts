import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Request } from 'express';
import { RestError } from '../domain/errors';

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const inflateRaw = promisify(zlib.inflateRaw);

/** The codings a body may carry (RFC 9110 §8.4), in the order they were applied; `identity` is no coding. */
function codingsOf(req: Request): string[] {
  const header = req.headers['content-encoding'];
  if (header === undefined) return [];
  return header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
}

const unsupported = (coding: string) =>
  new RestError(`Unsupported Content-Encoding "${coding}": send the body as is, or encoded with gzip or deflate.`, 415);

/** zlib's refusal of output past `maxOutputLength` (a zip bomb, or simply a body too large once decoded). */
const isTooLarge = (error: unknown) =>
  error instanceof RangeError || (error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE';

async function decodeOne(coding: string, body: Buffer, limit: number): Promise<Buffer> {
  const options = { maxOutputLength: limit };
  try {
    if (coding === 'gzip' || coding === 'x-gzip') return await gunzip(body, options);
    // `deflate` is the zlib format (RFC 1950); some clients send a bare deflate stream, which is read as well.
    if (coding === 'deflate') {
      return await inflate(body, options).catch((error: unknown) => {
        if (isTooLarge(error)) throw error;
        return inflateRaw(body, options);
      });
    }
  } catch (error) {
    if (isTooLarge(error))
      throw new RestError(`Request entity too large once decoded (${coding}): the limit is ${limit} bytes.`, 413);
    throw new RestError(`The request body is not valid ${coding} data (Content-Encoding: ${coding}).`);
  }
  throw unsupported(coding);
}

/**
 * The body the client meant: decoded from its `Content-Encoding` (gzip, deflate; the last coding applied is undone
 * first), so that what is stored is what was sent rather than its compressed bytes. Decoded output is bounded by the
 * same `limit` as the body itself (a few KiB of gzip can expand to gigabytes); another coding is a 415.
 */
export async function decodeBody(req: Request, body: Buffer, limit: number): Promise<Buffer> {
  let decoded = body;
  for (const coding of codingsOf(req).reverse()) decoded = await decodeOne(coding, decoded, limit);
  return decoded;
}

/**
 * For bodies streamed as they arrive (upload chunks): any coding but identity is a 415 before a byte is stored. A
 * chunk's bytes are counted against the upload's declared size as they come, so a compressed chunk cannot be
 * checked until it is decoded; girder_client and the web client never compress chunks.
 */
export function refuseContentEncoding(req: Request): void {
  const codings = codingsOf(req);
  if (codings.length > 0) {
    throw new RestError(
      `Unsupported Content-Encoding "${codings[0]}": upload bytes are stored as sent; send them without a Content-Encoding.`,
      415,
    );
  }
}
