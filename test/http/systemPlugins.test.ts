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

  /** user_quota, built into this service (its version), with Girder's display name and description. */
  const plugins = () => ({
    all: {
      user_quota: {
        name: 'User and Collection Quotas',
        description:
          'Limits total file size stored for individual users and collections and can direct all files to a ' +
          'specific assetstore',
        url: '',
        version: api.runtime.services.version,
      },
    },
    loaded: ['user_quota'],
  });

  it("answers an administrator Girder 3's shape listing the user_quota plugin, loaded", async () => {
    const res = await api.as(admin).get('/system/plugins');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(plugins());
    expect(api.runtime.services.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("accepts an administrator's token scoped to core.plugins.read, not one scoped otherwise", async () => {
    const scoped = await api.as(await scopedToken(admin._id, ['core.plugins.read'])).get('/system/plugins');
    expect(scoped.status).toBe(200);
    expect(scoped.body).toEqual(plugins());
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
