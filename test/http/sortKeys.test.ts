import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { apiResources } from '../../src/http/resources';

/**
 * Issue 27, rule 3: a listing sorts only on fields its view shows the caller, and metadata keys reach either
 * read-model adapter only as a path it addresses correctly. Runs again on the MongoDB adapter (http-mongo project).
 */

let api: ApiClient;
let admin: TestUser;
let alice: TestUser;
const fixtures: Record<string, string> = {};

beforeAll(async () => {
  api = await startApi();
  admin = await api.createUser('admin');
  // Logins in one order, emails in the reverse one: a sort by email is told apart from a sort by login.
  alice = await api.createUser('alice', { email: 'zz-alice@example.com' });
  await api.createUser('bobby', { email: 'yy-bobby@example.com' });
  await api.createUser('carol', { email: 'xx-carol@example.com' });
  fixtures.folder = await api.defaultFolder(alice, 'Public');
  fixtures.item = await api.newItem(alice, fixtures.folder, 'item');
  await api.addFile(alice, fixtures.item, 'bytes');
  fixtures.group = (await api.as(alice).post('/group').type('form').send({ name: 'team', public: 'true' })).body._id;
  await api.as(alice).post('/api_key').query({ name: 'key' });
  // The store every deployment starts with holds the file just added.
  fixtures.assetstore = (await api.as(admin).get('/assetstore')).body[0]._id;
});
afterAll(() => api.close());

const rest = (message: string) => ({ message, type: 'rest' });
const logins = (body: { login: string }[]) => body.map((u) => u.login);

