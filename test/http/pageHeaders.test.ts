import { ApiClient, startApi } from '../support/apiClient';
import { loadConfig } from '../../src/config';

/**
 * The service's pages cannot be framed by other sites and leak no path in Referer; every answer is nosniff; the
 * session cookie is HttpOnly, SameSite=Lax, and Secure when the request came over HTTPS as a trusted proxy says
 * (docs/security.md, "Page headers", "The session cookie", "TLS and the proxy").
 */
describe('page headers and the session cookie', () => {
  let api: ApiClient;
  beforeAll(async () => {
    api = await startApi();
    await api.createUser('alice');
  });
  afterAll(() => api.close());

  it.each(['/', '/api/v1', '/api/v1/', '/api/v1/describe'])('%s carries the page headers', async (path) => {
    const res = await api.site().get(path);
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toBe("frame-ancestors 'self'");
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(res.headers['referrer-policy']).toBe('same-origin');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it.each([
    ['an API answer', '/api/v1/system/version', 200],
    ['an API error', '/api/v1/folder/nope', 400],
    ['an unknown path', '/nowhere', 404],
    ['the boot script', '/static/boot.js', 200],
    ['a Swagger UI asset', '/api/v1/swagger-ui.css', 200],
  ])('%s is nosniff', async (_what, path, status) => {
    const res = await api.site().get(path);
    expect(res.status).toBe(status);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  /** The Set-Cookie of a password login, sent with `headers`. */
  async function loginCookie(client: ApiClient, headers: Record<string, string> = {}): Promise<string> {
    const res = await client.anonymous().get('/user/authentication').auth('alice', 'password1').set(headers);
    expect(res.status).toBe(200);
    const [cookie] = res.headers['set-cookie'] as unknown as string[];
    expect(cookie).toMatch(new RegExp(`^serviceToken=${res.body.authToken.token}; Path=/; Expires=[^;]+ GMT; `));
    return cookie.replace(/^serviceToken=[^;]*; Path=\/; Expires=[^;]*; /, '');
  }

  it('sets the cookie HttpOnly and SameSite=Lax, and not Secure over plain HTTP', async () => {
    expect(await loginCookie(api)).toBe('HttpOnly; SameSite=Lax');
  });

  it('ignores X-Forwarded-Proto when no proxy is trusted (the default)', async () => {
    expect(await loginCookie(api, { 'X-Forwarded-Proto': 'https' })).toBe('HttpOnly; SameSite=Lax');
  });

  it('sets the cookie on registration with the same attributes', async () => {
    const res = await api
      .anonymous()
      .post('/user')
      .type('form')
      .send({ login: 'bobby', email: 'bobby@example.com', firstName: 'Bob', lastName: 'By', password: 'password1' });
    expect(res.status).toBe(200);
    const [cookie] = res.headers['set-cookie'] as unknown as string[];
    expect(cookie).toMatch(/; HttpOnly; SameSite=Lax$/);
  });

  describe('behind a trusted proxy (TRUST_PROXY=loopback)', () => {
    let proxied: ApiClient;
    beforeAll(async () => {
      proxied = await startApi({ TRUST_PROXY: 'loopback' });
      await proxied.createUser('alice');
    });
    afterAll(() => proxied.close());

    it('sets Secure when the proxy says the request came over https', async () => {
      expect(await loginCookie(proxied, { 'X-Forwarded-Proto': 'https' })).toBe('HttpOnly; Secure; SameSite=Lax');
    });

    it('does not set Secure when it says http, or says nothing', async () => {
      expect(await loginCookie(proxied, { 'X-Forwarded-Proto': 'http' })).toBe('HttpOnly; SameSite=Lax');
      expect(await loginCookie(proxied)).toBe('HttpOnly; SameSite=Lax');
    });
  });

  describe('behind a proxy the request did not come from (TRUST_PROXY=10.0.0.0/8)', () => {
    let elsewhere: ApiClient;
    beforeAll(async () => {
      elsewhere = await startApi({ TRUST_PROXY: '10.0.0.0/8' });
      await elsewhere.createUser('alice');
    });
    afterAll(() => elsewhere.close());

    it('ignores X-Forwarded-Proto from an address it does not trust', async () => {
      expect(await loginCookie(elsewhere, { 'X-Forwarded-Proto': 'https' })).toBe('HttpOnly; SameSite=Lax');
    });
  });

  it('reads TRUST_PROXY as express does, and refuses anything else with one line', () => {
    const trust = (value: string) => loadConfig({ TRUST_PROXY: value }).trustProxy;
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(trust('false')).toBe(false);
    expect(trust('true')).toBe(true);
    expect(trust('2')).toBe(2);
    expect(trust('loopback, 10.0.0.0/8,::1,fd00::/8')).toEqual(['loopback', '10.0.0.0/8', '::1', 'fd00::/8']);
    for (const bad of ['yes', '10.0.0.0/33', '10.0.0.1/8/8', 'proxy.example.org', '10.0.0.0/x']) {
      expect(() => trust(bad)).toThrow(
        'TRUST_PROXY must be true, false, a number of proxies, or a comma-separated list of addresses or subnets ' +
          `(loopback, linklocal, uniquelocal, 10.0.0.0/8, ::1, …), got "${bad}".`,
      );
    }
  });
});
