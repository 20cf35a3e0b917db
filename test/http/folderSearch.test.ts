import { startApi, type ApiClient, type Caller, type TestUser } from '../support/apiClient';
import { newId } from '../../src/domain/ids';

/** GET /folder: children of a parent, global text search, paging and sorting, with the reference's messages. */

let api: ApiClient;
let admin: TestUser;
let alice: TestUser;
let bob: TestUser;
/** alice's default folders. */
let alicePublic: string;
let alicePrivate: string;

const names = (body: { name: string }[]) => body.map((f) => f.name);

beforeAll(async () => {
  api = await startApi();
  admin = await api.createUser('admin');
  alice = await api.createUser('alice', { firstName: 'Alice', lastName: 'Liddell' });
  bob = await api.createUser('bobby');
  const defaults = await api.as(alice).get('/folder').query({ parentType: 'user', parentId: alice._id });
  alicePrivate = defaults.body.find((f: { name: string }) => f.name === 'Private')._id;
  alicePublic = defaults.body.find((f: { name: string }) => f.name === 'Public')._id;
});
afterAll(() => api.close());

describe('GET /folder: search modes and parameters', () => {
  it.each([
    ['no parameter', {}],
    ['a lone parentId', { parentId: 'x' }],
    ['a lone parentType', { parentType: 'user' }],
    ['an empty text', { text: '' }],
    ['an empty parentId and no text', { parentType: 'user', parentId: '' }],
  ])('%s is an invalid search mode', async (_label, query) => {
    const res = await api.as(alice).get('/folder').query(query);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'Invalid search mode.', type: 'rest' });
  });

  it.each([
    [{ parentType: 'item' }, 'Invalid value for parentType: "item". Allowed values: folder, user, collection.'],
    [{ parentType: '' }, 'Invalid value for parentType: "". Allowed values: folder, user, collection.'],
    [{ limit: 'ten' }, 'Invalid value for integer parameter limit: ten.'],
    [{ offset: '1.5' }, 'Invalid value for integer parameter offset: 1.5.'],
    [{ sortdir: '2' }, 'Invalid value for sortdir: "2". Allowed values: 1, -1.'],
    // Declaration order decides: parentType comes before the paging parameters.
    [
      { parentType: 'bad', limit: 'bad' },
      'Invalid value for parentType: "bad". Allowed values: folder, user, collection.',
    ],
  ])('rejects %j', async (query, message) => {
    const res = await api.as(alice).get('/folder').query(query);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message, type: 'rest' });
  });
});

