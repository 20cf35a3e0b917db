import http from 'node:http';
import fc from 'fast-check';
import { startApi, type ApiClient, type Listener, type TestUser } from '../support/apiClient';
import { apiResources } from '../../src/http/resources';
import type { ParamSpec } from '../../src/http/params';
import type { RouteDef } from '../../src/http/routeTable';
import { verifyOutput } from '../support/verifyOutput';

/**
 * Rule 1 of issue 15, for every route of the route table: hostile values generated from each declared parameter's
 * kind (src/http/params.ts), path ids that resolve or not, bodies as form, query or JSON. No answer may be a 5xx,
 * no connection may be reset or hang, and afterwards the service takes writes, is ready, and its read models still
 * equal a replay of the log. A new route is covered by declaring its parameters; nothing here names routes.
 * Fixed seed and bounded runs keep it to some tens of seconds.
 */
const RUNS_PER_ROUTE = 6;
const SEED = 15;
const REQUEST_TIMEOUT_MS = 10_000;

let api: ApiClient;
let listener: Listener;
let admin: TestUser;
let other: TestUser;
const fixtures: Record<string, string> = {};

beforeAll(async () => {
  api = await startApi();
  admin = await api.createUser('admin');
  other = await api.createUser('other');
  const privateFolder = (await api.as(admin).get('/folder').query({ parentType: 'user', parentId: admin._id, name: 'Private' })).body[0]._id;
  fixtures.folder = (await api.as(admin).post('/folder').type('form').send({ parentType: 'folder', parentId: privateFolder, name: 'target' })).body._id;
  // Where `…Id` parameters point: not the fixture folder itself, or each copy into it would double its subtree.
  fixtures.destination = (await api.as(admin).post('/folder').type('form').send({ parentType: 'folder', parentId: privateFolder, name: 'destination' })).body._id;
  fixtures.item = await api.newItem(admin, fixtures.folder, 'item');
  fixtures.file = await api.addFile(admin, fixtures.item, 'some bytes');
  fixtures.collection = (await api.as(admin).post('/collection').query({ name: 'coll' })).body._id;
  fixtures.api_key = (await api.as(admin).post('/api_key').query({ name: 'key' })).body._id;
  fixtures.user = other._id;
  listener = await api.listen();
});
afterAll(async () => {
  await listener?.close();
  await api?.close();
});

/** Values chosen to break parsers, lookups, databases and headers. */
const nasty = fc.constantFrom(
  '', ' ', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'null', 'undefined', 'NaN', 'Infinity', '-Infinity',
  '0', '-0', '-1', '1e308', '0x10', '1_000', '9007199254740993', '18446744073709551617', '-99999999999999999999999',
  '0000-01-01', '-271821-04-19T00:00:00Z', '275760-09-13T00:00:01Z', '9999-12-31T23:59:59.999+14:00',
  'a\r\nSet-Cookie: x=1', 'a\u0000b', '\u202e\u0301', '\ud83d\ude00', '../../etc/passwd', "'; DROP TABLE rm_folders; --",
  '{"$gt":""}', 'meta.__proto__.x', 'x'.repeat(10_000), '%', '%00', '\\', '"', '[]', '{}',
);
const text = fc.oneof(nasty, fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 20 }));
const integer = fc.oneof(
  nasty,
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.integer({ min: -5, max: 100 }).map(String),
  fc.constantFrom(String(Number.MAX_SAFE_INTEGER), String(Number.MIN_SAFE_INTEGER), '2147483648', '36526', '86401'),
);
const boolean = fc.oneof(fc.constantFrom('true', 'false', 'on', 'yes', '1', 'TRUE'), text);
/** JSON nested `depth` levels, as objects or arrays. */
const nestedJson = fc
  .tuple(fc.integer({ min: 90, max: 6000 }), fc.boolean())
  .map(([depth, arrays]) => (arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)));
const json = fc.oneof(
  fc.json({ maxDepth: 4 }),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify({ k: v })),
  nestedJson,
  fc.constantFrom('{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}', '{"$set":1}', '{"a.b":1}', '{"":1}', 'NaN', '{"a":NaN}', '{', '[1,'),
  fc.integer({ min: 1, max: 3 }).map((mb) => JSON.stringify({ big: 'x'.repeat(mb * 300_000) })),
  text,
);

function valueOf(spec: ParamSpec): fc.Arbitrary<string> {
  switch (spec.kind) {
    case 'int':
      return integer;
    case 'bool':
      return boolean;
    case 'enum':
      return fc.oneof(fc.constantFrom(...(spec.values ?? ['x'])), text);
    case 'json':
      return json;
    case 'string':
      return text;
  }
}

/**
 * The values every parameter of a kind is tried with, one at a time, before the random runs (fast-check's
 * `examples`): the findings of issue 15 and their relatives, so that none depends on the random draw.
 */
function edgesOf(spec: ParamSpec): string[] {
  const deep = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  switch (spec.kind) {
    case 'int':
      return ['-1', '99999999999999999999', '9007199254740993', '-9007199254740993', '1e3'];
    case 'bool':
      return ['maybe'];
    case 'enum':
      return ['constructor', '__proto__'];
    case 'json':
      return [deep(1500), deep(5000), '{"__proto__":{"x":1},"constructor":1}', JSON.stringify({ big: 'x'.repeat(600_000) })];
    case 'string':
      return ['constructor', '__proto__', 'toString', 'text/plain\r\nX-Injected: 1', '0000-01-01', '99999999999999999999999', 'x'.repeat(10_000)];
  }
}

