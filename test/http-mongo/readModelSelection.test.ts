import request from 'supertest';
import { MongoReadModel } from '../../src/infra/readmodel/mongodb/mongoReadModel';
import { NOTIFICATIONS_COLLECTION } from '../../src/infra/readmodel/mongodb/notificationsStore';
import { startTestServer, type TestServer } from '../support/testServer';

/** The `http-mongo` project really serves from the MongoDB adapter (over the stand-in), not from SQLite. */
describe('http-mongo project', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => (server as TestServer | undefined)?.close()); // undefined if beforeAll failed

  it('runs the service on the MongoDB read model over the driver stand-in, with transactions', async () => {
    const readModel = server.runtime.services.readModel;
    expect(readModel).toBeInstanceOf(MongoReadModel);
    expect((readModel as MongoReadModel).transactional).toBe(true);
    const hasSqliteReadModel = server.runtime.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'rm_folders'").get();
    expect(hasSqliteReadModel).toBeUndefined();
    const admin = await server.createUser('admin');
    const me = await request(server.app).get('/api/v1/user/me').set('Service-Token', admin.token);
    expect(me.body.login).toBe('admin');
    expect((await readModel.users.getByLogin('admin'))?._id).toBe(admin._id);
  });

  it('keeps progress notifications in the MongoDB database, not in the SQLite file', async () => {
    const user = await server.createUser('notified');
    const progress = await server.runtime.services.progress.start({ on: true, userId: user._id, title: 'Mongo-backed', message: 'm' });
    const listed = await request(server.app).get('/api/v1/notification').set('Service-Token', user.token);
    expect(listed.body.map((record: { _id: string }) => record._id)).toEqual([progress.record!._id]);
    const readModel = server.runtime.services.readModel as MongoReadModel;
    const stored = await readModel.database.collection(NOTIFICATIONS_COLLECTION).findOne({ _id: progress.record!._id as never });
    expect(stored).toMatchObject({ userId: user._id, doc: { data: { title: 'Mongo-backed' } } });
    const sqliteTable = server.runtime.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'ops_notifications'").get();
    expect(sqliteTable).toBeUndefined();
  });
});
