import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { rebuild } from '../../src/projections/rebuild';
import { WrongExpectedVersionError, type EventStore, type RecordedEvent } from '../../src/ports/eventStore';

/**
 * Invariants under concurrency: sibling names stay unique, no metadata update is lost, concurrent moves never form
 * a cycle; and the read models rebuilt from the log equal the live ones.
 *
 * The embedded store answers reads without yielding to other requests, so in-process requests would hardly ever
 * overlap between load and append. Here every stream read answers 2 ms late and every append is sent 2 ms late (as
 * with a networked KurrentDB), so concurrent commands really interleave; the tests check that appends did conflict
 * and were retried.
 */

let api: ApiClient;
let owner: TestUser;
let home: string;
let conflicts = 0;

function injectLatency(store: EventStore): void {
  const readStream = store.readStream.bind(store);
  store.readStream = (streamId, options) =>
    (async function* () {
      const events: RecordedEvent[] = [];
      let failure: unknown;
      try {
        for await (const event of readStream(streamId, options)) events.push(event);
      } catch (error) {
        failure = error;
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
      if (failure) throw failure;
      yield* events;
    })();
  const appendToStreams = store.appendToStreams.bind(store);
  store.appendToStreams = async (appends) => {
    await new Promise((resolve) => setTimeout(resolve, 2));
    try {
      return await appendToStreams(appends);
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) conflicts++;
      throw error;
    }
  };
}

const N = 50;

async function createFolder(parentId: string, name: string) {
  return api.as(owner).post('/folder').type('form').send({ parentId, name });
}

beforeAll(async () => {
  api = await startApi();
  injectLatency(api.runtime.services.eventStore);
  owner = await api.createUser('owner');
  const page = await api.runtime.services.readModel.folders.listChildren({
    parentType: 'user', parentId: owner._id, viewer: { id: owner._id, admin: false, groups: [] }, name: 'Private',
    paging: { limit: 1, offset: 0, sort: 'lowerName', sortdir: 1 },
  });
  home = page.rows[0]._id;
});
afterAll(() => api.close());

beforeEach(() => {
  conflicts = 0;
});

it(`${N} parallel creations of one name under one parent: exactly one succeeds`, async () => {
  const responses = await Promise.all(Array.from({ length: N }, () => createFolder(home, 'Contested')));
  const ok = responses.filter((r) => r.status === 200);
  const refused = responses.filter((r) => r.status === 400);
  expect(ok).toHaveLength(1);
  expect(refused).toHaveLength(N - 1);
  for (const r of refused) expect(r.body).toEqual({ message: 'A folder with that name already exists here.', type: 'validation', field: 'name' });
  const children = await api.runtime.services.readModel.folders.listChildren({
    parentType: 'folder', parentId: home, viewer: { id: owner._id, admin: false, groups: [] }, name: 'Contested',
    paging: { limit: 0, offset: 0, sort: 'lowerName', sortdir: 1 },
  });
  expect(children.rows.map((f) => f._id)).toEqual([ok[0].body._id]);
  expect(conflicts).toBeGreaterThan(0);
});

it(`${N} parallel metadata updates with different keys: all survive`, async () => {
  const id = (await createFolder(home, 'Tagged')).body._id as string;
  const responses = await Promise.all(
    Array.from({ length: N }, (_, i) =>
      api.as(owner).put(`/folder/${id}/metadata`).set('Content-Type', 'application/json').send(JSON.stringify({ [`k${i}`]: i })),
    ),
  );
  expect(responses.map((r) => r.status)).toEqual(Array(N).fill(200));
  const expected = Object.fromEntries(Array.from({ length: N }, (_, i) => [`k${i}`, i]));
  expect((await api.runtime.services.readModel.folders.get(id))!.meta).toEqual(expected);
  expect(conflicts).toBeGreaterThan(0);
  const view = await api.as(owner).get(`/folder/${id}`);
  if (view.status === 200) expect(view.body.metadata).toEqual(expected);
});

it('parallel renames of different folders to one name: exactly one succeeds', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) ids.push((await createFolder(home, `Candidate ${i}`)).body._id);
  const responses = await Promise.all(
    ids.map((id) => api.as(owner).put(`/folder/${id}`).type('form').send({ name: 'Winner' })),
  );
  expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
  for (const r of responses.filter((r) => r.status !== 200)) expect(r.body.message).toBe('A folder with that name already exists here.');
  expect(conflicts).toBeGreaterThan(0);
});

it('concurrent crossing moves never form a cycle', async () => {
  const services = api.runtime.services;
  for (let round = 0; round < 10; round++) {
    const a = (await createFolder(home, `Cross A ${round}`)).body._id as string;
    const b = (await createFolder(home, `Cross B ${round}`)).body._id as string;
    const [ab, ba] = await Promise.all([
      api.as(owner).put(`/folder/${a}`).type('form').send({ parentType: 'folder', parentId: b }),
      api.as(owner).put(`/folder/${b}`).type('form').send({ parentType: 'folder', parentId: a }),
    ]);
    expect([ab.status, ba.status].sort()).toEqual([200, 400]);
    expect((ab.status === 400 ? ab : ba).body).toEqual({ message: 'You may not move a folder underneath itself.', type: 'validation' });
    const folders = services.readModel.folders;
    expect((await folders.isSelfOrDescendant(a, b)) && (await folders.isSelfOrDescendant(b, a))).toBe(false);
  }
  expect(conflicts).toBeGreaterThan(0);
});

it('rebuilding the read models from the log gives exactly the live state', async () => {
  const { eventStore, readModel } = api.runtime.services;
  const live = await readModel.dump();
  await rebuild(eventStore, readModel);
  expect(await readModel.dump()).toEqual(live);
});
