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
  // Hostile values include wrong passwords by the dozen: the login throttle (docs/security.md) would answer them 429.
  api = await startApi({ LOGIN_FREE_FAILURES: '1000000' });
  admin = await api.createUser('admin');
  other = await api.createUser('other');
  const privateFolder = (
    await api.as(admin).get('/folder').query({ parentType: 'user', parentId: admin._id, name: 'Private' })
  ).body[0]._id;
  fixtures.folder = (
    await api
      .as(admin)
      .post('/folder')
      .type('form')
      .send({ parentType: 'folder', parentId: privateFolder, name: 'target' })
  ).body._id;
  // Where `…Id` parameters point: not the fixture folder itself, or each copy into it would double its subtree.
  fixtures.destination = (
    await api
      .as(admin)
      .post('/folder')
      .type('form')
      .send({ parentType: 'folder', parentId: privateFolder, name: 'destination' })
  ).body._id;
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
  '',
  ' ',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-Infinity',
  '0',
  '-0',
  '-1',
  '1e308',
  '0x10',
  '1_000',
  '9007199254740993',
  '18446744073709551617',
  '-99999999999999999999999',
  '0000-01-01',
  '-271821-04-19T00:00:00Z',
  '275760-09-13T00:00:01Z',
  '9999-12-31T23:59:59.999+14:00',
  'a\r\nSet-Cookie: x=1',
  'a\u0000b',
  '\u202e\u0301',
  '\ud83d\ude00',
  '../../etc/passwd',
  "'; DROP TABLE rm_folders; --",
  '{"$gt":""}',
  'meta.__proto__.x',
  'x'.repeat(10_000),
  '%',
  '%00',
  '\\',
  '"',
  '[]',
  '{}',
);
const text = fc.oneof(nasty, fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 20 }));
const integer = fc.oneof(
  nasty,
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.integer({ min: -5, max: 100 }).map(String),
  fc.constantFrom(String(Number.MAX_SAFE_INTEGER), String(Number.MIN_SAFE_INTEGER), '2147483648', '36526', '86401'),
);
/** Days and times that do not exist, which `Date` would roll over to ones that do. */
const impossibleDate = fc
  .record({
    year: fc.integer({ min: 1970, max: 2100 }),
    month: fc.integer({ min: 0, max: 13 }),
    day: fc.integer({ min: 29, max: 32 }),
    hour: fc.integer({ min: 0, max: 25 }),
  })
  .filter(({ year, month, day, hour }) => {
    const exists = month >= 1 && month <= 12 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate() && hour <= 23;
    return !exists;
  })
  .map(({ year, month, day, hour }) => {
    const two = (n: number) => String(n).padStart(2, '0');
    return `${year}-${two(month)}-${two(day)}T${two(hour)}:00:00Z`;
  });
const boolean = fc.oneof(fc.constantFrom('true', 'false', 'on', 'yes', '1', 'TRUE'), text);
/** JSON nested `depth` levels, as objects or arrays. */
const nestedJson = fc
  .tuple(fc.integer({ min: 90, max: 6000 }), fc.boolean())
  .map(([depth, arrays]) =>
    arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth),
  );
const json = fc.oneof(
  fc.json({ maxDepth: 4 }),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify({ k: v })),
  nestedJson,
  fc.constantFrom(
    '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{}}}',
    '{"$set":1}',
    '{"a.b":1}',
    '{"":1}',
    'NaN',
    '{"a":NaN}',
    '{',
    '[1,',
  ),
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
    case 'date':
      return fc.oneof(impossibleDate, text);
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
      return [
        deep(1500),
        deep(5000),
        '{"__proto__":{"x":1},"constructor":1}',
        JSON.stringify({ big: 'x'.repeat(600_000) }),
      ];
    case 'string':
      return [
        'constructor',
        '__proto__',
        'toString',
        'text/plain\r\nX-Injected: 1',
        '0000-01-01',
        '99999999999999999999999',
        'x'.repeat(10_000),
      ];
    case 'date':
      return ['2027-02-30', '2027-01-01T24:00:00Z', '275760-09-13T00:00:01Z', 'constructor'];
  }
}

/** A request for `route`: each declared parameter absent or hostile, path ids a fixture or hostile. */
function requestOf(resource: string, route: RouteDef) {
  const params = fc.record(
    Object.fromEntries(
      route.params.map((spec) => [
        spec.name,
        fc.oneof(fc.constant(plausibleOf(spec)), valueOf(spec), fc.constant(undefined)),
      ]),
    ),
  );
  const segments = route.path
    .split('/')
    .filter(Boolean)
    .map((segment) =>
      segment.startsWith(':')
        ? fc.oneof({ weight: 4, arbitrary: fc.constant(fixtures[resource] ?? 'x') }, { weight: 1, arbitrary: text })
        : fc.constant(segment),
    );
  return fc.record({
    params,
    segments: fc.tuple(...segments),
    asForm: fc.boolean(),
    anonymous: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  });
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
  return { int: '1', bool: 'false', json: '{}', string: 'plausible', date: '2025-01-01T00:00:00Z' }[spec.kind];
}

