import { ApiClient, startApi, type TestUser } from '../support/apiClient';
import { SETTINGS_STREAM } from '../../src/domain/settings';

/**
 * Cross-origin requests to the API, as Girder 3.2.15 answers them under the `core.cors.*` settings, with this
 * service's rules where Girder is less safe: a wildcard never carries credentials, a refused origin gets no CORS
 * header, `Vary: Origin` (docs/security.md, "Cross-origin requests").
 */
describe('CORS', () => {
  let api: ApiClient;
  let admin: TestUser;
  const APP = 'https://app.example.org';
  const OTHER = 'https://evil.example.com';
  const DEFAULT_HEADERS =
    'Accept-Encoding, Authorization, Content-Disposition, Content-Type, Cookie, Girder-Authorization, Girder-OTP, Girder-Token';
  const CORS_HEADERS = [
    'access-control-allow-origin',
    'access-control-allow-credentials',
    'access-control-expose-headers',
    'access-control-allow-methods',
    'access-control-allow-headers',
  ];

  beforeAll(async () => {
    api = await startApi();
    admin = await api.createUser('admin');
  });
  afterAll(() => api.close());

  const put = async (key: string, value: string) => {
    const res = await api.as(admin).put('/system/setting').type('form').send({ key, value });
    expect(res.status).toBe(200);
  };
  const unset = async (key: string) => {
    expect((await api.as(admin).delete('/system/setting').query({ key })).status).toBe(200);
  };
  /** The CORS headers of an answer (and its Vary), by name; absent ones left out. */
  const corsOf = (headers: Record<string, string>) =>
    Object.fromEntries(
      [...CORS_HEADERS, 'vary'].filter((name) => headers[name] !== undefined).map((name) => [name, headers[name]]),
    );
  const version = (origin?: string) => {
    const req = api.anonymous().get('/system/version');
    return origin === undefined ? req : req.set('Origin', origin);
  };
  const preflight = (path: string, origin: string, method = 'PUT') =>
    api
      .anonymous()
      .options(path)
      .set('Origin', origin)
      .set('Access-Control-Request-Method', method)
      .set('Access-Control-Request-Headers', 'girder-token');

  describe('with the default settings (no origin allowed)', () => {
    it('answers a cross-origin request with no CORS header', async () => {
      const res = await version(APP);
      expect(res.status).toBe(200);
      expect(res.body.apiVersion).toBeDefined();
      expect(corsOf(res.headers)).toEqual({});
    });

    it('answers a preflight 200 with the allowed methods and headers but no allowed origin', async () => {
      const res = await preflight('/folder/123', APP);
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      expect(corsOf(res.headers)).toEqual({
        'access-control-allow-methods': 'GET, POST, PUT, HEAD, DELETE',
        'access-control-allow-headers': DEFAULT_HEADERS,
      });
      expect(res.headers['cache-control']).toBe('no-cache, no-store, must-revalidate');
    });
  });

  describe('with a list of origins and patterns', () => {
    beforeAll(() => put('core.cors.allow_origin', `${APP}, https://*.example.net`));
    afterAll(() => unset('core.cors.allow_origin'));

    it('echoes a listed origin with credentials and the exposed headers', async () => {
      const res = await version(APP);
      expect(res.status).toBe(200);
      expect(corsOf(res.headers)).toEqual({
        'access-control-allow-origin': APP,
        'access-control-allow-credentials': 'true',
        'access-control-expose-headers': 'Girder-Total-Count, Content-Disposition',
        vary: 'Origin',
      });
    });

    it.each(['https://a.example.net', 'https://a.b.example.net'])(
      'echoes %s, matched by a glob pattern as fnmatch does',
      async (origin) => {
        const res = await version(origin);
        expect(res.headers['access-control-allow-origin']).toBe(origin);
        expect(res.headers['access-control-allow-credentials']).toBe('true');
      },
    );

    it.each([
      OTHER,
      'http://app.example.org',
      'https://app.example.org.evil.com',
      'https://example.net',
      'https://a.example.net:8443',
      'null',
    ])('answers %s without any CORS header (the request itself is answered as always)', async (origin) => {
      const res = await version(origin);
      expect(res.status).toBe(200);
      expect(res.body.apiVersion).toBeDefined();
      expect(corsOf(res.headers)).toEqual({ vary: 'Origin' });
    });

    it('answers a preflight from a listed origin with the origin, credentials, methods and headers', async () => {
      const res = await preflight('/folder/123', APP);
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      expect(corsOf(res.headers)).toEqual({
        'access-control-allow-origin': APP,
        'access-control-allow-credentials': 'true',
        'access-control-expose-headers': 'Girder-Total-Count, Content-Disposition',
        'access-control-allow-methods': 'GET, POST, PUT, HEAD, DELETE',
        'access-control-allow-headers': DEFAULT_HEADERS,
        vary: 'Origin',
      });
    });

    it('answers a preflight from another origin 200 without an allowed origin: the browser refuses', async () => {
      const res = await preflight('/item', OTHER);
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(res.headers['access-control-allow-methods']).toBe('GET, POST, PUT, HEAD, DELETE');
    });

    it('answers a preflight for a method not allowed 200 with the allowed ones, which leave it out', async () => {
      const res = await preflight('/folder/123', APP, 'PATCH');
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe(APP);
      expect(res.headers['access-control-allow-methods']).toBe('GET, POST, PUT, HEAD, DELETE');
    });

    it('answers a preflight on any path of the API, a route or not, but not outside it', async () => {
      for (const path of ['/system/setting', '/user/authentication', '/folder/a/b/c', '/describe']) {
        const res = await preflight(path, APP);
        expect([path, res.status, res.headers['access-control-allow-origin']]).toEqual([path, 200, APP]);
      }
      const unknown = await preflight('/nothing', APP);
      expect(unknown.status).toBe(404);
      expect(unknown.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('puts the headers on errors too, as Girder sets them before the route runs', async () => {
      const bad = await api.anonymous().get('/folder/nope').set('Origin', APP);
      expect(bad.status).toBe(400);
      expect(bad.headers['access-control-allow-origin']).toBe(APP);
      const denied = await api.anonymous().get('/system/setting').query({ key: 'core.brand_name' }).set('Origin', APP);
      expect(denied.status).toBe(401);
      expect(denied.headers['access-control-allow-origin']).toBe(APP);
    });

    it('answers the OpenAPI document cross-origin, but not the web client or Swagger UI', async () => {
      const describe = await api.anonymous().get('/describe').set('Origin', APP);
      expect(describe.status).toBe(200);
      expect(describe.headers['access-control-allow-origin']).toBe(APP);
      for (const path of ['/', '/api/v1', '/static/boot.js']) {
        const res = await api.site().get(path).set('Origin', APP);
        expect([path, res.status, corsOf(res.headers)]).toEqual([path, 200, {}]);
      }
    });

    it('leaves same-origin requests and requests without Origin unchanged', async () => {
      const same = await api
        .as(admin)
        .put('/system/setting')
        .set('Host', 'girder.example.org')
        .set('Origin', 'http://girder.example.org')
        .type('form')
        .send({ key: 'core.brand_name', value: 'Same origin' });
      expect(same.status).toBe(200);
      expect(corsOf(same.headers)).toEqual({});
      const none = await version();
      expect(none.status).toBe(200);
      expect(corsOf(none.headers)).toEqual({});
      await unset('core.brand_name');
    });
  });

  it('reads no setting for a same-origin request, and folds the settings again only when they changed', async () => {
    await put('core.cors.allow_origin', APP);
    const store = api.runtime.services.eventStore;
    const revisions = jest.spyOn(store, 'streamRevision');
    const folds = jest.spyOn(store, 'readStream');
    const settingsFolds = () => folds.mock.calls.filter(([stream]) => stream === SETTINGS_STREAM).length;
    try {
      await version();
      await version(`http://girder.example.org`).set('Host', 'girder.example.org');
      expect(revisions).not.toHaveBeenCalled();
      expect(settingsFolds()).toBe(0);

      await version(APP);
      await version(APP);
      await version(OTHER);
      expect(revisions).toHaveBeenCalledTimes(3);
      expect(settingsFolds()).toBe(1);
      await put('core.cors.expose_headers', 'Girder-Total-Count');
      const folded = settingsFolds();
      expect((await version(APP)).headers['access-control-expose-headers']).toBe('Girder-Total-Count');
      expect(settingsFolds()).toBe(folded + 1);
    } finally {
      revisions.mockRestore();
      folds.mockRestore();
      await unset('core.cors.expose_headers');
      await unset('core.cors.allow_origin');
    }
  });

  describe('with the wildcard', () => {
    afterAll(() => unset('core.cors.allow_origin'));

    it('answers any origin `*` without credentials', async () => {
      await put('core.cors.allow_origin', '*');
      const res = await version(OTHER);
      expect(corsOf(res.headers)).toEqual({
        'access-control-allow-origin': '*',
        'access-control-expose-headers': 'Girder-Total-Count, Content-Disposition',
        vary: 'Origin',
      });
      const pre = await preflight('/folder', OTHER);
      expect(pre.headers['access-control-allow-origin']).toBe('*');
      expect(pre.headers['access-control-allow-credentials']).toBeUndefined();
    });

    it('echoes a listed origin with credentials before falling back to `*`', async () => {
      await put('core.cors.allow_origin', `*, ${APP}`);
      const listed = await version(APP);
      expect(listed.headers['access-control-allow-origin']).toBe(APP);
      expect(listed.headers['access-control-allow-credentials']).toBe('true');
      const other = await version(OTHER);
      expect(other.headers['access-control-allow-origin']).toBe('*');
      expect(other.headers['access-control-allow-credentials']).toBeUndefined();
    });
  });

  it('reads `?`, `[seq]`, `[!seq]` and an unclosed `[` as fnmatch does', async () => {
    await put(
      'core.cors.allow_origin',
      'https://app?.example.org https://[!x]y.example.org https://[ab]c.example.org https://[z.example.org',
    );
    try {
      const cases: [string, boolean][] = [
        ['https://app1.example.org', true],
        ['https://app.example.org', false],
        ['https://app12.example.org', false],
        ['https://ay.example.org', true],
        ['https://xy.example.org', false],
        ['https://bc.example.org', true],
        ['https://cc.example.org', false],
        ['https://[z.example.org', true],
      ];
      const seen: [string, boolean][] = [];
      for (const [origin] of cases)
        seen.push([origin, (await version(origin)).headers['access-control-allow-origin'] === origin]);
      expect(seen).toEqual(cases);
    } finally {
      await unset('core.cors.allow_origin');
    }
  });

  it('takes a change of any CORS setting into account on the next request', async () => {
    await put('core.cors.allow_origin', APP);
    expect((await version(APP)).headers['access-control-allow-origin']).toBe(APP);

    await put('core.cors.allow_methods', 'get, patch');
    await put('core.cors.allow_headers', 'Girder-Token X-Extra');
    await put('core.cors.expose_headers', 'Girder-Total-Count');
    const pre = await preflight('/folder', APP, 'PATCH');
    expect(corsOf(pre.headers)).toEqual({
      'access-control-allow-origin': APP,
      'access-control-allow-credentials': 'true',
      'access-control-expose-headers': 'Girder-Total-Count',
      'access-control-allow-methods': 'GET, PATCH',
      'access-control-allow-headers': 'Girder-Token, X-Extra',
      vary: 'Origin',
    });

    await put('core.cors.allow_origin', OTHER);
    expect((await version(APP)).headers['access-control-allow-origin']).toBeUndefined();
    expect((await version(OTHER)).headers['access-control-allow-origin']).toBe(OTHER);

    for (const key of ['allow_origin', 'allow_methods', 'allow_headers', 'expose_headers'])
      await unset(`core.cors.${key}`);
    expect(corsOf((await version(OTHER)).headers)).toEqual({});
    expect((await preflight('/folder', OTHER)).headers['access-control-allow-methods']).toBe(
      'GET, POST, PUT, HEAD, DELETE',
    );
  });

  it('answers nothing cross-origin on the file origin', async () => {
    const withFiles = await startApi({ FILE_ORIGIN: 'https://files.example.org', FILE_URL_SECRET: 'x'.repeat(32) });
    try {
      const owner = await withFiles.createUser('owner');
      const set = await withFiles
        .as(owner)
        .put('/system/setting')
        .type('form')
        .send({ key: 'core.cors.allow_origin', value: '*' });
      expect(set.status).toBe(200);
      const onService = await withFiles.anonymous().get('/file/abc/download').set('Origin', APP);
      expect(onService.headers['access-control-allow-origin']).toBe('*');
      const onFiles = await withFiles
        .anonymous()
        .get('/file/abc/download')
        .set('Host', 'files.example.org')
        .set('Origin', APP);
      expect(onFiles.status).toBe(onService.status);
      expect(corsOf(onFiles.headers)).toEqual({});
      const pre = await withFiles.anonymous().options('/file/abc/download').set('Host', 'files.example.org');
      expect(pre.status).toBe(404);
      expect(pre.body).toEqual({ message: 'Only file downloads are served on the file origin.', type: 'rest' });
    } finally {
      await withFiles.close();
    }
  });
});
