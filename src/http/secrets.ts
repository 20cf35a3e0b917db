import type { ParamSpec } from './params';

/**
 * What of a request may reach the log. Secrets are declared, not listed: a route's parameter is secret when its
 * declaration says so (`secret: true`, src/http/params.ts), and the token that authenticates is secret on every route.
 * The logged URL is rebuilt from the parsed query, so a name spelled another way (`%74oken`, `p%61ssword`) is the
 * same parameter here as in the router. Only the value of a parameter the matched route declares, and not as a
 * secret, is written; any other parameter is written by name with its value redacted. Headers (`Service-Token`,
 * `Girder-Token`, `Authorization`, cookies) and bodies (forms, JSON) are never logged.
 */

/** What the log shows instead of a value it may not show. */
const REDACTED = '[redacted]';

/** The query or form parameter that carries the caller's token on every route (src/http/auth.ts). */
export const TOKEN_PARAM = 'token';

const NONE: ReadonlySet<string> = new Set();
const loggableByParams = new WeakMap<readonly ParamSpec[], ReadonlySet<string>>();

/** The names whose values the log may show for a route with these parameters: its declared non-secret ones. */
export function loggableParamNames(params: readonly ParamSpec[]): ReadonlySet<string> {
  let names = loggableByParams.get(params);
  if (!names) {
    names = new Set(params.filter((p) => !p.secret && p.name !== TOKEN_PARAM).map((p) => p.name));
    loggableByParams.set(params, names);
  }
  return names;
}

/**
 * The URL as the log shows it: the path as received, and the query re-serialised from its parsed parameters with
 * the value of every parameter not in `loggable` replaced by {@link REDACTED} (none given: every value redacted).
 */
export function loggedUrl(url: string, loggable: ReadonlySet<string> = NONE): string {
  const queryStart = url.indexOf('?');
  if (queryStart < 0) return url;
  // Parsed as the router parses it (src/http/requestParams.ts), so both see the same names.
  const shown: string[] = [];
  for (const [name, value] of new URLSearchParams(url.slice(queryStart + 1))) {
    shown.push(`${encodeURIComponent(name)}=${loggable.has(name) ? encodeURIComponent(value) : REDACTED}`);
  }
  const path = url.slice(0, queryStart);
  return shown.length > 0 ? `${path}?${shown.join('&')}` : path;
}
