import { DEFAULT_ASSETSTORE_ID } from '../../src/domain/assetstoreBlobRef';
import { startApi, ok, type ApiClient, type Caller, type TestUser } from '../support/apiClient';
import { apiResources } from '../../src/http/resources';
import type { ParamSpec } from '../../src/http/params';
import type { RouteDef } from '../../src/http/routeTable';

/**
 * Rule 4 of issue 27, for every write route of the route table: called by an anonymous caller, by a user who holds
 * only READ on the resources it names, and by a user who holds nothing on them, it is refused (401 for the anonymous
 * caller, 403 for the others) and the event log's head stays where it was. The requests are built from each route's
 * declaration: path ids name the owner's fixture of the route's resource, declared parameters get a plausible value
 * (ids of the owner's fixtures, a name, an ACL), so that what decides the answer is the caller's access, not a
 * malformed request. A new write route is covered by being declared; nothing here names routes but the self-service
 * ones below, which act on the caller's own account by design.
 */

/** Routes whose writes act on the caller itself (an account, a key, a group of its own): nobody else's to refuse. */
const SELF_SERVICE = new Set([
  'POST /user', // registration
  'DELETE /user/authentication', // logging out one's own token
  'DELETE /token/session', // deleting the token one presents
  'PUT /user/password', // one's own password
  'POST /api_key', // a key of one's own
  'POST /api_key/token', // exchanging a key one holds for a token
  'POST /group', // a group of one's own
  'POST /group/:id/member', // asking to join a group one can see (or accepting one's own invitation)
  // Mailed links: anyone may ask for a mail to an address, which only its owner reads; the token it carries is the
  // authority, not the caller's login (test/http/accountMail.test.ts refuses every wrong token).
  'PUT /user/password/temporary',
  'PUT /user/:id/verification',
  'POST /user/verification',
]);

/**
 * Routes that read but take POST (Girder's, for parameters too long for a URL): not writes, so not in this suite;
 * their READ rule is tested with the route (test/http/resourceDownload.test.ts).
 */
const READS_BY_POST = new Set(['POST /resource/download']);

/** Routes whose `:id` names another fixture than their resource's. */
const PATH_FIXTURE: Record<string, string> = {
  'DELETE /file/upload/:id': 'upload',
  'POST /folder/:id/restore': 'deleted',
  'PUT /resource/:id/timestamp': 'folder',
};

let api: ApiClient;
let owner: TestUser;
let reader: TestUser;
let stranger: TestUser;
/** Fixture ids of the owner's resources, by the route resource whose `:id` they fill. */
const fixtures: Record<string, string> = {};

beforeAll(async () => {
  api = await startApi();
  const admin = await api.createUser('admin');
  owner = await api.createUser('owner');
  reader = await api.createUser('reader');
  stranger = await api.createUser('stranger');
  // The ACL as it is replaced: the owner keeps ADMIN, the reader gets READ.
  const grant = {
    users: [
      { id: owner._id, level: 2 },
      { id: reader._id, level: 0 },
    ],
    groups: [],
  };

  const home = await api.defaultFolder(owner, 'Private');
  fixtures.folder = await api.createFolder(owner, 'folder', home, 'shared', { access: grant });
  fixtures.subfolder = await api.newFolder(owner, fixtures.folder, 'sub');
  fixtures.deleted = await api.newFolder(owner, fixtures.folder, 'deleted');
  ok(await api.as(owner).delete(`/folder/${fixtures.deleted}`), 'delete');
  fixtures.item = await api.newItem(owner, fixtures.folder, 'item');
  fixtures.file = await api.addFile(owner, fixtures.item, 'owner bytes');
  fixtures.upload = ok(
    await api
      .as(owner)
      .post('/file')
      .query({ parentType: 'item', parentId: fixtures.item, name: 'pending.bin', size: 10 }),
    'upload',
  )._id;
  fixtures.collection = ok(await api.as(admin).post('/collection').query({ name: 'coll', public: false }))._id;
  ok(
    await api
      .as(admin)
      .put(`/collection/${fixtures.collection}/access`)
      .type('form')
      .send({ access: JSON.stringify(grant) }),
    'collection access',
  );
  fixtures.group = ok(await api.as(owner).post('/group').query({ name: 'owners' }))._id;
  ok(await api.as(owner).post(`/group/${fixtures.group}/invitation`).query({ userId: reader._id, level: 0 }));
  ok(await api.as(reader).post(`/group/${fixtures.group}/member`), 'reader joins');
  fixtures.api_key = ok(await api.as(owner).post('/api_key').query({ name: 'owner key' }))._id;
  fixtures.user = owner._id;
  // The store every deployment starts with (src/domain/assetstoreBlobRef.ts).
  fixtures.assetstore = DEFAULT_ASSETSTORE_ID;
});
afterAll(async () => {
  await api?.close();
});

