import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { folderResource } from '../../src/http/resources/folder';
import { issueToken } from '../../src/commands/userCommands';
import { systemMeta } from '../../src/commands/requestMeta';
import { Scope } from '../../src/domain/scopes';

/**
 * Who may call which folder route: every route of the interface's summary table against an anonymous caller, users
 * holding READ, WRITE and ADMIN on the folder, and a site admin; then token scopes and unresolvable ids.
 * Every route listed here must be in the route table (the first test says which are missing).
 */

let api: ApiClient;
let siteAdmin: TestUser;
let owner: TestUser;
let reader: TestUser;
let writer: TestUser;
let folderAdmin: TestUser;
let ownerPublic: string;

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';
interface Call {
  method: HttpMethod;
  path: string;
  query?: Record<string, string>;
  form?: Record<string, string>;
  json?: unknown;
}

function send(call: Call, token: string | null) {
  const session = api.as(token);
  let req =
    call.method === 'GET' ? session.get(call.path) : call.method === 'POST' ? session.post(call.path) : call.method === 'PUT' ? session.put(call.path) : session.delete(call.path);
  req = req.query(call.query ?? {});
  if (call.form) req = req.type('form').send(call.form);
  if (call.json !== undefined) req = req.set('Content-Type', 'application/json').send(JSON.stringify(call.json));
  return req;
}

let counter = 0;
const unique = (prefix: string) => `${prefix} ${++counter}`;

/** A private folder on which reader, writer and folderAdmin hold READ, WRITE and ADMIN (created by owner). */
async function makeTarget(): Promise<string> {
  const created = await send({ method: 'POST', path: '/folder', form: { parentType: 'folder', parentId: ownerPublic, name: unique('target') } }, owner.token);
  if (created.status !== 200) throw new Error(`POST /folder: ${created.status} ${JSON.stringify(created.body)}`);
  const id: string = created.body._id;
  const access = {
    users: [
      { id: owner._id, level: 2 },
      { id: reader._id, level: 0 },
      { id: writer._id, level: 1 },
      { id: folderAdmin._id, level: 2 },
    ],
    groups: [],
  };
  const set = await send({ method: 'PUT', path: `/folder/${id}/access`, form: { access: JSON.stringify(access), public: 'false' } }, owner.token);
  if (set.status !== 200) throw new Error(`PUT /folder/:id/access: ${set.status} ${JSON.stringify(set.body)}`);
  return id;
}

/** Every route of the summary table, with a well-formed request against folder `id`. */
interface RouteRow {
  route: string;
  method: HttpMethod;
  path: string;
  /** The level the route checks on the folder (on the parent for GET/POST /folder). */
  level: 'Read' | 'Write' | 'Admin';
  call(id: string): Call;
}

