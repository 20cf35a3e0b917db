import type { Request, Response } from 'express';
import { configure } from 'safe-stable-stringify';

/** JSON.stringify's output with the keys of every object sorted; a cycle throws, as with JSON.stringify. */
const stableStringify = configure({ deterministic: true, circularValue: TypeError });
/** Positions and other bigints are rendered as strings. */
const bigintAsString = (_key: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);

/**
 * JSON with keys sorted at every level, as Girder's `json.dumps(sort_keys=True)`. safe-stable-stringify sorts while
 * it writes; the former replacer rebuilt every object with sorted keys first, which cost a 50-folder listing about
 * twice as much (docs/performance.md, "Request path").
 */
export function sortedJson(value: unknown, indent?: number): string {
  // Like JSON.stringify, undefined for a value JSON cannot hold (a function): callers send nothing then.
  if (indent === undefined && writtenSorted(value, 0)) return JSON.stringify(value);
  return stableStringify(value, bigintAsString, indent) as string;
}

/** Deeper than this, `writtenSorted` leaves the value to safe-stable-stringify (which throws on a cycle). */
const MAX_SORTED_DEPTH = 32;

/**
 * Whether JSON.stringify alone writes `value` exactly as `sortedJson` must: the keys of every object already in
 * sorted order (as the views build them), no bigint, no `toJSON`. Checking is a walk of the keys; the native
 * JSON.stringify that follows costs a third of the sorting serialiser on a 50-folder page. Anything else (a key out
 * of order, user metadata as stored) goes through the sorting serialiser, which gives the same bytes.
 */
function writtenSorted(value: unknown, depth: number): boolean {
  if (typeof value !== 'object' || value === null) return typeof value !== 'bigint';
  if (depth > MAX_SORTED_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  if (Array.isArray(value)) return value.every((element) => writtenSorted(element, depth + 1));
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    // `<` compares UTF-16 code units, as the sort of safe-stable-stringify does.
    if (i > 0 && !(keys[i - 1] < keys[i])) return false;
    // eslint-disable-next-line local/no-plain-object-lookup -- keys[i] is an own key (Object.keys); the hot path of every answer
    if (!writtenSorted((value as Record<string, unknown>)[keys[i]], depth + 1)) return false;
  }
  return true;
}

/** Whether the Accept header, ordered by q-value, lists text/html before application/json. */
export function wantsHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const ranked = accept
    .split(',')
    .map((part, index) => {
      const [type, ...paramsList] = part.trim().split(';');
      const q = paramsList.map((p) => p.trim()).find((p) => p.startsWith('q='));
      return { type: type.trim().toLowerCase(), q: q ? Number(q.slice(2)) || 0 : 1, index };
    })
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const entry of ranked) {
    if (entry.type === 'application/json') return false;
    if (entry.type === 'text/html') return true;
  }
  return false;
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');

/** Girder's HTML rendering: the indented JSON, escaped, spaces as &nbsp; and newlines as <br />. */
export function htmlOf(value: unknown): string {
  const text = escapeHtml(sortedJson(value, 4)).replace(/ /g, '&nbsp;').replace(/\n/g, '<br />');
  return `<div style="font-family:monospace;">${text}</div>`;
}

export function sendResult(req: Request, res: Response, status: number, value: unknown): void {
  res.status(status);
  if (wantsHtml(req.headers.accept)) {
    res.type('text/html; charset=utf-8').send(htmlOf(value ?? null));
    return;
  }
  // What express's res.send would write for a JSON string (its freshness, ETag and conversion steps do not apply:
  // this service sets no ETag), written directly: the response's last step, on every request.
  const body = (sortedJson(value ?? null) as string | undefined) ?? '';
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