/** One request per parameter and edge value, the others plausible, path ids the fixtures', as the admin. */
function examplesOf(resource: string, route: RouteDef) {
  const segments = route.path
    .split('/')
    .filter(Boolean)
    .map((segment) => (segment.startsWith(':') ? (fixtures[resource] ?? 'x') : segment));
  const plausible = Object.fromEntries(route.params.map((spec) => [spec.name, plausibleOf(spec)]));
  return route.params.flatMap((spec) =>
    edgesOf(spec).map(
      (value) =>
        [{ params: { ...plausible, [spec.name]: value }, segments, asForm: spec.in !== 'body', anonymous: false }] as [
          never,
        ],
    ),
  );
}

interface Answer {
  status: number;
  body: string;
}

/** Sends one request; a reset connection or no answer within the timeout rejects. Streams resolve on their headers. */
function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  stream: boolean,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: listener.port,
        method,
        path,
        headers: { ...headers, ...(body ? { 'Content-Length': String(body.length) } : {}) },
      },
      (res) => {
        if (stream && res.statusCode === 200) {
          resolve({ status: 200, body: '' });
          req.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Issue 28's classes, one request per declared parameter, as the admin with every other parameter plausible and the
 * path ids the fixtures'. A value that a route refuses for another reason (an earlier parameter, the caller's access)
 * must get the same refusal as a harmless value of the same kind: the control request.
 */
const PROTOTYPE_KEYS = ['constructor', '__proto__', 'toString'];
let serial = 0;
/** The control of a key: the same length and character classes (rot13), so that syntax rules judge both alike. */
const controlOf = (key: string) =>
  key.replace(/[a-z]/gi, (c) => {
    const base = c <= 'Z' ? 65 : 97;
    return String.fromCharCode(((c.charCodeAt(0) - base + 13) % 26) + base);
  });
/** An overlong sequence, a truncated one and an encoded surrogate: none is UTF-8. One per parameter, in turn. */
const NOT_UTF8 = ['%C0%AF', '%E2%82', '%ED%A0%80'];
const INEXACT_NUMBERS = ['9007199254740993', '1e400', '-9007199254740993'];
const IMPOSSIBLE_DATES = ['2027-02-30', '2027-04-31T12:00:00Z', '2027-01-01T24:00:00Z'];
/** The class member a parameter is tried with: each in turn, so that the run stays short. */
const inTurn = (values: string[], index: number) => values[index % values.length];

const messageOf = (answer: Answer): unknown => {
  try {
    return (JSON.parse(answer.body) as { message?: unknown }).message;
  } catch {
    return answer.body;
  }
};

/** A request to `route` with `params` (undefined: absent), `encoded` added as already percent-encoded text. */
function requestTo(
  resource: string,
  route: RouteDef,
  params: Record<string, string | undefined>,
  options: { encoded?: [string, string]; jsonBody?: Buffer } = {},
) {
  const segments = route.path
    .split('/')
    .filter(Boolean)
    .map((segment) => (segment.startsWith(':') ? (fixtures[resource] ?? 'x') : segment));
  const asForm = !route.rawBody && route.method !== 'GET';
  const fields = new URLSearchParams();
  let jsonBody = options.jsonBody;
  for (const spec of route.params) {
    const value = params[spec.name];
    if (value === undefined) continue;
    if (spec.in === 'body') jsonBody ??= Buffer.from(value);
    else fields.append(spec.name, value);
  }
  let encoded = fields.toString();
  if (options.encoded) encoded += `${encoded ? '&' : ''}${options.encoded[0]}=${options.encoded[1]}`;
  const path = `/api/v1/${resource}${segments.length ? '/' : ''}${segments.join('/')}`;
  const headers: Record<string, string> = { 'Girder-Token': admin.token };
  let body: Buffer | undefined;
  let url = path;
  if (route.rawBody) {
    body = Buffer.from('hostile bytes');
    headers['Content-Type'] = 'application/octet-stream';
  }
  if (jsonBody !== undefined) {
    body = jsonBody;
    headers['Content-Type'] = 'application/json';
  }
  if (asForm && body === undefined && encoded) {
    body = Buffer.from(encoded);
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
  } else if (encoded) url = `${path}?${encoded}`;
  return send(route.method, url, headers, body, route.produces === 'text/event-stream');
}

/** Every parameter of `route` tried with each of issue 28's classes its kind admits. */
async function issue28Classes(resource: string, route: RouteDef): Promise<void> {
  const plausible = Object.fromEntries(route.params.map((spec) => [spec.name, plausibleOf(spec)]));
  // A fresh plausible name in every request: a request and its control must not collide on a name one created.
  const fresh = () =>
    Object.fromEntries(
      Object.entries(plausible).map(([name, value]) => [name, value === 'plausible' ? `plausible${++serial}` : value]),
    );
  const withValue = async (name: string, value: string, options = {}) => {
    const answer = await requestTo(resource, route, { ...fresh(), [name]: value }, options);
    return { ...answer, body: answer.body.replace(/plausible\d+/g, 'plausible') };
  };
  /** `answer` refuses the value as the parameter's own (`named`), or exactly as the control value is refused. */
  const namedOrAsControl = async (answer: Answer, named: boolean, control: () => Promise<Answer>, label: string) => {
    expect({ label, status: Math.min(answer.status, 500) }).not.toEqual({ label, status: 500 });
    if (named) return;
    const expected = await control();
    expect({ label, status: answer.status }).toEqual({ label, status: expected.status });
    if (expected.status >= 400)
      expect({ label, message: messageOf(answer) }).toEqual({ label, message: messageOf(expected) });
  };

  for (const [index, spec] of route.params.entries()) {
    if (spec.in === 'query') {
      // Invalid UTF-8 is refused before anything else, on every route, naming the parameter.
      for (const bytes of [inTurn(NOT_UTF8, index)]) {
        const answer = await requestTo(resource, route, plausible, { encoded: [spec.name, `x${bytes}`] });
        expect({ param: spec.name, bytes, status: answer.status, message: messageOf(answer) }).toEqual({
          param: spec.name,
          bytes,
          status: 400,
          message: `Parameter ${spec.name} is not valid UTF-8.`,
        });
      }
    } else {
      const answer = await requestTo(resource, route, plausible, {
        jsonBody: Buffer.concat([Buffer.from('{"k": "'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]),
      });
      const named = messageOf(answer) === `JSON parameter ${spec.name}: the request body is not valid UTF-8.`;
      await namedOrAsControl(answer, named, () => withValue(spec.name, '{"k": "\u00e9"}'), `${spec.name} body`);
    }
    if ((spec.kind === 'string' || spec.kind === 'enum') && spec.in === 'query') {
      // A prototype-named key is an unknown key like any other.
      for (const key of PROTOTYPE_KEYS) {
        const answer = await withValue(spec.name, key);
        const control = async () => {
          const res = await withValue(spec.name, controlOf(key));
          return { ...res, body: res.body.split(controlOf(key)).join(key) };
        };
        await namedOrAsControl(answer, false, control, `${spec.name}=${key}`);
      }
    }
    if (spec.kind === 'json') {
      for (const literal of [inTurn(INEXACT_NUMBERS, index)]) {
        const answer = await withValue(spec.name, `[{"n": ${literal}}]`);
        const refusal = JSON.parse(answer.body) as { message?: string; field?: string };
        const named = refusal.message?.includes('cannot be stored exactly') === true;
        if (named) expect({ status: answer.status, field: refusal.field }).toEqual({ status: 400, field: spec.name });
        await namedOrAsControl(answer, named, () => withValue(spec.name, '[{"n": 1}]'), `${spec.name}=${literal}`);
      }
    }
    if (spec.kind === 'date') {
      for (const date of [inTurn(IMPOSSIBLE_DATES, index)]) {
        const answer = await withValue(spec.name, date);
        const named = answer.status === 400 && String(messageOf(answer)).includes(date);
        await namedOrAsControl(
          answer,
          named,
          () => withValue(spec.name, '2025-01-01T00:00:00Z'),
          `${spec.name}=${date}`,
        );
      }
    }
  }
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
  it.each(
    routes.map(({ resource, route }) => [`${route.method} /${resource}/${route.path}`, resource, route] as const),
  )('%s', async (_label, resource, route) => {
    await issue28Classes(resource, route);
    if (route.method === 'DELETE' && resource === 'user' && route.path === 'authentication') await login();
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
        const url = `${path}${query.size ? `?${query.toString()}` : ''}`;
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
        expect({
          url,
          status: answer.status < 500 ? 'not 5xx' : answer.status,
          body: answer.status < 500 ? '' : answer.body,
        }).toEqual({ url, status: 'not 5xx', body: '' });
        if (route.method === 'DELETE' && resource === 'user' && route.path === 'authentication') await login();
      }),
      // The examples count as runs: every one of them, then RUNS_PER_ROUTE random ones.
      { numRuns: examples.length + RUNS_PER_ROUTE, seed: SEED, endOnFailure: true, examples },
    );
  });

  it('still takes writes, is ready, and its read models equal a replay of the log', async () => {
    if ((await api.as(admin).get('/user/me')).body === null) await login();
    const created = await api
      .as(admin)
      .post('/folder')
      .type('form')
      .send({ parentType: 'user', parentId: admin._id, name: 'after the storm' });
    expect(created.status).toBe(200);
    const ready = await api.site().get('/readyz');
    expect(ready.status).toBe(200);
    const verified = await verifyOutput(api.server.dataDir);
    expect(verified.text).toContain('The read models match the event log.');
    expect(verified.code).toBe(0);
  }, 60_000);
});
