/**
 * UTF-8 that is refused rather than repaired. `Buffer.toString('utf8')`, URLSearchParams and a default TextDecoder
 * replace bytes that are not UTF-8 with U+FFFD, and the service would store a value other than the one sent; a
 * byte-order mark is kept as the character it is (nothing is dropped either).
 */
const DECODER = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text the bytes encode, or null when they are not UTF-8. */
export function strictUtf8(bytes: Uint8Array): string | null {
  try {
    return DECODER.decode(bytes);
  } catch {
    return null;
  }
}