/** A request for `route`: each declared parameter absent or hostile, path ids a fixture or hostile. */
function requestOf(resource: string, route: RouteDef) {
  const params = fc.record(
    Object.fromEntries(route.params.map((spec) => [spec.name, fc.oneof(fc.constant(plausibleOf(spec)), valueOf(spec), fc.constant(undefined))])),
  );
  const segments = route.path
    .split('/')
    .filter(Boolean)
    .map((segment) => (segment.startsWith(':') ? fc.oneof({ weight: 4, arbitrary: fc.constant(fixtures[resource] ?? 'x') }, { weight: 1, arbitrary: text }) : fc.constant(segment)));
  return fc.record({ params, segments: fc.tuple(...segments), asForm: fc.boolean(), anonymous: fc.integer({ min: 0, max: 4 }).map((n) => n === 0) });
}

/**
 * A plausible value for a parameter, from its declaration only, so that a request gets past its other parameters
 * to the one under test: an enumeration's first value, the id of a destination folder for `…Id`, a name where one is
 * required; absent otherwise.
 */
function plausibleOf(spec: ParamSpec): string | undefined {
  if (spec.kind === 'enum') return spec.values?.[0];
  if (spec.kind === 'string' && spec.name.endsWith('Id')) return fixtures.destination;
  if (!spec.required) return undefined;
  return { int: '1', bool: 'false', json: '{}', string: 'plausible' }[spec.kind];
}

/** One request per parameter and edge value, the others plausible, path ids the fixtures', as the admin. */
function examplesOf(resource: string, route: RouteDef) {
  const segments = route.path
    .split('/')
    .filter(Boolean)
    .map((segment) => (segment.startsWith(':') ? (fixtures[resource] ?? 'x') : segment));
  const plausible = Object.fromEntries(route.params.map((spec) => [spec.name, plausibleOf(spec)]));
  return route.params.flatMap((spec) =>
    edgesOf(spec).map((value) => [{ params: { ...plausible, [spec.name]: value }, segments, asForm: spec.in !== 'body', anonymous: false }] as [never]),
  );
}

interface Answer {
  status: number;
  body: string;
}

/** Sends one request; a reset connection or no answer within the timeout rejects. Streams resolve on their headers. */
function send(method: string, path: string, headers: Record<string, string>, body: Buffer | undefined, stream: boolean): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: listener.port, method, path, headers: { ...headers, ...(body ? { 'Content-Length': String(body.length) } : {}) } }, (res) => {
      if (stream && res.statusCode === 200) {
        resolve({ status: 200, body: '' });
        req.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

async function login(): Promise<void> {
  const res = await api.anonymous().get('/user/authentication').auth('admin', 'password1');
  admin = { ...admin, token: res.body.authToken.token };
}

// Deletions last, so that the fixtures stay for the other routes.
const routes = apiResources
  .flatMap((resource) => resource.routes.map((route) => ({ resource: resource.name, route })))
  .sort((a, b) => Number(a.route.method === 'DELETE') - Number(b.route.method === 'DELETE'));

describe('every route answers hostile values with a 4xx, never a 5xx, a reset or a hang', () => {
  it.each(routes.map(({ resource, route }) => [`${route.method} /${resource}/${route.path}`, resource, route] as const))('%s', async (_label, resource, route) => {
    const examples = examplesOf(resource, route);
    await fc.assert(
      fc.asyncProperty(requestOf(resource, route), async ({ params, segments, asForm, anonymous }) => {
        const query = new URLSearchParams();
        const form = new URLSearchParams();
        let jsonBody: string | undefined;
        for (const spec of route.params) {
          const value = params[spec.name];
          if (value === undefined) continue;
          if (spec.in === 'body') jsonBody = value;
          else (asForm && !route.rawBody && route.method !== 'GET' ? form : query).append(spec.name, value);
        }
        const path = `/api/v1/${resource}${segments.length ? '/' : ''}${segments.map((s) => encodeURIComponent(Buffer.from(s, 'utf8').toString('utf8'))).join('/')}`;
        const url = `${path}${query.size ? `?${query}` : ''}`;
        const headers: Record<string, string> = anonymous ? {} : { 'Girder-Token': admin.token };
        let body: Buffer | undefined;
        if (route.rawBody) {
          body = Buffer.from('hostile bytes');
          headers['Content-Type'] = 'application/octet-stream';
        } else if (jsonBody !== undefined) {
          body = Buffer.from(jsonBody);
          headers['Content-Type'] = 'application/json';
        } else if (form.size) {
          body = Buffer.from(form.toString());
          headers['Content-Type'] = 'application/x-www-form-urlencoded';
        }
        const answer = await send(route.method, url, headers, body, route.produces === 'text/event-stream');
        expect({ url, status: answer.status < 500 ? 'not 5xx' : answer.status, body: answer.status < 500 ? '' : answer.body }).toEqual({ url, status: 'not 5xx', body: '' });
        if (route.method === 'DELETE' && resource === 'user' && route.path === 'authentication') await login();
      }),
      // The examples count as runs: every one of them, then RUNS_PER_ROUTE random ones.
      { numRuns: examples.length + RUNS_PER_ROUTE, seed: SEED, endOnFailure: true, examples },
    );
  });

  it('still takes writes, is ready, and its read models equal a replay of the log', async () => {
    if ((await api.as(admin).get('/user/me')).body === null) await login();
    const created = await api.as(admin).post('/folder').type('form').send({ parentType: 'user', parentId: admin._id, name: 'after the storm' });
    expect(created.status).toBe(200);
    const ready = await api.site().get('/readyz');
    expect(ready.status).toBe(200);
    const verified = await verifyOutput(api.server.dataDir);
    expect(verified.text).toContain('The read models match the event log.');
    expect(verified.code).toBe(0);
  }, 60_000);
});