describe('GET /folder: children of a parent', () => {
  it.each<[string, () => Caller, string[]]>([
    ['the owner', () => alice, ['Private', 'Public']],
    ['a site admin', () => admin, ['Private', 'Public']],
    ['another user', () => bob, ['Public']],
    ['an anonymous caller', () => null, ['Public']],
  ])('lists only the folders %s may read, with the total in Girder-Total-Count', async (_label, caller, expected) => {
    const res = await api.as(caller()).get('/folder').query({ parentType: 'user', parentId: alice._id });
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(expected);
    expect(res.headers['girder-total-count']).toBe(String(expected.length));
  });

  it('filters by exact, case-sensitive name', async () => {
    const exact = await api
      .as(alice)
      .get('/folder')
      .query({ parentType: 'user', parentId: alice._id, name: 'Private' });
    expect(names(exact.body)).toEqual(['Private']);
    expect(exact.headers['girder-total-count']).toBe('1');
    const otherCase = await api
      .as(alice)
      .get('/folder')
      .query({ parentType: 'user', parentId: alice._id, name: 'private' });
    expect(otherCase.body).toEqual([]);
    expect(otherCase.headers['girder-total-count']).toBe('0');
    // An empty name is no filter (Girder tests its truthiness).
    const empty = await api.as(alice).get('/folder').query({ parentType: 'user', parentId: alice._id, name: '' });
    expect(names(empty.body)).toEqual(['Private', 'Public']);
  });

  it('filters children by text, without a _textScore', async () => {
    const parent = await api.subfolder(alice, alicePublic, 'Text parent');
    await api.subfolder(alice, parent, 'Quarterly zebra report');
    await api.subfolder(alice, parent, 'Other', { description: 'zebras everywhere' });
    await api.subfolder(alice, parent, 'Nothing here');
    await api.subfolder(alice, alicePublic, 'zebra outside the parent');
    const res = await api.as(bob).get('/folder').query({ parentType: 'folder', parentId: parent, text: 'zebra' });
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(['Other', 'Quarterly zebra report']);
    expect(res.body[0]).not.toHaveProperty('_textScore');
    expect(res.headers['girder-total-count']).toBe('2');
  });

  it('loads the parent at READ: unknown or malformed parents and unreadable parents fail', async () => {
    const missing = newId();
    const cases: [Record<string, string>, Caller, number, object][] = [
      [
        { parentType: 'folder', parentId: missing },
        alice,
        400,
        { message: `No such folder: ${missing}`, type: 'validation', field: 'id' },
      ],
      [
        { parentType: 'folder', parentId: 'nope' },
        alice,
        400,
        { message: 'No such folder: nope', type: 'validation', field: 'id' },
      ],
      [
        { parentType: 'user', parentId: missing },
        alice,
        400,
        { message: `No such user: ${missing}`, type: 'validation', field: 'id' },
      ],
      [
        { parentType: 'collection', parentId: missing },
        null,
        400,
        { message: `No such collection: ${missing}`, type: 'validation', field: 'id' },
      ],
      [
        { parentType: 'folder', parentId: alicePrivate },
        null,
        401,
        { message: `Read access denied for folder ${alicePrivate} (user None).`, type: 'access' },
      ],
      [
        { parentType: 'folder', parentId: alicePrivate },
        bob,
        403,
        { message: `Read access denied for folder ${alicePrivate} (user ${bob._id}).`, type: 'access' },
      ],
    ];
    for (const [query, caller, status, body] of cases) {
      const res = await api.as(caller).get('/folder').query(query);
      expect({ query, status: res.status, body: res.body }).toEqual({ query, status, body });
    }
  });

  it('returns filtered folder records', async () => {
    const res = await api.as(alice).get('/folder').query({ parentType: 'user', parentId: alice._id, name: 'Public' });
    const [folder] = res.body;
    expect(Object.keys(folder).sort()).toEqual([
      '_accessLevel',
      '_id',
      '_modelType',
      'baseParentId',
      'baseParentType',
      'created',
      'creatorId',
      'description',
      'metadata',
      'name',
      'parentCollection',
      'parentId',
      'public',
      'size',
      'updated',
    ]);
  });
});

describe('GET /folder: paging and sorting', () => {
  let parent: string;
  beforeAll(async () => {
    parent = await api.subfolder(alice, alicePublic, 'Sorting');
    await api.subfolder(alice, parent, 'b', { metadata: { x: 2 } });
    await api.subfolder(alice, parent, 'A', { metadata: { x: 3 } });
    await api.subfolder(alice, parent, 'C', { metadata: { x: 1 } });
  });
  const list = (query: Record<string, string | number>) =>
    api
      .as(alice)
      .get('/folder')
      .query({ parentType: 'folder', parentId: parent, ...query });

  it.each<[Record<string, string | number>, string[]]>([
    [{}, ['A', 'b', 'C']],
    [{ sortdir: -1 }, ['C', 'b', 'A']],
    [{ sort: 'name' }, ['A', 'C', 'b']],
    [{ sort: 'created' }, ['b', 'A', 'C']],
    [{ sort: 'created', sortdir: -1 }, ['C', 'A', 'b']],
    [{ sort: 'meta.x' }, ['C', 'b', 'A']],
    [{ sort: 'metadata.x' }, ['C', 'b', 'A']],
    [{ sort: 'metadata.x', sortdir: -1 }, ['A', 'b', 'C']],
  ])('sorts %j', async (query, expected) => {
    const res = await list(query);
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(expected);
  });

  it.each<[Record<string, string | number>, string[]]>([
    [{ limit: 2 }, ['A', 'b']],
    [{ limit: 2, offset: 2 }, ['C']],
    [{ limit: 0 }, ['A', 'b', 'C']],
    [{ limit: 0, offset: 1 }, ['b', 'C']],
    [{ offset: 5 }, []],
  ])('pages %j; the total ignores limit and offset', async (query, expected) => {
    const res = await list(query);
    expect(names(res.body)).toEqual(expected);
    expect(res.headers['girder-total-count']).toBe('3');
  });

  it('returns the metadata of each folder under `metadata`', async () => {
    const res = await list({ sort: 'meta.x' });
    expect(res.body.map((f: { metadata: unknown }) => f.metadata)).toEqual([{ x: 1 }, { x: 2 }, { x: 3 }]);
  });
});

