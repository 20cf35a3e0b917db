import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { startApi, API_PREFIX, type ApiClient, type Listener, type TestUser } from '../support/apiClient';
import { apiResources } from '../../src/http/resources';
import type { ParamSpec } from '../../src/http/params';
import type { RouteDef } from '../../src/http/routeTable';
import { TOKEN_PARAM } from '../../src/http/secrets';

/**
 * Rule 2 of issue 27, for every route of the route table: every secret parameter (declared `secret: true`, and the
 * token that authenticates, which every route reads) is sent with a marker value in every place the request parser
 * accepts it: the query string, with its name plain or percent-encoded, its value percent-encoded, a urlencoded form
 * body (for GET through a method override), a JSON body for a body parameter, and for the token also its headers and
 * cookies. Whatever each route answers, no marker may reach the service's log. A new secret parameter is covered by
 * declaring it; nothing here names routes.
 */

/** Every marker of this run holds it: one search finds any of them in the log. */
const NONCE = randomBytes(8).toString('hex');
const REQUEST_TIMEOUT_MS = 5_000;
/** A well-formed id that names nothing, for every path wildcard. */
const UNKNOWN_ID = '0'.repeat(24);

let api: ApiClient;
let listener: Listener;
let admin: TestUser;
let markers = 0;
/** What each marker was sent as, to name the leak when one is found. */
const sentAs = new Map<string, string>();
let requestsSent = 0;

beforeAll(async () => {
  // Wrong passwords are sent on purpose here: the login throttle (test/http/loginGuessing.test.ts) must not step in.
  api = await startApi({ LOG_LEVEL: 'trace', LOGIN_FREE_FAILURES: '1000000' }, { captureLog: true });
  admin = await api.createUser('admin');
  listener = await api.listen();
});
afterAll(async () => {
  await listener?.close();
  await api?.close();
});

function marker(what: string): string {
  const value = `m${++markers}x${NONCE}`;
  sentAs.set(value, what);
  return value;
}

