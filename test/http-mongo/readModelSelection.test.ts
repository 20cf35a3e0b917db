import { MongoReadModel } from '../../src/infra/readmodel/mongodb/mongoReadModel';
import { NOTIFICATIONS_COLLECTION } from '../../src/infra/readmodel/mongodb/notificationsStore';
import { startApi, type ApiClient } from '../support/apiClient';

/** The `http-mongo` project really serves from the MongoDB adapter (over the stand-in), not from SQLite. */
describe('http-mongo project', () => {
  let api: ApiClient;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api?.close());

  it('runs the service on the MongoDB read model over the driver stand-in, with transactions', async () => {
    const readModel = api.runtime.services.readModel;
    expect(readModel).toBeInstanceOf(MongoReadModel);
    expect((readModel as MongoReadModel).transactional).toBe(true);
    const hasSqliteReadModel = api.runtime.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'rm_folders'").get();
    expect(hasSqliteReadModel).toBeUndefined();
    const admin = await api.createUser('admin');
    const me = await api.as(admin).get('/user/me');
    expect(me.body.login).toBe('admin');
    expect((await readModel.users.getByLogin('admin'))?._id).toBe(admin._id);
  });

  it('keeps progress notifications in the MongoDB database, not in the SQLite file', async () => {
    const user = await api.createUser('notified');
    const progress = await api.runtime.services.progress.start({ on: true, userId: user._id, title: 'Mongo-backed', message: 'm' });
    const listed = await api.as(user).get('/notification');
    expect(listed.body.map((record: { _id: string }) => record._id)).toEqual([progress.record!._id]);
    const readModel = api.runtime.services.readModel as MongoReadModel;
    const stored = await readModel.database.collection(NOTIFICATIONS_COLLECTION).findOne({ _id: progress.record!._id as never });
    expect(stored).toMatchObject({ userId: user._id, doc: { data: { title: 'Mongo-backed' } } });
    const sqliteTable = api.runtime.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'ops_notifications'").get();
    expect(sqliteTable).toBeUndefined();
  });
});
