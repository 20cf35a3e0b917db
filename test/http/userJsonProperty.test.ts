import fc from 'fast-check';
import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { verifyOutput } from '../support/verifyOutput';
import { MAX_JSON_DEPTH } from '../../src/domain/userJson';

/**
 * Rule 2 of issue 15 as a property: folder commands with arbitrary values (deep and wide JSON, unicode, extreme
 * numbers, long names) are either refused with a domain error (4xx, documented body) or their events project; and a
 * replay of the whole log equals the live read models (verify). The test runs in both jest projects: on the SQLite
 * read model, and in `http-mongo` on the MongoDB adapter over the driver stand-in.
 */
const RUNS = 25;
const SEED = 2;

let api: ApiClient;
let alice: TestUser;
let parents: [string, string];

beforeAll(async () => {
  api = await startApi();
  alice = await api.createUser('alice');
  const folders = (await api.as(alice).get('/folder').query({ parentType: 'user', parentId: alice._id })).body as { _id: string }[];
  parents = [folders[0]._id, folders[1]._id];
});
afterAll(async () => api?.close());

/** A value nested `depth` levels (objects or arrays), around the limit. */
const nested = fc
  .tuple(fc.integer({ min: MAX_JSON_DEPTH - 3, max: MAX_JSON_DEPTH + 2 }), fc.boolean(), fc.jsonValue({ maxDepth: 1 }))
  .map(([depth, arrays, leaf]) => {
    let value: unknown = leaf;
    for (let i = 0; i < depth; i++) value = arrays ? [value] : { ['k' + (i % 3)]: value };
    return value;
  });
const extremeNumber = fc.constantFrom(1e308, -1e308, 5e-324, -0, Number.MAX_SAFE_INTEGER + 2, -(2 ** 63), 0.1 + 0.2);
const wide = fc.dictionary(fc.string({ unit: 'binary', maxLength: 12 }), fc.oneof(fc.string({ unit: 'binary' }), extremeNumber), { maxKeys: 200 });
const large = fc.integer({ min: 400, max: 700 }).map((kib) => 'é'.repeat((kib * 1024) / 2));
const value = fc.oneof(fc.jsonValue({ maxDepth: 6 }), nested, extremeNumber, wide, large, fc.string({ unit: 'binary', maxLength: 200 }));
const metadata = fc.dictionary(fc.string({ unit: 'binary', minLength: 0, maxLength: 20 }), value, { maxKeys: 4 });
const name = fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 300 }), fc.constantFrom('x'.repeat(5000), '\u0000', ' ', '.', '__proto__'));

/** 200, or a refusal in the documented format: never a 5xx. */
function refusedOrDone(res: { status: number; body: { message?: unknown; type?: unknown } }): boolean {
  if (res.status === 200) return true;
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  expect(typeof res.body.message).toBe('string');
  expect(['rest', 'validation']).toContain(res.body.type);
  return false;
}

it('either refuses a command with a domain error or projects its events, and a replay equals the live read models', async () => {
  let projected = 0;
  await fc.assert(
    fc.asyncProperty(name, metadata, metadata, fc.boolean(), async (folderName, first, second, moveFirst) => {
      const created = await api.as(alice)
        .post('/folder')
        .type('form')
        .send({ parentType: 'folder', parentId: parents[0], name: folderName, metadata: JSON.stringify(first), reuseExisting: 'true' });
      if (!refusedOrDone(created)) return;
      const id = created.body._id as string;
      const move = () => api.as(alice).put(`/folder/${id}`).query({ parentType: 'folder', parentId: parents[1] });
      if (moveFirst) refusedOrDone(await move());
      const updated = await api.as(alice).put(`/folder/${id}/metadata`).set('Content-Type', 'application/json').send(JSON.stringify(second));
      if (refusedOrDone(updated)) projected += 1;
      if (!moveFirst) refusedOrDone(await move());
      // What was accepted is visible as accepted: the read models projected it.
      const read = await api.as(alice).get(`/folder/${id}`);
      expect(read.status).toBe(200);
      if (updated.status === 200) expect(read.body.metadata).toEqual(updated.body.metadata);
    }),
    { numRuns: RUNS, seed: SEED },
  );
  expect(projected).toBeGreaterThan(0);
  expect((await api.anonymous().get('/system/version')).status).toBe(200);

  const verified = await verifyOutput(api.server.dataDir);
  expect(verified.text).toContain('The read models match the event log.');
  expect(verified.code).toBe(0);
}, 120_000);
