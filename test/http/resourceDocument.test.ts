import { startApi, type ApiClient, type TestUser } from '../support/apiClient';

/** `GET /resource/:id?type=` (Girder's getResource: site administrators only). */
describe('GET /resource/:id', () => {
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
});