const ROUTES: RouteRow[] = [
  { route: 'GET /folder?parentType=folder&parentId=:id', method: 'GET', path: '', level: 'Read',
    call: (id) => ({ method: 'GET', path: '/folder', query: { parentType: 'folder', parentId: id } }) },
  { route: 'GET /folder/:id', method: 'GET', path: ':id', level: 'Read', call: (id) => ({ method: 'GET', path: `/folder/${id}` }) },
  { route: 'GET /folder/:id/details', method: 'GET', path: ':id/details', level: 'Read', call: (id) => ({ method: 'GET', path: `/folder/${id}/details` }) },
  { route: 'GET /folder/:id/download', method: 'GET', path: ':id/download', level: 'Read', call: (id) => ({ method: 'GET', path: `/folder/${id}/download` }) },
  { route: 'GET /folder/:id/rootpath', method: 'GET', path: ':id/rootpath', level: 'Read', call: (id) => ({ method: 'GET', path: `/folder/${id}/rootpath` }) },
  { route: 'GET /folder/:id/access', method: 'GET', path: ':id/access', level: 'Admin', call: (id) => ({ method: 'GET', path: `/folder/${id}/access` }) },
  { route: 'POST /folder (parentId=:id)', method: 'POST', path: '', level: 'Write',
    call: (id) => ({ method: 'POST', path: '/folder', form: { parentType: 'folder', parentId: id, name: unique('child') } }) },
  { route: 'PUT /folder/:id', method: 'PUT', path: ':id', level: 'Write',
    call: (id) => ({ method: 'PUT', path: `/folder/${id}`, form: { description: 'changed' } }) },
  { route: 'PUT /folder/:id/access', method: 'PUT', path: ':id/access', level: 'Admin',
    call: (id) => ({ method: 'PUT', path: `/folder/${id}/access`, form: { access: JSON.stringify({ users: [], groups: [] }) } }) },
  { route: 'PUT /folder/:id/metadata', method: 'PUT', path: ':id/metadata', level: 'Write',
    call: (id) => ({ method: 'PUT', path: `/folder/${id}/metadata`, json: { a: 1 } }) },
  { route: 'DELETE /folder/:id/metadata', method: 'DELETE', path: ':id/metadata', level: 'Write',
    call: (id) => ({ method: 'DELETE', path: `/folder/${id}/metadata`, json: ['a'] }) },
  { route: 'POST /folder/:id/copy', method: 'POST', path: ':id/copy', level: 'Read',
    call: (id) => ({ method: 'POST', path: `/folder/${id}/copy` }) },
  { route: 'DELETE /folder/:id/contents', method: 'DELETE', path: ':id/contents', level: 'Write',
    call: (id) => ({ method: 'DELETE', path: `/folder/${id}/contents` }) },
  { route: 'DELETE /folder/:id', method: 'DELETE', path: ':id', level: 'Admin', call: (id) => ({ method: 'DELETE', path: `/folder/${id}` }) },
];

const implemented = (row: { method: HttpMethod; path: string }) => folderResource.routes.some((r) => r.method === row.method && r.path === row.path);
const row = (route: string) => ROUTES.find((r) => r.route === route)!;

/**
 * The matrix. `ok`: 200. `login`: the route needs a logged-in user (401 `You must be logged in.`). `denied`: the
 * folder level is missing (`<Level> access denied for folder <id> (user <id|None>).`, 401 anonymous, 403 logged in).
 * `parentDenied`: WRITE is missing on the folder's parent (owner's Public), where a copy without `parentId` lands.
 */
type Outcome = 'ok' | 'login' | 'denied' | 'parentDenied';
const CALLERS = ['anonymous', 'READ', 'WRITE', 'ADMIN', 'site admin'] as const;
const MATRIX: [route: string, outcomes: [Outcome, Outcome, Outcome, Outcome, Outcome]][] = [
  //                                             anonymous  READ      WRITE     ADMIN  site admin
  ['GET /folder?parentType=folder&parentId=:id', ['denied', 'ok',     'ok',     'ok',  'ok']],
  ['GET /folder/:id',                            ['denied', 'ok',     'ok',     'ok',  'ok']],
  ['GET /folder/:id/details',                    ['denied', 'ok',     'ok',     'ok',  'ok']],
  ['GET /folder/:id/download',                   ['denied', 'ok',     'ok',     'ok',  'ok']],
  ['GET /folder/:id/rootpath',                   ['denied', 'ok',     'ok',     'ok',  'ok']],
  ['GET /folder/:id/access',                     ['login',  'denied', 'denied', 'ok',  'ok']],
  ['POST /folder (parentId=:id)',                ['login',  'denied', 'ok',     'ok',  'ok']],
  ['PUT /folder/:id',                            ['login',  'denied', 'ok',     'ok',  'ok']],
  ['PUT /folder/:id/access',                     ['login',  'denied', 'denied', 'ok',  'ok']],
  ['PUT /folder/:id/metadata',                   ['login',  'denied', 'ok',     'ok',  'ok']],
  ['DELETE /folder/:id/metadata',                ['login',  'denied', 'ok',     'ok',  'ok']],
  ['POST /folder/:id/copy',                      ['login',  'parentDenied', 'parentDenied', 'parentDenied', 'ok']],
  ['DELETE /folder/:id/contents',                ['login',  'denied', 'ok',     'ok',  'ok']],
  ['DELETE /folder/:id',                         ['login',  'denied', 'denied', 'ok',  'ok']],
];