/** A plausible value of a declared parameter: the owner's fixtures for ids, a valid shape for the rest. */
function plausible(spec: ParamSpec): string | undefined {
  switch (spec.name) {
    case 'parentType':
      return spec.values?.includes('folder') ? 'folder' : spec.values?.[0];
    case 'parentId':
    case 'folderId':
      return fixtures.folder;
    case 'itemId':
      return fixtures.item;
    case 'userId':
      return owner._id;
    case 'uploadId':
      return fixtures.upload;
    case 'fields':
      return JSON.stringify(['planted']);
    case 'resources':
      return JSON.stringify({ folder: [fixtures.subfolder], item: [fixtures.item] });
    case 'access':
      return JSON.stringify({ users: [{ id: stranger._id, level: 2 }], groups: [] });
    case 'metadata':
      return JSON.stringify({ planted: 'yes' });
    case 'key':
      return 'core.brand_name';
    case 'value':
      return JSON.stringify('Planted');
    case 'list':
      return JSON.stringify([{ key: 'core.brand_name', value: 'Planted' }]);
    case 'offset':
      return '0';
    case 'size':
      return '3';
  }
  if (spec.kind === 'enum') return spec.values?.[0];
  if (!spec.required) return undefined;
  return { int: '1', bool: 'false', json: '{}', string: 'plausible', date: '2026-01-01T00:00:00Z' }[spec.kind];
}

/** The route's path with its `:id` filled by the owner's fixture of the route's resource (or PATH_FIXTURE's). */
function pathOf(name: string, resource: string, route: RouteDef): string {
  const id = fixtures[Object.hasOwn(PATH_FIXTURE, name) ? PATH_FIXTURE[name] : resource];
  return route.path
    .split('/')
    .map((s) => (s.startsWith(':') ? id : s))
    .join('/');
}

const nonGetRoutes = apiResources.flatMap((resource) =>
  resource.routes
    .filter((route) => route.method !== 'GET')
    .map((route) => ({
      resource: resource.name,
      route,
      name: `${route.method} /${resource.name}${route.path ? `/${route.path}` : ''}`,
    })),
);
const writeRoutes = nonGetRoutes.filter((r) => !READS_BY_POST.has(r.name));

function send(caller: Caller, name: string, resource: string, route: RouteDef) {
  const url = `/${resource}${route.path ? `/${pathOf(name, resource, route)}` : ''}`;
  const session = api.as(caller);
  const request =
    route.method === 'POST'
      ? session.post(url)
      : route.method === 'PUT'
        ? session.put(url)
        : route.method === 'PATCH'
          ? session.patch(url)
          : session.delete(url);
  const query: Record<string, string> = {};
  const body: Record<string, unknown> = {};
  for (const spec of route.params) {
    const value = plausible(spec);
    if (value === undefined) continue;
    if (spec.in === 'body') body[spec.name] = JSON.parse(value);
    else query[spec.name] = value;
  }
  request.query(query);
  if (route.rawBody) return request.set('Content-Type', 'application/octet-stream').send(Buffer.from('abc'));
  const [bodyParam] = Object.values(body);
  return bodyParam === undefined ? request : request.send(bodyParam as object);
}

it('covers every write route but the self-service ones, which all exist', () => {
  const names = new Set(writeRoutes.map((r) => r.name));
  const named = [...SELF_SERVICE, ...Object.keys(PATH_FIXTURE)];
  expect(named.filter((name) => !names.has(name))).toEqual([]);
  const nonGet = new Set(nonGetRoutes.map((r) => r.name));
  expect([...READS_BY_POST].filter((name) => !nonGet.has(name))).toEqual([]);
  expect(writeRoutes.length - SELF_SERVICE.size).toBeGreaterThan(30);
});

const callers: [string, () => Caller, number][] = [
  ['an anonymous caller', () => null, 401],
  ['a READ-only grantee', () => reader, 403],
  ['another user', () => stranger, 403],
];

describe.each(writeRoutes.filter((r) => !SELF_SERVICE.has(r.name)))('$name', ({ name, resource, route }) => {
  it.each(callers)('refuses %s and leaves the log as it was', async (_who, caller, status) => {
    const head = await api.headPosition();
    const res = await send(caller(), name, resource, route);
    expect({ status: res.status, type: res.body.type }).toEqual({ status, type: 'access' });
    expect(await api.headPosition()).toBe(head);
  });
});
