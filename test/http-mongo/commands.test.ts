import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Db } from 'mongodb';
import { loadConfig } from '../../src/config';
import { rebuildReadModels } from '../../src/cli/rebuild';
import { verifyReadModels } from '../../src/cli/verify';
import { MongoReadModel } from '../../src/infra/readmodel/mongodb/mongoReadModel';
import { physicalName } from '../../src/infra/readmodel/mongodb/mongoCollections';
import { startApi, type ApiClient } from '../support/apiClient';

/**
 * `rebuild` and `verify` on the MongoDB read model, run in this process next to a running service (they share its
 * MongoDB stand-in, as the commands share a real server with the service processes).
 */

function capture() {
  const chunks: string[] = [];
  const out = { isTTY: false, write: (chunk: string) => chunks.push(chunk) > 0 } as unknown as NodeJS.WriteStream;
  return { out, text: () => chunks.join('') };
}

/** The live database under the service's read model (tests only: to damage it behind the service's back). */
const dbOf = (readModel: MongoReadModel) => (readModel as unknown as { db: Db }).db;

describe('rebuild and verify on MongoDB', () => {
  let api: ApiClient;
  let dataDir: string;
  const config = () => loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir });

  beforeEach(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mongo-commands-'));
    api = await startApi({}, { dataDir });
    const admin = await api.createUser('admin');
    await api.createUser('alice');
    const collection = await api.as(admin).post('/collection').type('form').send({ name: 'Shared' });
    for (const name of ['One', 'Two']) {
      const folder = await api
        .as(admin)
        .post('/folder')
        .type('form')
        .send({ parentType: 'collection', parentId: collection.body._id, name });
      expect(folder.status).toBe(200);
    }
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await api?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('verify replays into a scratch database, finds the live read models equal, then names a damaged document', async () => {
    const readModel = api.runtime.services.readModel as MongoReadModel;
    const scratches: MongoReadModel[] = [];
    const openScratch = MongoReadModel.prototype.openScratch;
    jest.spyOn(MongoReadModel.prototype, 'openScratch').mockImplementation(async function (
      this: MongoReadModel,
      name: string,
    ) {
      const scratch = await openScratch.call(this, name);
      scratches.push(scratch);
      return scratch;
    });

    const clean = capture();
    expect(await verifyReadModels(config(), [], clean.out)).toBe(0);
    expect(clean.text()).toMatch(
      /^Verified the read models in MongoDB database folder_service against a replay of \d+ events \(up to position \d+\)\.\n/,
    );
    expect(clean.text()).toContain('The read models match the event log.');
    expect(scratches).toHaveLength(1);
    expect(scratches[0].databaseName).toMatch(/^folder_service_verify_[0-9a-f]{8}$/);
    // The scratch database is gone (with the alias document a read model needs).
    await expect(scratches[0].dump()).rejects.toThrow('the rm_meta alias document is missing');

    const folders = dbOf(readModel).collection(physicalName('folders', await readModel.currentGeneration()));
    const victim = (await folders.findOne({ name: 'One' }))!;
    await folders.updateOne({ _id: victim._id }, { $set: { name: 'corrupted' } });
    const damaged = capture();
    expect(await verifyReadModels(config(), [], damaged.out)).toBe(1);
    expect(damaged.text()).toContain(
      `rm_folders row _id=${String(victim._id)} differs: name: live "corrupted", replayed "One"`,
    );
    expect(damaged.text()).toContain('1 difference between the live read models and the replay.');
  });

  it('rebuild switches generations under the running service, and verify agrees with the result', async () => {
    const readModel = api.runtime.services.readModel as MongoReadModel;
    const live = await readModel.dump();
    const generation = await readModel.currentGeneration();
    const rebuilt = capture();
    await rebuildReadModels(config(), [], rebuilt.out);
    expect(await readModel.currentGeneration()).toBe(generation + 1);
    expect(await readModel.dump()).toEqual(live);
    // The service's projector goes on in the new generation.
    const admin = (await api.anonymous().get('/user/authentication').auth('admin', 'password1')).body.authToken
      .token as string;
    const created = await api.as(admin).post('/collection').type('form').send({ name: 'After' });
    expect(created.status).toBe(200);
    expect((await api.as(admin).get(`/collection/${created.body._id}`)).body.name).toBe('After');
    const verified = capture();
    expect(await verifyReadModels(config(), [], verified.out)).toBe(0);
  });
});

describe('rebuild on a MongoDB without transactions', () => {
  it('refuses to run next to a live projector (the switch could not fence it off)', async () => {
    process.env.TEST_READ_MODEL = 'mongodb-standin-standalone';
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mongo-standalone-'));
    const api = await startApi({}, { dataDir });
    try {
      const readModel = api.runtime.services.readModel as MongoReadModel;
      expect(readModel.transactional).toBe(false);
      await api.createUser('admin');
      const { out } = capture();
      await expect(rebuildReadModels(loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir }), [], out)).rejects.toThrow(
        `A service is running on MongoDB database folder_service: ${api.runtime.services.projector.holderId} holds the projector lease.`,
      );
      expect(readModel.rebuildGeneration).toBeNull();
      expect(await readModel.currentGeneration()).toBe(1);
    } finally {
      await api.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      process.env.TEST_READ_MODEL = 'mongodb-standin';
    }
  });
});
