import type { Request } from 'express';
import { RestError } from '../domain/errors';
import { parseUrlEncoded } from './urlEncoded';

const FORM_TYPE = 'application/x-www-form-urlencoded';

/**
 * Merges query-string and urlencoded-form parameters into one dict, rejecting a name given more than once
 * (Girder: `Parameter "foo" must not be specified multiple times.`) and names or values that are not UTF-8. A
 * non-form body is returned as bytes for JSON body parameters (parseJsonBody decodes it, naming the parameter).
 */
export function collectParams(
  req: Request,
  body: Buffer | undefined,
): { raw: Record<string, string>; bodyBytes: Buffer | undefined } {
  const entries: [string, string][] = [];
  const queryIndex = req.originalUrl.indexOf('?');
  if (queryIndex >= 0) entries.push(...parseUrlEncoded(Buffer.from(req.originalUrl.slice(queryIndex + 1))));
  let bodyBytes: Buffer | undefined;
  if (body && body.length > 0) {
    if (req.is(FORM_TYPE)) entries.push(...parseUrlEncoded(body));
    else bodyBytes = body;
  }
  // A Map, then own properties only: a parameter named `__proto__` is an ordinary key, not the object's prototype.
  const raw = new Map<string, string>();
  for (const [name, value] of entries) {
    if (raw.has(name)) throw new RestError(`Parameter "${name}" must not be specified multiple times.`);
    raw.set(name, value);
  }
  return { raw: Object.fromEntries(raw), bodyBytes };
}

/**
 * Whether the router reads the request body, by the request's own method (CherryPy's rules, whatever the method
 * override): POST/PUT/PATCH when a body is announced (Content-Length or Transfer-Encoding; with neither there is none
 * to wait for), DELETE only with a Content-Length, other methods never.
 */
export function hasProcessableBody(req: Request): boolean {
  switch (req.method.toUpperCase()) {
    case 'POST':
    case 'PUT':
    case 'PATCH':
      return req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
    case 'DELETE':
      return req.headers['content-length'] !== undefined;
    default:
      return false;
  }
}
