import { RestError } from '../domain/errors';
import { strictUtf8 } from '../domain/strictUtf8';

const AMPERSAND = 0x26;
const EQUALS = 0x3d;
const PLUS = 0x2b;
const PERCENT = 0x25;
const SPACE = 0x20;

const hexValue = (byte: number): number =>
  byte >= 0x30 && byte <= 0x39
    ? byte - 0x30
    : byte >= 0x41 && byte <= 0x46
      ? byte - 0x37
      : byte >= 0x61 && byte <= 0x66
        ? byte - 0x57
        : -1;

/** `+` is a space and `%XX` a byte; a `%` not followed by two hex digits stands for itself (as URLSearchParams). */
function percentDecode(bytes: Buffer): Buffer {
  if (!bytes.includes(PERCENT) && !bytes.includes(PLUS)) return bytes;
  const out = Buffer.allocUnsafe(bytes.length);
  let length = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte === PLUS) out[length++] = SPACE;
    else if (byte === PERCENT && i + 2 < bytes.length && hexValue(bytes[i + 1]) >= 0 && hexValue(bytes[i + 2]) >= 0) {
      out[length++] = hexValue(bytes[i + 1]) * 16 + hexValue(bytes[i + 2]);
      i += 2;
    } else out[length++] = byte;
  }
  return out.subarray(0, length);
}

/**
 * `application/x-www-form-urlencoded` text (a query string or a form body) as name/value pairs, parsed as
 * URLSearchParams parses it (`&` separates, the first `=` splits, empty sequences are skipped), except that the bytes
 * of every name and value must be UTF-8: where URLSearchParams would put U+FFFD and the service would store it, this
 * refuses with a 400 naming the parameter (rule 2 of docs/http-conventions.md).
 */
export function parseUrlEncoded(input: Buffer): [string, string][] {
  const pairs: [string, string][] = [];
  let start = 0;
  while (start <= input.length) {
    let end = input.indexOf(AMPERSAND, start);
    if (end < 0) end = input.length;
    if (end > start) {
      const sequence = input.subarray(start, end);
      const eq = sequence.indexOf(EQUALS);
      const nameBytes = percentDecode(eq < 0 ? sequence : sequence.subarray(0, eq));
      const name = strictUtf8(nameBytes);
      if (name === null) throw new RestError(`A parameter name is not valid UTF-8: ${nameBytes.toString('hex')}.`);
      const value = strictUtf8(eq < 0 ? Buffer.alloc(0) : percentDecode(sequence.subarray(eq + 1)));
      if (value === null) throw new RestError(`Parameter ${name} is not valid UTF-8.`);
      pairs.push([name, value]);
    }
    start = end + 1;
  }
  return pairs;
}
