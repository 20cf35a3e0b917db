import { startApi, type ApiClient, type TestUser } from '../support/apiClient';

/** `GET /resource/:id?type=` and `PUT /resource/:id/timestamp` (Girder's getResource and setTimestamp: admins). */
describe('GET /resource/:id and PUT /resource/:id/timestamp', () => {
  let api: ApiClient;
  let admin: TestUser;
  let alice: TestUser;
  let folderId: string;
  let itemId: string;

  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin');
    alice = await api.createUser('alice');
    folderId = await api.defaultFolder(alice, 'Private');
    itemId = (await api.as(alice).post('/item').query({ folderId, name: 'thing' })).body._id;
  });
  afterAll(() => api.close());

  it('answers the document of the type named, as its own route shows it', async () => {
    for (const [type, id, url] of [
      ['folder', () => folderId, () => `/folder/${folderId}`],
      ['item', () => itemId, () => `/item/${itemId}`],
      ['user', () => alice._id, () => `/user/${alice._id}`],
    ] as const) {
      const res = await api.as(admin).get(`/resource/${id()}`).query({ type });
      expect(res.status).toBe(200);
      expect(res.body).toEqual((await api.as(admin).get(url())).body);
    }
  });

  it('answers null for an id naming nothing, and refuses what Girder refuses', async () => {
    const nothing = await api.as(admin).get('/resource/000000000000000000000000').query({ type: 'item' });
    expect(nothing.status).toBe(200);
    expect(nothing.body).toBeNull();
    const malformed = await api.as(admin).get('/resource/nope').query({ type: 'item' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ message: 'Invalid ObjectId: nope', type: 'validation', field: 'id' });
    const badType = await api.as(admin).get(`/resource/${itemId}`).query({ type: 'setting' });
    expect(badType.status).toBe(400);
    expect(badType.body).toEqual({ message: 'Invalid resources format.', type: 'rest' });
    const noType = await api.as(admin).get(`/resource/${itemId}`);
    expect(noType.status).toBe(400);
    expect(noType.body).toEqual({ message: "Parameter 'type' is required.", type: 'rest' });
    const user = await api.as(alice).get(`/resource/${itemId}`).query({ type: 'item' });
    expect(user.status).toBe(403);
    expect(user.body).toEqual({ message: 'Administrator access required.', type: 'access' });
  });

  it('leaves the literal routes below /resource to themselves', async () => {
    const lookup = await api.as(alice).get('/resource/lookup').query({ path: '/user/alice/Private' });
    expect(lookup.status).toBe(200);
    expect(lookup.body._id).toBe(folderId);
  });

  const setTimes = (id: string, query: Record<string, string>, user: TestUser = admin) =>
    api.as(user).put(`/resource/${id}/timestamp`).query(query);

  it('sets created and updated of folders, items and collections, in Girder rendering, as events', async () => {
    const res = await setTimes(itemId, {
      type: 'item',
      created: '2001-02-03T04:05:06.789Z',
      updated: '2002-03-04 05:06:07+02:00',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      _id: itemId,
      created: '2001-02-03T04:05:06.789000+00:00',
      updated: '2002-03-04T03:06:07+00:00',
    });
    expect((await api.as(alice).get(`/item/${itemId}`)).body).toMatchObject({
      created: '2001-02-03T04:05:06.789000+00:00',
      updated: '2002-03-04T03:06:07+00:00',
    });
    // The listing sorted by created sees the new time.
    const second = (await api.as(alice).post('/item').query({ folderId, name: 'later' })).body._id;
    await setTimes(second, { type: 'item', created: '1999-01-01' });
    const sorted = await api.as(alice).get('/item').query({ folderId, sort: 'created', sortdir: '1' });
    expect(sorted.body.map((i: { _id: string }) => i._id)).toEqual([second, itemId]);
    const history = await api.as(alice).get(`/item/${itemId}/history`);
    expect(
      (history.body as { type: string; data: unknown }[])
        .filter((e) => e.type === 'ItemTimestampsSet')
        .map((e) => e.data),
    ).toEqual([{ itemId, created: '2001-02-03T04:05:06.789000+00:00', updated: '2002-03-04T03:06:07+00:00' }]);

    const folder = await setTimes(folderId, { type: 'folder', updated: '2010-10-10T10:10:10Z' });
    expect(folder.status).toBe(200);
    expect(folder.body.updated).toBe('2010-10-10T10:10:10+00:00');
    expect((await api.as(alice).get(`/folder/${folderId}`)).body.updated).toBe('2010-10-10T10:10:10+00:00');

    const collection = (await api.as(admin).post('/collection').type('form').send({ name: 'Timed' })).body._id;
    const timed = await setTimes(collection, { type: 'collection', created: '2020-01-01T00:00:00Z' });
    expect(timed.status).toBe(200);
    expect((await api.as(admin).get(`/collection/${collection}`)).body.created).toBe('2020-01-01T00:00:00+00:00');

    const group = (await api.as(alice).post('/group').query({ name: 'timed group' })).body._id;
    const groupTimes = await setTimes(group, { type: 'group', updated: '2021-06-07T08:09:10Z' });
    expect(groupTimes.status).toBe(200);
    expect(groupTimes.body).toMatchObject({ _id: group, updated: '2021-06-07T08:09:10+00:00' });
    expect((await api.as(alice).get(`/group/${group}`)).body.updated).toBe('2021-06-07T08:09:10+00:00');
  });

  it("sets a file's created time; a file has no updated time", async () => {
    const bytes = Buffer.from('x');
    const file = (
      await api
        .as(alice)
        .post('/file')
        .query({ parentType: 'item', parentId: itemId, name: 'f.txt', size: 1 })
        .send(bytes)
    ).body;
    const res = await setTimes(file._id, { type: 'file', created: '2015-05-05T05:05:05Z' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ _id: file._id, created: '2015-05-05T05:05:05+00:00' });
    const updated = await setTimes(file._id, { type: 'file', updated: '2015-05-05T05:05:05Z' });
    expect(updated.status).toBe(400);
    expect(updated.body).toEqual({ message: 'Resource has no "updated" field.', type: 'rest' });
  });

  it('refuses what Girder refuses, and is for site administrators', async () => {
    const missing = await setTimes('000000000000000000000000', { type: 'folder', created: '2001-01-01' });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({
      message: 'No such folder: 000000000000000000000000',
      type: 'validation',
      field: 'id',
    });
    const badTime = await setTimes(folderId, { type: 'folder', created: '2001-02-30' });
    expect(badTime.status).toBe(400);
    expect(badTime.body).toEqual({ message: 'Invalid date format for parameter created: 2001-02-30.', type: 'rest' });
    const badType = await setTimes(folderId, { type: 'token', created: '2001-01-01' });
    expect(badType.body).toEqual({ message: 'Invalid resources format.', type: 'rest' });
    const user = await setTimes(alice._id, { type: 'user', created: '2001-01-01' });
    expect(user.status).toBe(400);
    expect(user.body).toEqual({
      message: 'The times of a user cannot be set here (only folder, item, file, collection, group).',
      type: 'rest',
    });
    const notAdmin = await setTimes(folderId, { type: 'folder', created: '2001-01-01' }, alice);
    expect(notAdmin.status).toBe(403);
    expect(notAdmin.body).toEqual({ message: 'Administrator access required.', type: 'access' });
  });
});