describe('GET /folder: global text search', () => {
  beforeAll(async () => {
    await api.subfolder(alice, alicePublic, 'Running shoes');
    await api.subfolder(alice, alicePublic, 'Jogging', { description: 'we run every day' });
    await api.subfolder(alice, alicePrivate, 'Secret run', { public: false });
    await api.subfolder(alice, alicePublic, 'Walking');
  });

  it.each<[string, () => Caller, string[]]>([
    ['anonymous', () => null, ['Jogging', 'Running shoes']],
    ['another user', () => bob, ['Jogging', 'Running shoes']],
    ['the owner', () => alice, ['Jogging', 'Running shoes', 'Secret run']],
    ['a site admin', () => admin, ['Jogging', 'Running shoes', 'Secret run']],
  ])(
    'finds stemmed words of names and descriptions that %s may read, sorted by lowerName',
    async (_label, caller, expected) => {
      const res = await api.as(caller()).get('/folder').query({ text: 'running' });
      expect(res.status).toBe(200);
      expect(names(res.body)).toEqual(expected);
      expect(res.headers['girder-total-count']).toBe(String(expected.length));
      for (const folder of res.body) expect(folder._textScore).toBeGreaterThan(0);
    },
  );

  it('is case-insensitive and honours the sort rather than the score', async () => {
    const res = await api.as(bob).get('/folder').query({ text: 'RUN', sortdir: -1 });
    expect(names(res.body)).toEqual(['Running shoes', 'Jogging']);
    const byName = Object.fromEntries(
      res.body.map((f: { name: string; _textScore: number }) => [f.name, f._textScore]),
    );
    // A name match weighs more than a description match, yet the listing stays in sort order.
    expect(byName['Running shoes']).toBeGreaterThan(byName.Jogging);
    const ascending = await api.as(bob).get('/folder').query({ text: 'run' });
    expect(names(ascending.body)).toEqual(['Jogging', 'Running shoes']);
  });

  it('pages the hits with the total of all permitted hits', async () => {
    const res = await api.as(alice).get('/folder').query({ text: 'run', limit: 1, offset: 1 });
    expect(names(res.body)).toEqual(['Running shoes']);
    expect(res.headers['girder-total-count']).toBe('3');
  });

  it.each([
    ['a lone parentId', { parentId: alicePrivate }],
    ['a lone parentType', { parentType: 'folder' }],
  ])('searches globally when text comes with %s', async (_label, extra) => {
    const res = await api
      .as(bob)
      .get('/folder')
      .query({ text: 'running', ...extra });
    expect(names(res.body)).toEqual(['Jogging', 'Running shoes']);
  });

  it('finds nothing for words no readable folder holds', async () => {
    const res = await api.as(bob).get('/folder').query({ text: 'secret' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
    expect(res.headers['girder-total-count']).toBe('0');
  });
});

describe('GET /folder: text search syntax', () => {
  beforeAll(async () => {
    await api.subfolder(alice, alicePublic, 'Blue whale notes');
    await api.subfolder(alice, alicePublic, 'Whale songs', { description: 'recorded near the blue coast' });
    await api.subfolder(alice, alicePublic, 'Café crème');
    await api.subfolder(alice, alicePublic, 'Shared whale', {
      public: false,
      access: {
        users: [
          { id: alice._id, level: 2 },
          { id: bob._id, level: 0 },
        ],
        groups: [],
      },
    });
  });
  const search = (text: string, caller: Caller = bob) => api.as(caller).get('/folder').query({ text });

  it.each<[string, string[]]>([
    ['whale', ['Blue whale notes', 'Shared whale', 'Whale songs']],
    ['blue whale', ['Blue whale notes', 'Shared whale', 'Whale songs']],
    ['"blue whale"', ['Blue whale notes']],
    ['whale -blue', ['Shared whale']],
    ['cafe', ['Café crème']],
    ['CRÈME', ['Café crème']],
  ])('%s', async (text, expected) => {
    const res = await search(text);
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(expected);
  });

  it('includes folders the caller reads through an access entry, not only public ones', async () => {
    const res = await search('shared');
    expect(names(res.body)).toEqual(['Shared whale']);
    expect(res.body[0]._accessLevel).toBe(0);
  });

  it.each(['*', 'whale*) OR (', 'NEAR(a b)', '"unterminated', '!!!', 'a:b', '^whale', '-'])(
    'treats search syntax in %j as plain text (never a server error)',
    async (text) => {
      const res = await search(text);
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      expect(res.headers['girder-total-count']).toBe(String(res.body.length));
    },
  );
});

describe('GET /folder: sorting on any field', () => {
  let parent: string;
  beforeAll(async () => {
    parent = await api.subfolder(alice, alicePublic, 'Sort fields');
    await api.subfolder(alice, parent, 'one', { description: 'zz', metadata: { rank: 'b', nested: { k: 2 } } });
    await api.subfolder(alice, parent, 'two', { description: 'aa', metadata: { rank: 'a' } });
    await api.subfolder(alice, parent, 'three', { description: 'mm', metadata: { rank: 'c', nested: { k: 1 } } });
  });
  const sorted = async (sort: string, sortdir = 1) =>
    names((await api.as(alice).get('/folder').query({ parentType: 'folder', parentId: parent, sort, sortdir })).body);

  it.each<[string, number, string[]]>([
    ['description', 1, ['two', 'three', 'one']],
    ['metadata.rank', 1, ['two', 'one', 'three']],
    ['meta.rank', -1, ['three', 'one', 'two']],
    // A folder without the field sorts first, as a missing field does in MongoDB.
    ['metadata.nested.k', 1, ['two', 'three', 'one']],
    ['_id', 1, ['one', 'two', 'three']],
    ['_id', -1, ['three', 'two', 'one']],
    // Fields every folder shares leave the order to the id.
    ['baseParentType', 1, ['one', 'two', 'three']],
  ])('sort=%s sortdir=%d', async (sort, sortdir, expected) => {
    expect(await sorted(sort, sortdir)).toEqual(expected);
  });

  it('refuses a field the folder view does not show, naming sort and the fields it may use', async () => {
    const res = await api
      .as(alice)
      .get('/folder')
      .query({ parentType: 'folder', parentId: parent, sort: 'no.such.field' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message:
        'Invalid value for sort: "no.such.field". Allowed values: _id, name, lowerName, description, parentCollection, ' +
        'parentId, baseParentType, baseParentId, creatorId, created, updated, size, public, publicFlags, metadata, ' +
        'meta, metadata.<key>.',
      type: 'rest',
    });
  });
});

describe('GET /folder: follows the writes', () => {
  const put = (path: string, caller: TestUser, form: Record<string, string>) =>
    api.as(caller).put(path).type('form').send(form);

  it('finds a renamed or re-described folder by its new words only', async () => {
    const id = await api.subfolder(alice, alicePublic, 'Marmalade', { description: 'orange' });
    expect(names((await api.as(bob).get('/folder').query({ text: 'marmalade' })).body)).toEqual(['Marmalade']);
    expect((await put(`/folder/${id}`, alice, { name: 'Porridge', description: 'oats' })).status).toBe(200);
    expect((await api.as(bob).get('/folder').query({ text: 'marmalade orange' })).body).toEqual([]);
    expect(names((await api.as(bob).get('/folder').query({ text: 'porridge' })).body)).toEqual(['Porridge']);
    expect(names((await api.as(bob).get('/folder').query({ text: 'oat' })).body)).toEqual(['Porridge']);
  });

  it('no longer finds a deleted folder nor the folders under it, and finds their copies and restored folders', async () => {
    const ids = async (text: string) =>
      ((await api.as(bob).get('/folder').query({ text })).body as { _id: string }[]).map((f) => f._id).sort();
    const den = await api.subfolder(alice, alicePublic, 'Pangolin den', { description: 'scales' });
    const cub = await api.subfolder(alice, den, 'Pangolin cub');
    const target = await api.subfolder(alice, alicePublic, 'Copies');
    expect(await ids('pangolin')).toEqual([den, cub].sort());

    const copied = await api.as(alice).post(`/folder/${den}/copy`).type('form').send({ parentId: target });
    expect(copied.status).toBe(200);
    const [cubCopy] = (await api.as(alice).get('/folder').query({ parentType: 'folder', parentId: copied.body._id }))
      .body as { _id: string }[];
    const copies = [copied.body._id, cubCopy._id];
    expect(await ids('pangolin')).toEqual([den, cub, ...copies].sort());

    expect((await api.as(alice).delete(`/folder/${den}`)).status).toBe(200);
    expect(await ids('pangolin')).toEqual(copies.sort());
    expect(await ids('scales')).toEqual([copied.body._id]);
    expect((await api.as(alice).delete(`/folder/${copied.body._id}`)).status).toBe(200);
    expect(await ids('pangolin')).toEqual([]);

    expect((await api.as(alice).post(`/folder/${den}/restore`)).status).toBe(200);
    expect(await ids('pangolin')).toEqual([den, cub].sort());
    expect(await ids('scales')).toEqual([den]);
  });

  it('applies a changed ACL to listings and search', async () => {
    const parent = await api.subfolder(alice, alicePublic, 'Acl parent');
    const id = await api.subfolder(alice, parent, 'Quokka');
    const listed = async (caller: Caller) =>
      names((await api.as(caller).get('/folder').query({ parentType: 'folder', parentId: parent })).body);
    const found = async (caller: Caller) => names((await api.as(caller).get('/folder').query({ text: 'quokka' })).body);
    expect([await listed(null), await found(bob)]).toEqual([['Quokka'], ['Quokka']]);

    const privateAcl = { users: [{ id: alice._id, level: 2 }], groups: [] };
    expect(
      (await put(`/folder/${id}/access`, alice, { access: JSON.stringify(privateAcl), public: 'false' })).status,
    ).toBe(200);
    expect([await listed(null), await listed(bob), await found(bob), await listed(alice)]).toEqual([
      [],
      [],
      [],
      ['Quokka'],
    ]);
    expect(
      (await api.as(bob).get('/folder').query({ parentType: 'folder', parentId: parent })).headers[
        'girder-total-count'
      ],
    ).toBe('0');

    const sharedAcl = {
      users: [
        { id: alice._id, level: 2 },
        { id: bob._id, level: 0 },
      ],
      groups: [],
    };
    expect((await put(`/folder/${id}/access`, alice, { access: JSON.stringify(sharedAcl) })).status).toBe(200);
    expect([await listed(null), await listed(bob), await found(bob)]).toEqual([[], ['Quokka'], ['Quokka']]);
  });

  it('sorts on metadata as it is now', async () => {
    const parent = await api.subfolder(alice, alicePublic, 'Metadata sort');
    const first = await api.subfolder(alice, parent, 'first', { metadata: { order: 1 } });
    await api.subfolder(alice, parent, 'second', { metadata: { order: 2 } });
    const setMeta = await api
      .as(alice)
      .put(`/folder/${first}/metadata`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ order: 3 }));
    expect(setMeta.status).toBe(200);
    const res = await api
      .as(alice)
      .get('/folder')
      .query({ parentType: 'folder', parentId: parent, sort: 'metadata.order' });
    expect(names(res.body)).toEqual(['second', 'first']);
  });
});