function callerOf(name: (typeof CALLERS)[number]): TestUser | null {
  return { anonymous: null, READ: reader, WRITE: writer, ADMIN: folderAdmin, 'site admin': siteAdmin }[name];
}

function expected(outcome: Outcome, level: RouteRow['level'], id: string, caller: TestUser | null): { status: number; body?: object } {
  switch (outcome) {
    case 'ok':
      return { status: 200 };
    case 'login':
      return { status: 401, body: { message: 'You must be logged in.', type: 'access' } };
    case 'parentDenied':
      return { status: 403, body: { message: `Write access denied for folder ${ownerPublic} (user ${caller!._id}).`, type: 'access' } };
    case 'denied':
      return {
        status: caller ? 403 : 401,
        body: { message: `${level} access denied for folder ${id} (user ${caller ? caller._id : 'None'}).`, type: 'access' },
      };
  }
}

/** Asserts a response against an expected outcome; the route and caller travel along so that failures name them. */
async function check(label: string, call: Call, token: string | null, want: { status: number; body?: object }) {
  const res = await send(call, token);
  const got = { label, status: res.status, ...(want.body ? { body: res.body } : {}) };
  expect(got).toEqual({ label, ...want });
  return res;
}

beforeAll(async () => {
  api = await startApi();
  siteAdmin = await api.createUser('siteadmin');
  owner = await api.createUser('owner');
  reader = await api.createUser('reader');
  writer = await api.createUser('writer');
  folderAdmin = await api.createUser('folderadmin');
  const defaults = await send({ method: 'GET', path: '/folder', query: { parentType: 'user', parentId: owner._id, name: 'Public' } }, owner.token);
  ownerPublic = defaults.body[0]._id;
});
afterAll(() => api.close());

describe('access matrix: route × caller', () => {
  it('covers routes that all exist in the route table', () => {
    expect(ROUTES.filter((r) => !implemented(r)).map((r) => r.route)).toEqual([]);
  });

  for (const [route, outcomes] of MATRIX) {
    const r = row(route);
    const cases = CALLERS.map((caller, i) => [caller, outcomes[i]] as const);
    it.each(cases)(`${route} as %s → %s`, async (callerName, outcome) => {
      const id = await makeTarget();
      const caller = callerOf(callerName);
      await check(`${route} as ${callerName}`, r.call(id), caller?.token ?? null, expected(outcome, r.level, id, caller));
    });
  }
});