/** Every way of writing a parameter's name that the parser reads as that name. */
function spellings(name: string): string[] {
  const hex = (c: string) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`;
  return [name, hex(name[0]) + name.slice(1), Array.from(name, hex).join('').toLowerCase()];
}

/** The value with its first character percent-encoded: the parser decodes it to the marker. */
const encodedValue = (value: string) => `%${value.charCodeAt(0).toString(16)}${value.slice(1)}`;

function pathOf(resource: string, route: RouteDef): string {
  const segments = route.path ? route.path.split('/').map((s) => (s.startsWith(':') ? UNKNOWN_ID : s)) : [];
  return `${API_PREFIX}/${[resource, ...segments].join('/')}`;
}

/** A plausible value for a non-secret parameter, so that more requests get past parsing into the handler. */
function plausible(spec: ParamSpec): string {
  switch (spec.kind) {
    case 'int':
      return '1';
    case 'bool':
      return 'true';
    case 'enum':
      return spec.values?.[0] ?? 'x';
    case 'json':
      return '{}';
    default:
      return 'plausible';
  }
}

interface Sent {
  method: string;
  path: string;
  query?: string;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * Sends one request and waits for its answer (an event stream is cut once its headers arrive). The service's
 * answer does not matter here, only what it logs.
 */
function send({ method, path, query, headers = {}, body }: Sent): Promise<void> {
  requestsSent++;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: listener.port,
        method,
        path: query ? `${path}?${query}` : path,
        headers: { ...headers, ...(body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(body)) }) },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        if (String(res.headers['content-type']).startsWith('text/event-stream')) {
          res.destroy();
          resolve();
          return;
        }
        res.resume();
        res.on('end', resolve);
        res.on('error', resolve);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

/** A form body reaches a GET route through a POST with a method override (the router reads POST bodies). */
function formRequest(method: string, path: string, form: string, headers: Record<string, string> = {}): Sent {
  return method === 'GET'
    ? { method: 'POST', path, headers: { ...FORM, 'X-HTTP-Method-Override': 'GET', ...headers }, body: form }
    : { method, path, headers: { ...FORM, ...headers }, body: form };
}

/** The other declared parameters of the route, with plausible values, as `name=value` pairs. */
function othersOf(route: RouteDef, except: string): string[] {
  return route.params
    .filter((p) => p.name !== except && p.in === 'query')
    .map((p) => `${encodeURIComponent(p.name)}=${encodeURIComponent(plausible(p))}`);
}

const routes = apiResources.flatMap((resource) =>
  resource.routes.map((route) => ({
    resource: resource.name,
    route,
    label: `${route.method} ${resource.name}/${route.path}`,
  })),
);

/** Every place a declared secret parameter can be given, each with a fresh marker. */
function paramRequests(resource: string, route: RouteDef, spec: ParamSpec): Sent[] {
  const path = pathOf(resource, route);
  const where = `${route.method} ${resource}/${route.path} ${spec.name}`;
  const auth = { 'Service-Token': admin.token };
  const others = othersOf(route, spec.name);
  const withOthers = (pair: string) => [pair, ...others].join('&');
  const requests: Sent[] = [];
  if (spec.in === 'body') {
    requests.push({
      method: route.method,
      path,
      query: others.join('&'),
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ [spec.name]: marker(`${where} in a JSON body`), value: marker(`${where} JSON`) }),
    });
  }
  for (const name of spellings(spec.name)) {
    requests.push({
      method: route.method,
      path,
      query: withOthers(`${name}=${marker(`${where} as query ${name}`)}`),
      headers: auth,
    });
    requests.push(formRequest(route.method, path, withOthers(`${name}=${marker(`${where} as form ${name}`)}`), auth));
  }
  requests.push({
    method: route.method,
    path,
    query: withOthers(`${spec.name}=${encodedValue(marker(`${where} percent-encoded value`))}`),
    headers: auth,
  });
  return requests;
}

/** Every place the authenticating token can be given on a route, each with a fresh marker. */
function tokenRequests(resource: string, route: RouteDef): Sent[] {
  const path = pathOf(resource, route);
  const where = `${route.method} ${resource}/${route.path} token`;
  const method = route.method;
  const requests: Sent[] = spellings(TOKEN_PARAM).flatMap((name) => [
    { method, path, query: `${name}=${marker(`${where} as query ${name}`)}` },
    formRequest(method, path, `${name}=${marker(`${where} as form ${name}`)}`),
  ]);
  requests.push({ method, path, query: `${TOKEN_PARAM}=${encodedValue(marker(`${where} percent-encoded value`))}` });
  for (const header of ['Service-Token', 'Girder-Token'])
    requests.push({ method, path, headers: { [header]: marker(`${where} in ${header}`) } });
  for (const cookie of ['serviceToken', 'girderToken'])
    requests.push({ method, path, headers: { Cookie: `${cookie}=${marker(`${where} in cookie ${cookie}`)}` } });
  return requests;
}

/** The log from line `from` on, once the answers' `close` events (which write the request lines) have run. */
async function logText(from = 0): Promise<string> {
  await new Promise((resolve) => setTimeout(resolve, 50));
  return api.server.logLines.slice(from).join('');
}

/** Where the log stands now, to read only what a test adds to it. */
const logMark = () => api.server.logLines.length;

function leaks(log: string): string[] {
  const found = log.match(new RegExp(`m\\d+x${NONCE}`, 'g')) ?? [];
  const partial = log.includes(NONCE) ? [`a fragment of a marker (${NONCE})`] : [];
  return [...new Set(found)].map((m) => sentAs.get(m) ?? m).concat(found.length === 0 ? partial : []);
}

describe('no secret reaches the log, whatever the route, the place or the spelling', () => {
  const withSecrets = routes.filter(({ route }) => route.params.some((p) => p.secret));

  it('the route table declares the secrets this service takes', () => {
    expect(
      withSecrets.map(
        ({ label, route }) =>
          `${label}: ${route.params
            .filter((p) => p.secret)
            .map((p) => p.name)
            .join(', ')}`,
      ),
    ).toEqual([
      'PUT system/setting: value, list',
      'PUT user/password: old, new',
      'PUT user/:id/password: password',
      'GET user/password/temporary/:id: token',
      'PUT user/:id/verification: token',
      'POST user/: password',
      'POST api_key/token: key',
      'GET file/:id/download: signature',
      'GET file/:id/download/:name: signature',
      'GET file/hashsum/:algo/:hash/download: signature',
      'POST assetstore/: secret',
      'PUT assetstore/:id: secret',
    ]);
  });

  it.each(withSecrets)('$label: its secret parameters in the query, a form and a body', async ({ resource, route }) => {
    const before = requestsSent;
    const from = logMark();
    for (const spec of route.params.filter((p) => p.secret)) {
      for (const request of paramRequests(resource, route, spec)) await send(request);
    }
    expect(leaks(await logText(from))).toEqual([]);
    expect(requestsSent).toBeGreaterThan(before);
  });

  it('every route: the token in the query (any spelling), a form, its headers and cookies', async () => {
    const from = logMark();
    for (const { resource, route } of routes) {
      for (const request of tokenRequests(resource, route)) await send(request);
    }
    expect(leaks(await logText(from))).toEqual([]);
  });

  it('a valid token in the query is not logged, nor are the passwords of a successful change', async () => {
    const from = logMark();
    const password = marker('registration password');
    const carol = await api.createUser('carol', { password });
    const next = marker('new password');
    const changed = await api
      .anonymous()
      .put(`/user/password?${spellings('old')[1]}=${password}&new=${next}&token=${carol.token}`);
    expect(changed.status).toBe(200);
    expect((await api.anonymous().get(`/user/me?%74oken=${carol.token}`)).body.login).toBe('carol');
    await send({ method: 'GET', path: `${API_PREFIX}/user/me`, query: `token=${admin.token}` });
    const log = await logText(from);
    expect(leaks(log)).toEqual([]);
    expect(log).not.toContain(carol.token);
    // The admin's token went in a header with every request above, and once in the query here.
    expect(await logText()).not.toContain(admin.token);
  });

  it('the log still shows the request: declared values, other names with their values redacted', async () => {
    const res = await api.as(admin).get('/user?text=visible%20words&limit=3&undeclared=hidden-value&%74oken=abc');
    expect(res.status).toBe(200);
    const lines = (await logText())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; req?: { url: string }; res?: { statusCode: number } });
    const line = lines.find((l) => l.msg === 'request completed' && l.req?.url.startsWith('/api/v1/user?text='));
    expect(line?.req?.url).toBe('/api/v1/user?text=visible%20words&limit=3&undeclared=[redacted]&token=[redacted]');
    expect(line?.res?.statusCode).toBe(200);
    // Every request sent above was logged: the absence of markers is not the absence of lines.
    expect(lines.filter((l) => l.req !== undefined && l.res !== undefined).length).toBeGreaterThanOrEqual(requestsSent);
  });

  it('a URL that matches no route is logged with every query value redacted', async () => {
    const from = logMark();
    const value = marker('unrouted query value');
    await send({ method: 'GET', path: `${API_PREFIX}/nowhere/at/all`, query: `password=${value}&x=${value}` });
    await send({ method: 'GET', path: `${API_PREFIX}/user/no/such/route`, query: `old=${value}` });
    await send({ method: 'GET', path: '/static/nothing.js', query: `key=${value}` });
    const log = await logText(from);
    expect(leaks(log)).toEqual([]);
    expect(log).toContain('/api/v1/nowhere/at/all?password=[redacted]&x=[redacted]');
  });
});
