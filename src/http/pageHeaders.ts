import type { Response } from 'express';

/**
 * The headers of the service's own pages (the web client at `/`, Swagger UI at `/api/v1`, the OpenAPI document):
 * no other site may frame them (clickjacking), the browser takes their declared types, and links from them tell other
 * sites nothing of the page they were followed from (paths carry ids). docs/security.md, "Page headers".
 */
const PAGE_HEADERS: Record<string, string> = {
  'Content-Security-Policy': "frame-ancestors 'self'",
  'X-Frame-Options': 'SAMEORIGIN',
  'Referrer-Policy': 'same-origin',
};

export function setPageHeaders(res: Response): void {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) res.setHeader(name, value);
}
