import type { NextFunction, Request, Response } from 'express';
import type { Services } from '../services';
import { SettingKey, settingValue, type SettingsState } from '../domain/settings';
import { cachedSettings } from '../queries/settingQueries';
import { ANONYMOUS } from './principal';
import { sendApiError } from './apiRequests';
import { onFileOrigin, type FileOrigin } from './fileOrigin';

/**
 * Cross-origin requests to the API, as Girder 3.2.15 answers them (`_setCommonCORSHeaders` and `Resource.OPTIONS` in
 * girder/api/rest.py), under the settings `core.cors.allow_origin`, `allow_methods`, `allow_headers` and
 * `expose_headers` (docs/security.md, "Cross-origin requests"):
 *
 * - A request whose `Origin` matches an entry of `allow_origin` (an origin, or a glob pattern as Python's fnmatch
 *   reads it: `https://*.example.org`) is answered `Access-Control-Allow-Origin: <its origin>`,
 *   `Access-Control-Allow-Credentials: true` and `Access-Control-Expose-Headers: <expose_headers>`.
 * - Else, with `*` in the list: `Access-Control-Allow-Origin: *` and the exposed headers, without credentials (Girder
 *   sends `Allow-Credentials: true` with `*` too, which browsers refuse; a wildcard never carries credentials here).
 * - Else nothing (Girder sends `Allow-Credentials` and `Expose-Headers` without an allowed origin, which no browser
 *   acts on). The request itself is answered as always: the browser, not the service, withholds the answer.
 * - `OPTIONS` on any API path (the preflight) is `200` with an empty body, `Access-Control-Allow-Methods` and
 *   `Access-Control-Allow-Headers` from the settings, whatever the origin or the method asked for, as in Girder.
 * - `Vary: Origin` on every answer whose headers were decided from its `Origin` (Girder sends none).
 *
 * Requests without `Origin`, and those whose `Origin` is the service's own (the web client's writes), get nothing and
 * cost nothing: the settings are read only for a cross-origin request, and then through a cache that folds the
 * settings stream again only when it changed. The file origin (FILE_ORIGIN) answers no cross-origin request: it
 * serves signed download links, which a cross-origin fetch reaches only by a redirect that turns its origin into
 * `null`.
 */
export function corsHeaders(
  services: Services,
  fileOrigin: FileOrigin | undefined,
): (req: Request, res: Response, next: NextFunction) => void {
  const settings = cachedSettings(services);
  return (req, res, next) => {
    const preflight = req.method === 'OPTIONS';
    const origin = req.headers.origin;
    if (!preflight && (origin === undefined || isOwnOrigin(req, origin))) {
      next();
      return;
    }
    if (fileOrigin && onFileOrigin(fileOrigin, req)) {
      next();
      return;
    }
    settings().then(
      (state) => {
        const policy = policyOf(state);
        if (origin !== undefined && !isOwnOrigin(req, origin)) setOriginHeaders(res, policy, origin);
        if (!preflight) {
          next();
          return;
        }
        res.setHeader('Access-Control-Allow-Methods', policy.allowMethods);
        res.setHeader('Access-Control-Allow-Headers', policy.allowHeaders);
        res.setHeader('Content-Length', '0');
        res.status(200).end();
      },
      (error: unknown) => {
        sendApiError(services, req, res, error, ANONYMOUS);
      },
    );
  };
}

/** The service's own origin as the request reached it (scheme and host as TRUST_PROXY lets a proxy tell them). */
function isOwnOrigin(req: Request, origin: string): boolean {
  return origin.toLowerCase() === `${req.protocol}://${req.host}`.toLowerCase();
}

function setOriginHeaders(res: Response, policy: CorsPolicy, origin: string): void {
  if (!policy.origins.length && !policy.wildcard) return;
  res.vary('Origin');
  if (policy.origins.some((pattern) => pattern.test(origin))) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Allow-Credentials', 'true');
  } else if (policy.wildcard) {
    res.setHeader('Access-Control-Allow-Origin', '*');
  } else return;
  if (policy.exposeHeaders) res.setHeader('Access-Control-Expose-Headers', policy.exposeHeaders);
}

interface CorsPolicy {
  /** The listed origins and patterns but `*`, as anchored expressions. */
  origins: RegExp[];
  /** Whether `*` is listed. */
  wildcard: boolean;
  exposeHeaders: string;
  allowMethods: string;
  allowHeaders: string;
}

/** The policy of one settings state, built once per state (the cache hands the same state until settings change). */
const policies = new WeakMap<Readonly<SettingsState>, CorsPolicy>();

function policyOf(state: Readonly<SettingsState>): CorsPolicy {
  let policy = policies.get(state);
  if (!policy) {
    const text = (key: string) => String(settingValue(state, key));
    // Girder: `{o.strip() for o in allowed.split(',')}`; stored values are already `, `-joined by the validator.
    const listed = text(SettingKey.CORS_ALLOW_ORIGIN)
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    policy = {
      origins: listed.filter((entry) => entry !== '*').flatMap((entry) => globPattern(entry) ?? []),
      wildcard: listed.includes('*'),
      exposeHeaders: text(SettingKey.CORS_EXPOSE_HEADERS),
      allowMethods: text(SettingKey.CORS_ALLOW_METHODS),
      allowHeaders: text(SettingKey.CORS_ALLOW_HEADERS),
    };
    policies.set(state, policy);
  }
  return policy;
}

/**
 * A pattern as Python's `fnmatch.fnmatch` reads it on POSIX (case-sensitive): `*` any run of characters, `?` one,
 * `[seq]` and `[!seq]` a set, an unclosed `[` itself. Undefined for a set JavaScript cannot compile (`[z-a]`):
 * that entry matches nothing.
 */
function globPattern(pattern: string): RegExp | undefined {
  let source = '';
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i++];
    if (c === '*') source += '[\\s\\S]*';
    else if (c === '?') source += '[\\s\\S]';
    else if (c === '[') {
      let j = i;
      if (pattern[j] === '!') j++;
      if (pattern[j] === ']') j++;
      while (j < pattern.length && pattern[j] !== ']') j++;
      if (j >= pattern.length) source += '\\[';
      else {
        let set = pattern.slice(i, j).replace(/\\/g, '\\\\');
        i = j + 1;
        if (set.startsWith('!')) set = `^${set.slice(1)}`;
        else if (set.startsWith('^')) set = `\\${set}`;
        source += `[${set}]`;
      }
    } else source += c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  }
  try {
    return new RegExp(`^(?:${source})$`);
  } catch {
    return undefined;
  }
}
