import { startApi, type ApiClient } from '../support/apiClient';

describe('service smoke', () => {
  let api: ApiClient;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('registers the first user as admin with default folders and logs in with HTTP Basic', async () => {
    const admin = await api.createUser('admin');
    expect(admin.admin).toBe(true);
    const me = await api.as(admin).get('/user/me');
    expect(me.status).toBe(200);
    expect(me.body.login).toBe('admin');
    const login = await api.anonymous().get('/user/authentication').auth('admin', 'password1');
    expect(login.status).toBe(200);
    expect(login.body.message).toBe('Login succeeded.');
    expect(login.body.authToken.token).toHaveLength(64);
    expect(login.headers['set-cookie'][0]).toMatch(/^serviceToken=/);
    const second = await api.createUser('second');
    expect(second.admin).toBe(false);
  });

  it('rejects unknown routes of a resource', async () => {
    const res = await api.anonymous().delete('/user');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'No matching route for "DELETE "', type: 'rest' });
  });
});
