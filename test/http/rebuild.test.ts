import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { ok, startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { ConcurrentProjectionError, rebuild } from '../../src/projections/rebuild';
import { READ_MODELS_CHECKPOINT } from '../../src/projections/projector';
import { loadConfig } from '../../src/config';
import { rebuildReadModels } from '../../src/cli/rebuild';
import { compareMongoWithReplay } from '../../src/cli/verify';
import { MongoReadModel } from '../../src/infra/readmodel/mongodb/mongoReadModel';

const ROOT = path.resolve(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

/**
 * The CLI in a process of its own, on the configured adapters (READ_MODEL=sqlite here): without the test-only MongoDB
 * stand-in of the http-mongo project, which lives in this process and which a command process could not reach.
 */
function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      TSX,
      ['src/cli/main.ts', ...args],
      { cwd: ROOT, env: { ...process.env, TEST_READ_MODEL: '', ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** A mixed workload through the HTTP API: users, logins and logouts, API keys, collections, folders. */
async function workload(api: ApiClient): Promise<void> {
  const admin = await api.createUser('admin');
  const users: TestUser[] = [];
  for (const login of ['alice', 'bobby', 'carol']) users.push(await api.createUser(login));
  for (const user of users) {
    const login = ok(await api.anonymous().get('/user/authentication').auth(user.login, 'password1'), 'login');
    ok(await api.as(login.authToken.token).delete('/user/authentication'), 'logout');
  }
  const key = ok(await api.as(users[0]).post('/api_key').type('form').send({ name: 'ci' }), 'api key');
  ok(await api.anonymous().post('/api_key/token').type('form').send({ key: key.key }), 'api key token');
  const collection = ok(
    await api.as(admin).post('/collection').type('form').send({ name: 'Shared', description: 'd', public: 'true' }),
    'collection',
  );
  const doomed = ok(await api.as(admin).post('/collection').type('form').send({ name: 'Doomed' }), 'collection 2');
  ok(await api.as(admin).delete(`/collection/${doomed._id}`), 'collection delete');
  ok(
    await api.as(admin).put(`/collection/${collection._id}`).type('form').send({ description: 'changed' }),
    'collection update',
  );
  const top = ok(
    await api
      .as(admin)
      .post('/folder')
      .type('form')
      .send({ parentType: 'collection', parentId: collection._id, name: 'Top' }),
    'folder',
  );
  const sub = ok(
    await api
      .as(admin)
      .post('/folder')
      .type('form')
      .send({ parentType: 'folder', parentId: top._id, name: 'Sub', description: 'x' }),
    'subfolder',
  );
  ok(await api.as(admin).put(`/folder/${sub._id}`).type('form').send({ name: 'Renamed' }), 'folder rename');
  ok(
    await api
      .as(admin)
      .put(`/folder/${sub._id}/metadata`)
      .set('Content-Type', 'application/json')
      .send('{"k": 1, "deep": {"a": [1]}}'),
    'metadata',
  );
  const me = ok(await api.as(users[1]).get('/user/me'), 'me');
  ok(
    await api.as(users[1]).post('/folder').type('form').send({ parentType: 'user', parentId: me._id, name: 'Mine' }),
    'user folder',
  );
}

/** Metadata of an event appended by the test itself, as a tool would (no request behind it). */
const toolMetadata = () => ({
  userId: null,
  requestId: null,
  correlationId: null,
  causationId: null,
  at: new Date().toISOString(),
});

describe('read-model rebuild', () => {
  let api: ApiClient;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rebuild-test-'));
    api = await startApi({}, { dataDir });
    await workload(api);
  });
  afterAll(async () => {
    await api?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('rebuilds exactly the live read models from the log', async () => {
    const { readModel, eventStore } = api.runtime.services;
    const live = await readModel.dump();
    for (const table of ['rm_users', 'rm_tokens', 'rm_api_keys', 'rm_acl', 'rm_collections', 'rm_folders']) {
      expect([table, live[table]?.length ?? 0]).not.toEqual([table, 0]);
    }
    const head = await eventStore.headPosition();
    const reports: number[] = [];
    const result = await rebuild(eventStore, readModel, {
      onProgress: (p) => reports.push(p.events),
      progressIntervalMs: 0,
    });
    expect(result.events).toBe(Number(head));
    expect(result.position).toBe(head);
    expect(result.eventsPerSecond).toBeGreaterThan(0);
    expect(reports.length).toBeGreaterThan(0);
    expect(reports).toEqual([...reports].sort((a, b) => a - b));
    expect(await readModel.dump()).toEqual(live);
    expect(await readModel.checkpoint(READ_MODELS_CHECKPOINT)).toBe(head);
    // The service still answers from the rebuilt models.
    const login = await api.anonymous().get('/user/authentication').auth('alice', 'password1');
    expect(login.status).toBe(200);
  });

  it('counts the events no projection reads as replayed, and checkpoints past them at the end of the log', async () => {
    const { readModel, eventStore } = api.runtime.services;
    const live = await readModel.dump();
    // A log that ends with events no projection handles (the SQLite store leaves them out of the replay's read).
    const metadata = toolMetadata();
    await eventStore.appendToStream(
      'rebuild-test-tail',
      [
        { type: 'ValueReleased', data: { ownerId: 'nobody' }, metadata },
        { type: 'ValueReleased', data: { ownerId: 'nobody' }, metadata },
      ],
      { expectedState: 'any' },
    );
    const head = await eventStore.headPosition();
    // The service's projector applies these events too (a checkpoint move): let it be done before the read models are
    // emptied and refilled in place, or its move would land in the middle of the replay (tested below).
    await api.runtime.services.projector.waitFor(head);
    const result = await rebuild(eventStore, readModel);
    expect(result.events).toBe(Number(head));
    expect(result.position).toBe(head);
    expect(await readModel.checkpoint(READ_MODELS_CHECKPOINT)).toBe(head);
    expect(await readModel.dump()).toEqual(live);
  });

  it('stops, rather than skip the rest of the log, when another projector moves the checkpoint during the replay', async () => {
    const { readModel, eventStore, projector } = api.runtime.services;
    const live = await readModel.dump();
    const metadata = toolMetadata();
    // The interleaving a loaded machine produced at random: right after the replay's first batch commits, an event is
    // appended and the service's own projector applies it, moving the shared checkpoint to the head of the log.
    const applyBatch = readModel.applyBatch.bind(readModel);
    let armed = true;
    readModel.applyBatch = async (...args: Parameters<typeof applyBatch>) => {
      const applied = await applyBatch(...args);
      if (armed) {
        armed = false;
        const { position } = await eventStore.appendToStream(
          'rebuild-test-interleaved',
          [{ type: 'ValueReleased', data: { ownerId: 'nobody' }, metadata }],
          { expectedState: 'any' },
        );
        await projector.waitFor(position);
      }
      return applied;
    };
    try {
      await expect(rebuild(eventStore, readModel, { chunkSize: 5 })).rejects.toThrow(ConcurrentProjectionError);
    } finally {
      readModel.applyBatch = applyBatch;
    }
    expect(armed).toBe(false);
    // Once nothing else projects, a rebuild gives the live state back.
    const head = await eventStore.headPosition();
    await projector.waitFor(head);
    const result = await rebuild(eventStore, readModel, { chunkSize: 5 });
    expect(result.position).toBe(head);
    expect(await readModel.dump()).toEqual(live);
  });

  it('rebuilds with the configured read model while the service runs: blue/green on MongoDB, refused on SQLite', async () => {
    const { readModel, eventStore, projector } = api.runtime.services;
    const output: string[] = [];
    const out = { isTTY: false, write: (chunk: string) => output.push(chunk) > 0 } as unknown as NodeJS.WriteStream;
    const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir });
    const live = await readModel.dump();
    if (!(readModel instanceof MongoReadModel)) {
      // SQLite read models are emptied and refilled in place: not under a running projector.
      await expect(rebuildReadModels(config, [], out)).rejects.toThrow(
        `A service is running on ${dataDir}: ${projector.holderId} holds the projector lease. Stop it before rebuilding the read models there;`,
      );
      expect(await readModel.dump()).toEqual(live);
      expect(projector.role).toBe('holder');
      return;
    }
    // MongoDB: a new generation fills while the service keeps serving and writing; the alias switches once it caught
    // up.
    const before = await readModel.currentGeneration();
    const admin = (await api.anonymous().get('/user/authentication').auth('admin', 'password1')).body.authToken
      .token as string;
    const writes = Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        api
          .as(admin)
          .post('/collection')
          .type('form')
          .send({ name: `During rebuild ${i}` }),
      ),
    );
    const done = await rebuildReadModels(config, [], out);
    expect((await writes).map((res) => res.status)).toEqual([200, 200, 200, 200, 200]);
    expect(await readModel.currentGeneration()).toBe(before + 1);
    expect(output.join('')).toContain(
      `Rebuilding the read models in MongoDB database ${readModel.databaseName} (event log head at position`,
    );
    expect(output.join('')).toContain(`, generation ${before + 1} current.`);
    expect(done.events).toBeGreaterThan(0);
    // The live projector went on in the new generation: it holds every write, and equals a replay of the log.
    await projector.waitFor(await eventStore.headPosition());
    for (let i = 0; i < 5; i++)
      expect((await readModel.collections.getByName(`During rebuild ${i}`))?.name).toBe(`During rebuild ${i}`);
    expect((await compareMongoWithReplay(eventStore, readModel)).differences).toEqual([]);
  });

  it('rebuilds through the CLI verb, printing progress with events/s', async () => {
    const live = await api.runtime.services.readModel.dump();
    const head = await api.runtime.services.eventStore.headPosition();
    await api.close();
    const { code, stdout, stderr } = await runCli(['rebuild'], { DATA_DIR: dataDir, NODE_ENV: 'test' });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(`Rebuilding the read models in ${dataDir} (event log head at position ${head})`);
    expect(stdout).toMatch(
      new RegExp(
        `Rebuild complete: replayed ${head} events in \\d+\\.\\d s \\(\\d+ events/s\\), read models at position ${head}\\.`,
      ),
    );
    api = await startApi({}, { dataDir });
    expect(await api.runtime.services.readModel.dump()).toEqual(live);
  });

  it('fails with a message when DATA_DIR holds no data', async () => {
    const empty = path.join(dataDir, 'nothing-here');
    const { code, stderr } = await runCli(['rebuild'], { DATA_DIR: empty, NODE_ENV: 'test' });
    expect(code).toBe(1);
    expect(stderr.trim()).toBe(
      `No data to rebuild: ${path.join(empty, 'folder-service.sqlite')} does not exist (set DATA_DIR).`,
    );
  });
});
