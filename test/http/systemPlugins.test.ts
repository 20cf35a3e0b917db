import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { issueToken } from '../../src/commands/userCommands';
import { systemMeta } from '../../src/commands/requestMeta';

describe('GET /system/plugins', () => {
  let api: ApiClient;
  let admin: TestUser;
  let alice: TestUser;
  const scopedToken = async (userId: string, scope: string[]) =>
    (await issueToken(api.runtime.services.commands, { userId, scope, days: 1 }, systemMeta('test'))).token;

  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin');
    alice = await api.createUser('alice');
  });
  afterAll(() => api.close());

  it("answers an administrator Girder 3's shape with no plugin", async () => {
    const res = await api.as(admin).get('/system/plugins');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ all: {}, loaded: [] });
  });

  it("accepts an administrator's token scoped to core.plugins.read, not one scoped otherwise", async () => {
    const plugins = await api.as(await scopedToken(admin._id, ['core.plugins.read'])).get('/system/plugins');
    expect(plugins.status).toBe(200);
    expect(plugins.body).toEqual({ all: {}, loaded: [] });
    const other = await api.as(await scopedToken(admin._id, ['core.data.read'])).get('/system/plugins');
    expect(other.status).toBe(401);
    expect(other.body).toEqual({ message: 'Administrator access required.', type: 'access' });
  });

  it('refuses a user (403) and an anonymous caller (401)', async () => {
    const user = await api.as(alice).get('/system/plugins');
    expect(user.status).toBe(403);
    expect(user.body).toEqual({ message: 'Administrator access required.', type: 'access' });
    const anonymous = await api.anonymous().get('/system/plugins');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ message: 'Administrator access required.', type: 'access' });
  });
});