describe('access matrix: token scopes', () => {
  /**
   * The caller holds ADMIN on the folder; only the token's scopes vary. A token lacking the route's scope identifies
   * nobody, so the request runs as anonymous: public routes check the folder as for `user None`, user routes say
   * `You must be logged in.`.
   */
  const SCOPED: [scopes: string[], route: string, outcome: Outcome][] = [
    [[Scope.DATA_READ], 'GET /folder/:id', 'ok'],
    [[Scope.DATA_READ], 'GET /folder?parentType=folder&parentId=:id', 'ok'],
    [[Scope.DATA_READ], 'GET /folder/:id/details', 'ok'],
    [[Scope.DATA_READ], 'GET /folder/:id/rootpath', 'ok'],
    [[Scope.DATA_READ], 'POST /folder (parentId=:id)', 'login'],
    [[Scope.DATA_READ], 'PUT /folder/:id', 'login'],
    [[Scope.DATA_READ], 'PUT /folder/:id/metadata', 'login'],
    [[Scope.DATA_READ], 'PUT /folder/:id/access', 'login'],
    [[Scope.DATA_READ], 'GET /folder/:id/access', 'login'],
    [[Scope.DATA_READ], 'DELETE /folder/:id', 'login'],
    [[Scope.DATA_WRITE], 'GET /folder/:id', 'denied'],
    [[Scope.DATA_WRITE], 'POST /folder (parentId=:id)', 'ok'],
    [[Scope.DATA_WRITE], 'PUT /folder/:id', 'ok'],
    [[Scope.DATA_WRITE], 'DELETE /folder/:id/metadata', 'ok'],
    [[Scope.DATA_WRITE], 'GET /folder/:id/access', 'login'],
    [[Scope.DATA_WRITE], 'DELETE /folder/:id', 'login'],
    [[Scope.DATA_OWN], 'GET /folder/:id/access', 'ok'],
    [[Scope.DATA_OWN], 'PUT /folder/:id/access', 'ok'],
    [[Scope.DATA_OWN], 'DELETE /folder/:id', 'ok'],
    [[Scope.DATA_OWN], 'GET /folder/:id', 'denied'],
    [[Scope.DATA_OWN], 'PUT /folder/:id', 'login'],
    [[Scope.DATA_READ, Scope.DATA_WRITE, Scope.DATA_OWN], 'GET /folder/:id', 'ok'],
    [[Scope.DATA_READ, Scope.DATA_WRITE, Scope.DATA_OWN], 'PUT /folder/:id', 'ok'],
    [[Scope.DATA_READ, Scope.DATA_WRITE, Scope.DATA_OWN], 'DELETE /folder/:id', 'ok'],
  ];

  const tokenFor = async (scopes: string[]) =>
    (await issueToken(api.runtime.services.commands, { userId: folderAdmin._id, scope: scopes, days: 1 }, systemMeta('test-scoped-token'))).token;

  for (const [scopes, route, outcome] of SCOPED) {
    const r = row(route);
    const title = `a ${scopes.join('+')} token: ${route} → ${outcome}`;
    it(title, async () => {
      const id = await makeTarget();
      const token = await tokenFor(scopes);
      // Denied here means "checked as anonymous": the message names user None.
      await check(title, r.call(id), token, expected(outcome, r.level, id, null));
    });
  }
});

describe('access matrix: unresolvable ids', () => {
  const MALFORMED = 'not-an-id';
  const UNKNOWN = '0123456789abcdef01234567';
  const idRoutes = ROUTES.filter((r) => r.path.startsWith(':id'));

  for (const r of idRoutes) {
    it.each([MALFORMED, UNKNOWN])(`${r.route} with id %s → 400 Invalid folder id`, async (id) => {
      await check(`${r.route} ${id}`, r.call(id), siteAdmin.token, { status: 400, body: { message: `Invalid folder id (${id}).`, type: 'rest' } });
    });
  }

  it.each(idRoutes.filter((r) => MATRIX.find(([route]) => route === r.route)![1][0] === 'login'))(
    'checks the login before the id: anonymous $route with a malformed id → 401',
    async (r) => {
      await check(r.route, r.call(MALFORMED), null, expected('login', r.level, MALFORMED, null));
    },
  );

  const PARENT_CALLS: [label: string, route: { method: HttpMethod; path: string }, call: Call][] = [
    ['GET /folder', { method: 'GET', path: '' }, { method: 'GET', path: '/folder', query: { parentType: 'folder', parentId: UNKNOWN } }],
    ['POST /folder', { method: 'POST', path: '' }, { method: 'POST', path: '/folder', form: { parentType: 'folder', parentId: UNKNOWN, name: 'x' } }],
  ];
  for (const [label, route, call] of PARENT_CALLS) {
    it(`${label} with an unknown parent → 400 No such folder`, async () => {
      await check(label, call, siteAdmin.token, { status: 400, body: { message: `No such folder: ${UNKNOWN}`, type: 'validation', field: 'id' } });
    });
  }
});
