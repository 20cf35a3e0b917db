import type { Request, Response } from 'express';

/** JSON with keys sorted at every level, as Girder's `json.dumps(sort_keys=True)`. */
export function sortedJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const fields = v as Record<string, unknown>;
      return Object.fromEntries(Object.keys(fields).sort().map((k) => [k, fields[k]]));
    }
    return typeof v === 'bigint' ? v.toString() : v;
  }, indent);
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

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');

/** Girder's HTML rendering: the indented JSON, escaped, spaces as &nbsp; and newlines as <br />. */
export function htmlOf(value: unknown): string {
  const text = escapeHtml(sortedJson(value, 4)).replace(/ /g, '&nbsp;').replace(/\n/g, '<br />');
  return `<div style="font-family:monospace;">${text}</div>`;
}

export function sendResult(req: Request, res: Response, status: number, value: unknown): void {
  res.status(status);
  if (wantsHtml(req.get('Accept'))) {
    res.type('text/html; charset=utf-8').send(htmlOf(value ?? null));
  } else {
    res.type('application/json').send(sortedJson(value ?? null));
  }
}