describe('GET /user: hidden fields neither sort nor filter', () => {
  const userFields = '_id, login, firstName, lastName, public, admin, created';

  it.each([null, 'alice'] as const)('refuses sort=email to %s, naming sort', async (who) => {
    const res = await api
      .as(who === null ? null : alice)
      .get('/user')
      .query({ text: 'example', sort: 'email' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(rest(`Invalid value for sort: "email". Allowed values: ${userFields}.`));
  });

  it.each(['passwordHash', 'salt', 'groups', 'otp', '_accessLevel'])('refuses sort=%s to anyone', async (sort) => {
    for (const caller of [null, alice, admin]) {
      const res = await api.as(caller).get('/user').query({ sort });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(new RegExp(`^Invalid value for sort: "${sort}"\\. Allowed values: _id, `));
    }
  });

  it('lets a site admin sort users by email', async () => {
    const res = await api.as(admin).get('/user').query({ sort: 'email' });
    expect(res.status).toBe(200);
    expect(logins(res.body)).toEqual(['admin', 'carol', 'bobby', 'alice']);
    const byLogin = await api.as(alice).get('/user').query({ sort: 'login', sortdir: -1 });
    expect(logins(byLogin.body)).toEqual(['carol', 'bobby', 'alice', 'admin']);
  });

  it('matches a search on email only for a caller shown the emails', async () => {
    for (const caller of [null, alice]) {
      const res = await api.as(caller).get('/user').query({ text: 'yy-bob' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
      expect(res.headers['girder-total-count']).toBe('0');
    }
    expect(logins((await api.as(admin).get('/user').query({ text: 'yy-bob' })).body)).toEqual(['bobby']);
    expect(logins((await api.as(alice).get('/user').query({ text: 'bob' })).body)).toEqual(['bobby']);
  });

  it('refuses hidden fields on a group member listing too', async () => {
    const res = await api.as(alice).get(`/group/${fixtures.group}/member`).query({ sort: 'email' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(rest(`Invalid value for sort: "email". Allowed values: ${userFields}.`));
    expect((await api.as(admin).get(`/group/${fixtures.group}/member`).query({ sort: 'email' })).status).toBe(200);
  });
});

/** Every listing route of the route table: the routes whose parameters include `sort`. */
const sortedRoutes = apiResources.flatMap((resource) =>
  resource.routes
    .filter((r) => r.method === 'GET' && r.params.some((p) => p.name === 'sort'))
    .map((r) => ({
      resource: resource.name,
      path: r.path,
      label: `GET /${resource.name}${r.path ? `/${r.path}` : ''}`,
      // Administrators' listings (uploads in progress, an assetstore's files) are asked by one.
      caller: r.access === 'admin' ? () => admin : () => alice,
    })),
);

/** The listings of resources that carry metadata (`meta.<key>` sorts them). */
const WITH_METADATA = new Set(['GET /folder', 'GET /item', 'GET /collection']);

/** Positions in those listings take their sort keys, but only a field the document has at its top level (Girder). */
const POSITION_IN_METADATA_LISTING = new Set(['GET /folder/:id/position', 'GET /item/:id/position']);

/** A listing's URL with its `:id` filled by a fixture of its resource, and the query that makes it list something. */
function listing(route: { resource: string; path: string }) {
  const url = `/${route.resource}${route.path ? `/${route.path.replace(':id', fixtures[route.resource])}` : ''}`;
  return { url, query: { parentType: 'folder', parentId: fixtures.folder, folderId: fixtures.folder } };
}

/** Sort keys no view shows, and keys no adapter can address (NUL, `$`, empty segments), each a 400. */
const REFUSED = [
  'passwordHash',
  'salt',
  'email',
  'access',
  'key',
  'blobId',
  'doc',
  'creatorId.x',
  'no.such.field',
  '__proto__',
  'constructor',
  'toString',
  '',
  '\0',
  'name\0',
  'name\\',
  '$where',
  '.name',
  'name.',
  'meta.$gt',
  'meta.',
  'meta..a',
  'meta.a\0b',
  'metadata.$where',
  'metadata.a.\0',
];

describe('every listing route refuses hidden and malformed sort keys', () => {
  it('finds the listing routes', () => {
    expect(sortedRoutes.map((r) => r.label)).toEqual(
      expect.arrayContaining([
        'GET /folder',
        'GET /item',
        'GET /item/:id/files',
        'GET /user',
        'GET /group',
        'GET /api_key',
      ]),
    );
  });

  it.each(sortedRoutes)('$label', async (route) => {
    const { url, query } = listing(route);
    const caller = route.caller();
    expect((await api.as(caller).get(url).query(query)).status).toBe(200);
    for (const sort of REFUSED) {
      const res = await api
        .as(caller)
        .get(url)
        .query({ ...query, sort });
      expect({ sort, status: res.status, type: res.body.type }).toEqual({ sort, status: 400, type: 'rest' });
      expect(res.body.message.startsWith(`Invalid value for sort: "${sort}". `)).toBe(true);
    }
    // Metadata keys with a backslash or a quote: an order where the listing has metadata, else the same 400.
    for (const sort of ['meta.a\\b', 'meta.a"b', 'meta.a\\']) {
      const res = await api
        .as(caller)
        .get(url)
        .query({ ...query, sort });
      expect({ sort, status: res.status === 200 ? 200 : res.body.message }).toEqual({
        sort,
        status: WITH_METADATA.has(route.label)
          ? 200
          : POSITION_IN_METADATA_LISTING.has(route.label)
            ? 'Invalid sort mode.'
            : expect.stringMatching(/^Invalid value for sort: ".*"\. Allowed values: /),
      });
    }
  });
});

describe('metadata keys with quotes, backslashes and control characters sort correctly', () => {
  // Keys a metadata document may hold (no `.`, no leading `$`): each becomes a quoted JSON path in SQLite.
  const KEYS = ['a\\b', 'a"b', 'a\\', 'a\nb', "a'b", '\\u0000', 'ü ✓'];
  let parent: string;
  beforeAll(async () => {
    parent = await api.subfolder(alice, fixtures.folder, 'meta sort');
    for (const [name, rank] of [
      ['one', 2],
      ['two', 3],
      ['three', 1],
    ] as const) {
      const metadata = Object.fromEntries(KEYS.map((k) => [k, rank]));
      await api.subfolder(alice, parent, name, { metadata });
      const item = await api.newItem(alice, parent, `${name}.txt`);
      const set = await api
        .as(alice)
        .put(`/item/${item}/metadata`)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify(metadata));
      expect(set.status).toBe(200);
    }
  });

  it.each(KEYS)('sorts folders and items by metadata key %j', async (key) => {
    for (const [url, query, suffix] of [
      ['/folder', { parentType: 'folder', parentId: parent }, ''],
      ['/item', { folderId: parent }, '.txt'],
    ] as const) {
      for (const prefix of ['metadata', 'meta']) {
        const res = await api
          .as(alice)
          .get(url)
          .query({ ...query, sort: `${prefix}.${key}`, sortdir: -1 });
        expect({ url, status: res.status }).toEqual({ url, status: 200 });
        expect((res.body as { name: string }[]).map((r) => r.name)).toEqual(
          ['two', 'one', 'three'].map((n) => n + suffix),
        );
      }
    }
  });

  it('sorts a point-in-time listing by the same keys', async () => {
    const at = (await api.headPosition()).toString();
    const res = await api
      .as(alice)
      .get('/folder')
      .query({ parentType: 'folder', parentId: parent, at, sort: 'metadata.a\\b' });
    expect(res.status).toBe(200);
    expect((res.body as { name: string }[]).map((r) => r.name)).toEqual(['three', 'one', 'two']);
    const refused = await api
      .as(alice)
      .get('/folder')
      .query({ parentType: 'folder', parentId: parent, at, sort: 'access' });
    expect(refused.status).toBe(400);
  });
});
