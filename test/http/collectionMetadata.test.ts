import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { collectionStream } from '../../src/domain/collection';

/** `PUT` and `DELETE /collection/:id/metadata` (Girder's collection setMetadata and deleteMetadata). */
describe('collection metadata', () => {
  let api: ApiClient;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const create = async (name: string) => {
    const res = await api.as(admin).post('/collection').type('form').send({ name, public: 'true' });
    expect(res.status).toBe(200);
    return res.body as Record<string, any>;
  };
  const putMetadata = (user: TestUser | null, id: string, body: string, query: Record<string, string> = {}) =>
    api.as(user).put(`/collection/${id}/metadata`).query(query).set('Content-Type', 'application/json').send(body);
  const deleteMetadata = (user: TestUser | null, id: string, body: string) =>
    api.as(user).delete(`/collection/${id}/metadata`).set('Content-Type', 'application/json').send(body);
  /** The collection stream's events, straight from the event store. */
  async function stored(id: string): Promise<{ type: string; data: unknown }[]> {
    const out: { type: string; data: unknown }[] = [];
    for await (const e of api.runtime.services.eventStore.readStream(collectionStream(id)))
      out.push({ type: e.type, data: e.data });
    return out;
  }

  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin');
    alice = await api.createUser('alice');
    bob = await api.createUser('bobby');
  });
  afterAll(() => api.close());

  it('merges the body into meta (null deletes unless allowNull), advancing updated, one event per change', async () => {
    const created = await create('Meta one');
    await sleep(5);
    const res = await putMetadata(admin, created._id, JSON.stringify({ a: 1, b: { 'x.y': [1] }, c: 'gone' }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...created, meta: { a: 1, b: { 'x.y': [1] }, c: 'gone' }, updated: expect.any(String) });
    expect(res.body.updated > created.updated).toBe(true);
    const dropped = await putMetadata(admin, created._id, JSON.stringify({ c: null }));
    expect(dropped.body.meta).toEqual({ a: 1, b: { 'x.y': [1] } });
    const kept = await putMetadata(admin, created._id, JSON.stringify({ a: null }), { allowNull: 'true' });
    expect(kept.body.meta).toEqual({ a: null, b: { 'x.y': [1] } });
    expect((await api.as(admin).get(`/collection/${created._id}`)).body.meta).toEqual({ a: null, b: { 'x.y': [1] } });
    const events = (await stored(created._id)).filter((e) => e.type === 'CollectionMetadataChanged');
    expect(events.map((e) => (e.data as { meta: unknown }).meta)).toEqual([
      { a: 1, b: { 'x.y': [1] }, c: 'gone' },
      { a: 1, b: { 'x.y': [1] } },
      { a: null, b: { 'x.y': [1] } },
    ]);
  });

  it('deletes the named keys, ignoring missing ones', async () => {
    const created = await create('Meta two');
    await putMetadata(admin, created._id, JSON.stringify({ a: 1, b: 2, c: 3 }));
    const res = await deleteMetadata(admin, created._id, JSON.stringify(['a', 'c', 'missing']));
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ b: 2 });
  });

  it("validates every top-level key with Girder's messages and saves nothing on failure", async () => {
    const created = await create('Meta three');
    await putMetadata(admin, created._id, JSON.stringify({ keep: true }));
    for (const [metadata, message] of [
      [{ ok: 1, 'a.b': 1 }, 'Invalid key a.b: keys must not contain the "." character.'],
      [{ $set: 1 }, 'Invalid key $set: keys must not start with the "$" character.'],
      [{ '': 1 }, 'Key names must not be empty.'],
    ] as const) {
      const res = await putMetadata(admin, created._id, JSON.stringify(metadata));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message, type: 'validation' });
    }
    const badDelete = await deleteMetadata(admin, created._id, JSON.stringify(['keep', 'x.y']));
    expect(badDelete.status).toBe(400);
    expect(badDelete.body).toEqual({
      message: 'Invalid key x.y: keys must not contain the "." character.',
      type: 'validation',
    });
    const list = await putMetadata(admin, created._id, '[1]');
    expect(list.body).toEqual({ message: 'Parameter metadata must be a JSON object.', type: 'rest' });
    expect((await api.as(admin).get(`/collection/${created._id}`)).body.meta).toEqual({ keep: true });
  });

  it('needs a logged-in user with WRITE on the collection', async () => {
    const created = await create('Meta four');
    const anonymous = await putMetadata(null, created._id, '{"a":1}');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ message: 'You must be logged in.', type: 'access' });
    // Public: bob may read the collection but not write it.
    const denied = await putMetadata(bob, created._id, '{"a":1}');
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({
      message: `Write access denied for collection ${created._id} (user ${bob._id}).`,
      type: 'access',
    });
    const access = { users: [{ id: alice._id, level: 1 }], groups: [] };
    const granted = await api
      .as(admin)
      .put(`/collection/${created._id}/access`)
      .type('form')
      .send({ access: JSON.stringify(access) });
    expect(granted.status).toBe(200);
    const byAlice = await putMetadata(alice, created._id, '{"a":1}');
    expect(byAlice.status).toBe(200);
    expect(byAlice.body).toMatchObject({ meta: { a: 1 }, _accessLevel: 1 });
    const missing = await putMetadata(admin, '000000000000000000000000', '{"a":1}');
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ message: 'Invalid collection id (000000000000000000000000).', type: 'rest' });
  });
});
