import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { combineProjections, type Projection } from '../../src/projections/projection';
import { readModelProjection } from '../../src/projections';
import { verifyOutput } from '../support/verifyOutput';

/**
 * Rule 3 of issue 15: when a projection throws anyway, the service neither dies nor lies. A projection that throws
 * on one event (a folder named `poison`) stands for a bug or a full disk; the same data is then served by a
 * process with the bug, and by one with the bug fixed.
 */
const POISON = 'poison';
const poisoned: Projection = combineProjections(readModelProjection, {
  handlers: {
    FolderCreated: (event) => {
      if ((event.data as { name: string }).name === POISON) throw new Error('disk full (injected)');
    },
  },
});
// A short lease so that the retries (backoff from a third of it) happen within the test.
const env = { PROJECTOR_LEASE_TTL_MS: '300' };

let api: ApiClient;
let dataDir: string;
let alice: TestUser;
let parentId: string;
let before: string;

const as = (path: string) => api.as(alice).get(path);
const create = (name: string) =>
  api.as(alice).post('/folder').type('form').send({ parentType: 'folder', parentId, name });

beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-service-poisoned-'));
});
afterAll(async () => {
  await api?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function toArray<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

it('keeps serving reads, answers writes with 503 naming the position, reports the stop, and resumes once fixed', async () => {
  api = await startApi(env, { dataDir, projection: poisoned });
  alice = await api.createUser('alice');
  parentId = (await as('/folder').query({ parentType: 'user', parentId: alice._id, name: 'Private' })).body[0]._id;
  before = (await create('before')).body._id;
  const head = await api.runtime.services.eventStore.headPosition();

  // The poisoned write is appended but cannot be projected: 503 naming its position, where projection stopped.
  const poisonedWrite = await create(POISON);
  expect(poisonedWrite.status).toBe(503);
  const match = /^The change was recorded at event position (\d+) but cannot be shown yet: projection stopped at position (\d+): disk full \(injected\)\.$/.exec(
    poisonedWrite.body.message,
  );
  expect(match).not.toBeNull();
  expect(poisonedWrite.body.type).toBe('rest');
  const stoppedAt = BigInt(match![2]);
  expect(match![1]).toBe(match![2]);
  expect(stoppedAt).toBeGreaterThan(head);
  const [failing] = await toArray(api.runtime.services.eventStore.readAll({ fromPosition: stoppedAt - 1n, maxCount: 1 }));
  expect({ type: failing.type, name: (failing.data as { name: string }).name }).toEqual({ type: 'FolderCreated', name: POISON });
  // Reads go on; readiness says where and why it stopped.
  expect((await as(`/folder/${before}`)).status).toBe(200);
  const ready = await api.site().get('/readyz');
  expect(ready.status).toBe(503);
  expect(ready.body.failed).toEqual(['projector']);
  expect(ready.body.checks.projector).toMatchObject({
    status: 'failed',
    stoppedAt: stoppedAt.toString(),
    error: `projection stopped at position ${stoppedAt}: disk full (injected)`,
  });
  // A later write that must read the read models first (sibling names) makes no change, and says so.
  const later = await create('after');
  expect(later.status).toBe(503);
  expect(later.body).toEqual({
    message: `The change was not made: the read models cannot be brought up to date (projection stopped at position ${stoppedAt}: disk full (injected)).`,
    type: 'rest',
  });
  // One that appends without reading them first is recorded after the stop, and says so.
  const renamed = await api.as(alice).put(`/folder/${before}`).type('form').send({ description: 'changed' });
  expect(renamed.status).toBe(503);
  expect(renamed.body.message).toMatch(new RegExp(`^The change was recorded at event position \\d+ but cannot be shown yet: projection stopped at position ${stoppedAt}: `));
  const newHead = await api.runtime.services.eventStore.headPosition();
  expect(newHead).toBeGreaterThan(stoppedAt);

  // verify compares the checkpoint with the head and names the event the projections cannot pass.
  const verified = await verifyOutput(dataDir, poisoned);
  expect(verified.code).toBe(1);
  expect(verified.text).toContain(`projection stopped at position ${stoppedAt} of ${newHead}: Error: disk full (injected)\n`);
  expect(verified.text).not.toContain('The read models match the event log.');
  await api.close();

  // A new process with the same bug on the same data starts, serves reads and reports the same.
  api = await startApi(env, { dataDir, projection: poisoned });
  expect((await as(`/folder/${before}`)).status).toBe(200);
  const again = await api.site().get('/readyz');
  expect(again.status).toBe(503);
  expect(again.body.checks.projector.error).toBe(`projection stopped at position ${stoppedAt}: disk full (injected)`);
  await api.close();

  // The fixed release resumes from where it stopped: nothing acknowledged or appended is lost.
  api = await startApi(env, { dataDir });
  const names = (await as('/folder').query({ parentType: 'folder', parentId })).body.map((f: { name: string }) => f.name);
  expect(names).toEqual(['before', POISON]);
  expect((await as(`/folder/${before}`)).body.description).toBe('changed');
  expect((await api.site().get('/readyz')).status).toBe(200);
  expect((await create('fixed')).status).toBe(200);
  const fixed = await verifyOutput(dataDir);
  expect(fixed.text).toContain('The read models match the event log.');
  expect(fixed.code).toBe(0);
});
