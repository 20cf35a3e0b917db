import request from 'supertest';
import { startTestServer, type TestServer } from '../support/testServer';

describe('service smoke', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('registers the first user as admin with default folders and logs in with HTTP Basic', async () => {
    const admin = await server.createUser('admin');
    expect(admin.admin).toBe(true);
    const me = await request(server.app).get('/api/v1/user/me').set('Service-Token', admin.token);
    expect(me.status).toBe(200);
    expect(me.body.login).toBe('admin');
    const login = await request(server.app).get('/api/v1/user/authentication').auth('admin', 'password1');
    expect(login.status).toBe(200);
    expect(login.body.message).toBe('Login succeeded.');
    expect(login.body.authToken.token).toHaveLength(64);
    expect(login.headers['set-cookie'][0]).toMatch(/^serviceToken=/);
    const second = await server.createUser('second');
    expect(second.admin).toBe(false);
  });

  it('rejects unknown routes of a resource', async () => {
    const res = await request(server.app).delete('/api/v1/user');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'No matching route for "DELETE "', type: 'rest' });
  });
});
