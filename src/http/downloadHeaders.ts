import type { Response } from 'express';
import { contentDisposition } from './contentDisposition';

/**
 * How every download is served: the one place that decides the headers of an answer carrying user bytes (a file, an
 * item's single file, a zip of an item or a folder). The rule (docs/security.md, "User bytes"): user bytes never run
 * as the service's pages.
 *
 * - `inline` is honoured only for a type a browser shows without running anything in it (INLINE_TYPES); any other
 *   type, HTML, SVG, XML, JavaScript and whatever is unknown or malformed, goes out as `attachment` whatever the
 *   request asked (Girder honours `contentDisposition=inline` for any type).
 * - `X-Content-Type-Options: nosniff`: the browser takes the declared type, never guesses HTML from the bytes.
 * - `Content-Security-Policy` with `sandbox` (no `allow-same-origin`, no `allow-scripts`): even a mislabelled file
 *   opened as a page gets an opaque origin, runs no script, and reads neither the service's storage nor its cookie.
 */

/** Types shown inline when asked: raster images, PDF, plain text, audio and video. Nothing else. */
const INLINE_EXACT = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
  'application/pdf',
  'text/plain',
]);
const INLINE_TOP_LEVEL = new Set(['audio', 'video']);

/**
 * Charsets a `text/plain` may declare and still be shown inline. A charset outside these (UTF-7 and its kind, which
 * old browsers decoded into markup) makes the file an attachment.
 */
const SAFE_CHARSETS = new Set(['utf-8', 'us-ascii', 'iso-8859-1', 'windows-1252', 'utf-16', 'utf-16le', 'utf-16be']);

/** RFC 9110 `token`: what a type, a subtype and a parameter name are made of. */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const MEDIA_TYPE = new RegExp(`^(${TOKEN})/(${TOKEN})((?:\\s*;\\s*${TOKEN}=(?:${TOKEN}|"[^"\\\\]*"))*)\\s*$`);
const PARAMETER = new RegExp(`;\\s*(${TOKEN})=(${TOKEN}|"[^"\\\\]*")`, 'g');

/**
 * Whether a declared MIME type may be shown inline: a well-formed type on the list, whose only parameter (if any) is
 * a safe charset. Case does not matter (MIME types are case-insensitive).
 */
function inlineAllowed(mimeType: string): boolean {
  const match = MEDIA_TYPE.exec(mimeType.trim());
  if (!match) return false;
  const type = match[1].toLowerCase();
  const essence = `${type}/${match[2].toLowerCase()}`;
  if (!INLINE_EXACT.has(essence) && !INLINE_TOP_LEVEL.has(type)) return false;
  for (const [, name, value] of match[3].matchAll(PARAMETER)) {
    if (name.toLowerCase() !== 'charset' || essence !== 'text/plain') return false;
    if (!SAFE_CHARSETS.has(value.replace(/^"(.*)"$/, '$1').toLowerCase())) return false;
  }
  return true;
}

/**
 * The policy of every download: an opaque origin without script (`sandbox`), no fetch of anything (`default-src
 * 'none'`) but the inline styles browsers use to lay out an image or a text they show.
 */
const DOWNLOAD_CSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'";

export interface Download {
  filename: string;
  /** The declared type, sent as is in Content-Type. */
  mimeType: string;
  /** The caller's `contentDisposition`; `attachment` when absent. */
  asked?: 'attachment' | 'inline';
}

/** The headers of a download (throws, before anything is sent, on an empty file name). */
export function downloadHeaders(download: Download): Record<string, string> {
  const inline = download.asked === 'inline' && inlineAllowed(download.mimeType);
  return {
    'Content-Type': download.mimeType,
    'Content-Disposition': contentDisposition(download.filename, inline ? 'inline' : 'attachment'),
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': DOWNLOAD_CSP,
  };
}

export function setDownloadHeaders(res: Response, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}
