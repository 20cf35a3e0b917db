import { startApi, type ApiClient, type Listener, type TestUser } from '../support/apiClient';
import { probeResource } from '../support/probeResource';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const rest = (message: string) => ({ message, type: 'rest' });

describe('HTTP conventions', () => {
  let api: ApiClient;
  let admin: TestUser;
  let alice: TestUser;
  let listener: Listener;

  beforeAll(async () => {
    api = await startApi({}, { resources: [probeResource] });
    admin = await api.createUser('admin');
    alice = await api.createUser('alice');
    listener = await api.listen();
  });
  afterAll(async () => {
    await api.close();
  });

  describe('parameters', () => {
    it('merges the query string and an urlencoded body, ignoring unknown names', async () => {
      const res = await api
        .anonymous()
        .post('/probe/params?text=hello&unknown=1')
        .type('form')
        .send({ count: '3', color: 'red' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        route: 'POST params',
        params: { text: 'hello', flag: true, count: 3, color: 'red' },
        raw: { text: 'hello', unknown: '1', count: '3', color: 'red' },
      });
    });

    it.each([
      ['true', true],
      ['TRUE', true],
      [' yes ', true],
      ['On', true],
      ['1', true],
      ['\tyes\n', true],
      ['False', false],
      ['0', false],
      ['banana', false],
      ['', false],
      ['off', false],
      ['2', false],
    ])('reads the boolean %j as %s', async (raw, expected) => {
      const res = await api.anonymous().get('/probe/params').query({ flag: raw, maybe: raw });
      expect(res.status).toBe(200);
      expect(res.body.params.flag).toBe(expected);
      expect(res.body.params.maybe).toBe(expected);
    });

    it('applies the default of an absent boolean', async () => {
      const res = await api.anonymous().get('/probe/params');
      expect(res.body.params).toEqual({ flag: true, count: 7 });
      expect('maybe' in res.body.params).toBe(false);
    });

    it('coerces integers and rejects anything else with the reference message', async () => {
      expect((await api.anonymous().get('/probe/params?count=%2012%20')).body.params.count).toBe(12);
      expect((await api.anonymous().get('/probe/params?count=-4')).body.params.count).toBe(-4);
      expect((await api.anonymous().get('/probe/params?count=1_000')).body.params.count).toBe(1000);
      for (const bad of ['abc', '1.5', '', '0x10']) {
        const res = await api.anonymous().get('/probe/params').query({ count: bad });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(rest(`Invalid value for integer parameter count: ${bad}.`));
      }
      const paging = await api.anonymous().get('/probe/paging?limit=abc');
      expect(paging.status).toBe(400);
      expect(paging.body).toEqual(rest('Invalid value for integer parameter limit: abc.'));
    });

    it('checks enums after coercion, listing the allowed values', async () => {
      const sortdir = await api.anonymous().get('/probe/paging?sortdir=2');
      expect(sortdir.status).toBe(400);
      expect(sortdir.body).toEqual(rest('Invalid value for sortdir: "2". Allowed values: 1, -1.'));
      const color = await api.anonymous().get('/probe/params?color=blue');
      expect(color.body).toEqual(rest('Invalid value for color: "blue". Allowed values: red, green.'));
      expect((await api.anonymous().get('/probe/paging')).body).toEqual({
        limit: 50,
        offset: 0,
        sort: 'lowerName',
        sortdir: 1,
      });
      expect((await api.anonymous().get('/probe/paging?sortdir=-1&limit=0&offset=5&sort=name')).body).toEqual({
        limit: 0,
        offset: 5,
        sort: 'name',
        sortdir: -1,
      });
    });

    it('strips strings declared with strip', async () => {
      expect((await api.anonymous().get('/probe/params').query({ padded: '  x y  ' })).body.params.padded).toBe('x y');
      expect((await api.anonymous().get('/probe/params').query({ text: '  x  ' })).body.params.text).toBe('  x  ');
    });

    it('parses JSON parameters with the reference messages', async () => {
      const ok = await api
        .anonymous()
        .get('/probe/json')
        .query({ anything: '"s"', obj: '{"a":[1]}', list: '[1,{"b":2}]' });
      expect(ok.body).toEqual({ anything: 's', obj: { a: [1] }, list: [1, { b: 2 }] });
      expect((await api.anonymous().get('/probe/json').query({ anything: '{bad' })).body).toEqual(
        rest('Parameter anything must be valid JSON.'),
      );
      expect((await api.anonymous().get('/probe/json').query({ obj: '[1]' })).body).toEqual(
        rest('Parameter obj must be a JSON object.'),
      );
      expect((await api.anonymous().get('/probe/json').query({ obj: 'null' })).body).toEqual(
        rest('Parameter obj must be a JSON object.'),
      );
      expect((await api.anonymous().get('/probe/json').query({ list: '{}' })).body).toEqual(
        rest('Parameter list must be a JSON array.'),
      );
    });

    it('reads a JSON body parameter, unless the query or form carries it', async () => {
      const put = (url = '/probe/body') => api.anonymous().put(url);
      expect((await put().set('Content-Type', 'application/json').send('{"a": {"b": [1, 2]}}')).body).toEqual({
        metadata: { a: { b: [1, 2] } },
      });
      const missing = await put();
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual(rest('JSON parameter metadata must be passed in request body.'));
      expect((await put().set('Content-Type', 'application/json').send('{bad')).body).toEqual(
        rest('Invalid JSON passed in request body.'),
      );
      expect((await put().set('Content-Type', 'application/json').send('{"a": NaN}')).body).toEqual(
        rest('Error: "NaN" is not valid JSON.'),
      );
      expect((await put().set('Content-Type', 'application/json').send('[-Infinity]')).body).toEqual(
        rest('Error: "-Infinity" is not valid JSON.'),
      );
      expect((await put().set('Content-Type', 'application/json').send('{"a": "NaN"')).body).toEqual(
        rest('Invalid JSON passed in request body.'),
      );
      expect((await put().set('Content-Type', 'application/json').send('[1]')).body).toEqual(
        rest('Parameter metadata must be a JSON object.'),
      );
      const fromQuery = await put('/probe/body?metadata=%7B%22q%22%3A1%7D')
        .set('Content-Type', 'application/json')
        .send('{"b": 2}');
      expect(fromQuery.body).toEqual({ metadata: { q: 1 } });
      const fromForm = await put().type('form').send({ metadata: '{"f":true}', before: 'x' });
      expect(fromForm.body).toEqual({ before: 'x', metadata: { f: true } });
    });

    it("reports a missing required parameter as Parameter '<name>' is required.; empty counts as given", async () => {
      const res = await api.anonymous().get('/probe/nameFirst');
      expect(res.status).toBe(400);
      expect(res.body).toEqual(rest("Parameter 'name' is required."));
      expect((await api.anonymous().get('/probe/nameFirst?name=')).body).toEqual({ name: '' });
    });

    it('processes parameters in declaration order: the first failing one decides', async () => {
      expect((await api.anonymous().get('/probe/nameFirst?limit=abc')).body).toEqual(
        rest("Parameter 'name' is required."),
      );
      expect((await api.anonymous().get('/probe/limitFirst?limit=abc')).body).toEqual(
        rest('Invalid value for integer parameter limit: abc.'),
      );
      expect((await api.anonymous().get('/probe/nameFirst?name=x&limit=abc')).body).toEqual(
        rest('Invalid value for integer parameter limit: abc.'),
      );
    });

    it('rejects a parameter given twice, in the query or in query and form', async () => {
      const twice = await api.anonymous().get('/probe/params?text=a&text=b');
      expect(twice.status).toBe(400);
      expect(twice.body).toEqual(rest('Parameter "text" must not be specified multiple times.'));
      const mixed = await api.anonymous().post('/probe/params?count=1').type('form').send({ count: '2' });
      expect(mixed.status).toBe(400);
      expect(mixed.body).toEqual(rest('Parameter "count" must not be specified multiple times.'));
      // Even a name no route declares, and before the access check.
      expect((await api.anonymous().get('/probe/private?x=1&x=2')).body).toEqual(
        rest('Parameter "x" must not be specified multiple times.'),
      );
    });

    it('checks access before validating parameters', async () => {
      const anonymous = await api.anonymous().get('/probe/private');
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({ message: 'You must be logged in.', type: 'access' });
      const loggedIn = await api.as(alice).get('/probe/private');
      expect(loggedIn.status).toBe(400);
      expect(loggedIn.body).toEqual(rest("Parameter 'name' is required."));
      const ok = await api.as(alice).get('/probe/private?name=n');
      expect(ok.body).toEqual({ name: 'n', login: 'alice' });
    });
  });

  describe('methods and routing', () => {
    it.each([
      [{ 'X-HTTP-Method-Override': 'PUT' }, 'PUT'],
      [{ 'X-HTTP-Method': 'delete' }, 'DELETE'],
      [{ 'X-Method-Override': 'Patch' }, 'PATCH'],
      [{ 'X-HTTP-Method-Override': 'PUT', 'X-Method-Override': 'patch' }, 'PATCH'],
      [{ 'X-HTTP-Method': 'DELETE', 'X-HTTP-Method-Override': 'PUT' }, 'DELETE'],
      [{ 'X-HTTP-Method-Override': 'GET' }, 'GET'],
    ])('routes a POST with %j as %s, with its form body as params', async (headers, routed) => {
      const res = await api.anonymous().post('/probe/params').set(headers).type('form').send({ text: 'form' });
      expect(res.status).toBe(200);
      expect(res.body.route).toBe(`${routed} params`);
      expect(res.body.params.text).toBe('form');
    });

    it('honours the override headers on POST only', async () => {
      const put = await api.anonymous().put('/probe/params').set('X-HTTP-Method-Override', 'DELETE');
      expect(put.body.route).toBe('PUT params');
      const get = await api.anonymous().get('/probe/params').set('X-HTTP-Method-Override', 'DELETE');
      expect(get.body.route).toBe('GET params');
    });

    it('routes PATCH', async () => {
      const res = await api.anonymous().patch('/probe/params').type('form').send({ count: '9' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ route: 'PATCH params', params: { count: 9 } });
    });

    it('merges a DELETE body when a Content-Length is present', async () => {
      const res = await api.anonymous().delete('/probe/params?text=q').type('form').send({ count: '5' });
      expect(res.body).toMatchObject({
        route: 'DELETE params',
        params: { text: 'q', count: 5 },
        raw: { text: 'q', count: '5' },
      });
    });

    it('ignores a DELETE body sent without a Content-Length', async () => {
      const body = 'count=5';
      const res = await listener.raw(
        `DELETE /api/v1/probe/params?text=q HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked`,
        `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      );
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual({
        route: 'DELETE params',
        params: { text: 'q', flag: true, count: 7 },
        raw: { text: 'q' },
      });
    });

    it('reads a chunked POST body', async () => {
      const body = 'count=6';
      const res = await listener.raw(
        `POST /api/v1/probe/params HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked`,
        `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      );
      expect(JSON.parse(res.body).params.count).toBe(6);
    });

    it.each(['POST', 'PUT'])(
      'answers a %s with neither Content-Length nor Transfer-Encoding (no hang)',
      async (method) => {
        const res = await listener.raw(`${method} /api/v1/probe/params?count=2 HTTP/1.1\r\nHost: localhost`);
        expect(res.status).toBe(200);
        expect(JSON.parse(res.body)).toMatchObject({ route: `${method} params`, params: { count: 2 } });
      },
    );

    it('reports an unmatched method or path below the resource', async () => {
      const del = await api.anonymous().delete('/user');
      expect(del.status).toBe(400);
      expect(del.body).toEqual(rest('No matching route for "DELETE "'));
      expect((await api.anonymous().get('/probe/a/b/c')).body).toEqual(rest('No matching route for "GET a/b/c"'));
      expect((await api.anonymous().post('/probe/params').set('X-HTTP-Method-Override', 'frob')).body).toEqual(
        rest('No matching route for "FROB params"'),
      );
      expect((await api.anonymous().get('/probe/a%20b/c/d')).body).toEqual(rest('No matching route for "GET a b/c/d"'));
    });

    it('matches literal segments before wildcards at the same position', async () => {
      expect((await api.anonymous().get('/probe/x1/details')).body).toEqual({ route: ':id/details', id: 'x1' });
      expect((await api.anonymous().get('/probe/x1/other')).body).toEqual({
        route: ':id/:sub',
        id: 'x1',
        sub: 'other',
      });
      expect((await api.anonymous().get('/probe/fixed/details')).body).toEqual({ route: 'fixed/:sub', sub: 'details' });
      expect((await api.anonymous().get('/probe/params')).body.route).toBe('GET params');
      expect((await api.anonymous().get('/probe/anything')).body).toEqual({ route: ':id', id: 'anything' });
      expect((await api.anonymous().get('/probe/with%2Fslash')).body).toEqual({ route: ':id', id: 'with/slash' });
      expect((await api.anonymous().get('/probe/params/')).body.route).toBe('GET params');
    });

    it('routes a URL that only express takes apart (another case of the API root) exactly as the direct path', async () => {
      const direct = await api.as(admin).get('/probe/x1/details?text=a');
      const viaExpress = await api.site().get('/API/V1/probe/x1/details?text=a').set('Service-Token', admin.token);
      for (const res of [direct, viaExpress]) {
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ route: ':id/details', id: 'x1' });
        expect(res.headers['girder-request-uid']).toMatch(UUID);
        expect(res.headers['cache-control']).toBe('no-cache, no-store, must-revalidate');
      }
      const unknown = await api.site().get('/API/V1/nosuch/thing');
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual(rest("The path '/API/V1/nosuch/thing' was not found."));
    });

    it('answers an unknown resource with a JSON 404', async () => {
      const res = await api.anonymous().get('/nosuch/thing');
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual(rest("The path '/api/v1/nosuch/thing' was not found."));
    });

    it('serves HEAD as GET without a body', async () => {
      const res = await api.anonymous().head('/probe/params');
      expect(res.status).toBe(200);
      expect(res.text).toBeUndefined();
    });
  });

  describe('errors', () => {
    it('maps rest errors to their status with extra', async () => {
      const res = await api.anonymous().get('/probe/teapot');
      expect(res.status).toBe(418);
      expect(res.body).toEqual({ message: 'I am a teapot.', type: 'rest', extra: { spout: 1 } });
    });

    it('maps validation errors to 400 with the field', async () => {
      const res = await api.anonymous().get('/probe/invalid');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: 'Bad value.', type: 'validation', field: 'field1' });
    });

    it('maps access errors to 401 for anonymous and 403 for logged-in callers', async () => {
      const anonymous = await api.anonymous().get('/probe/admin');
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({ message: 'Administrator access required.', type: 'access' });
      const user = await api.as(alice).get('/probe/admin');
      expect(user.status).toBe(403);
      expect(user.body).toEqual({ message: 'Administrator access required.', type: 'access' });
      expect((await api.as(admin).get('/probe/admin')).body).toEqual({ ok: true });
      const noToken = await api.anonymous().get('/probe/scoped');
      expect(noToken.status).toBe(401);
      expect(noToken.body).toEqual({ message: 'You must be logged in or have a valid auth token.', type: 'access' });
    });

    it('reports an unexpected error as internal with its repr, uid and trace outside production', async () => {
      const res = await api.anonymous().get('/probe/boom');
      expect(res.status).toBe(500);
      expect(Object.keys(JSON.parse(res.text))).toEqual(['message', 'trace', 'type', 'uid']);
      expect(res.body.type).toBe('internal');
      expect(res.body.message).toBe("Error: Error('boom')");
      expect(res.body.uid).toBe(res.headers['girder-request-uid']);
      expect(res.body.trace.length).toBeGreaterThan(0);
      expect(res.body.trace.every((line: unknown) => typeof line === 'string' && line.startsWith('at '))).toBe(true);
      expect(res.body.trace[0]).toContain('probeResource');
    });

    it('hides the details of an unexpected error in production', async () => {
      const production = await startApi(
        { NODE_ENV: 'production', LOG_LEVEL: 'silent' },
        { resources: [probeResource] },
      );
      try {
        expect(production.runtime.services.config.production).toBe(true);
        const res = await production.anonymous().get('/probe/boom');
        expect(res.status).toBe(500);
        expect(res.body).toEqual({
          message: 'An unexpected error occurred on the server.',
          type: 'internal',
          uid: res.headers['girder-request-uid'],
        });
        expect((await production.anonymous().get('/probe/teapot')).body).toEqual({
          message: 'I am a teapot.',
          type: 'rest',
          extra: { spout: 1 },
        });
      } finally {
        await production.close();
      }
    });

    it('writes JSON with sorted keys at every level', async () => {
      const res = await api.anonymous().get('/probe/doc');
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.text).toBe('{"alpha":{"a":null,"b":"<a & \\"b\\">"},"empty":{},"none":[],"zeta":[1,"two words"]}');
      expect((await api.anonymous().get('/probe/nothing')).text).toBe('null');
    });
  });

  describe('rendering', () => {
    const html =
      '<div style="font-family:monospace;">{<br />&nbsp;&nbsp;&nbsp;&nbsp;&quot;alpha&quot;:&nbsp;{<br />' +
      '&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&quot;a&quot;:&nbsp;null,<br />' +
      '&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&quot;b&quot;:&nbsp;&quot;&lt;a&nbsp;&amp;&nbsp;\\&quot;b\\&quot;&gt;&quot;<br />' +
      '&nbsp;&nbsp;&nbsp;&nbsp;},<br />' +
      '&nbsp;&nbsp;&nbsp;&nbsp;&quot;empty&quot;:&nbsp;{},<br />' +
      '&nbsp;&nbsp;&nbsp;&nbsp;&quot;none&quot;:&nbsp;[],<br />' +
      '&nbsp;&nbsp;&nbsp;&nbsp;&quot;zeta&quot;:&nbsp;[<br />' +
      '&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;1,<br />' +
      '&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&quot;two&nbsp;words&quot;<br />' +
      '&nbsp;&nbsp;&nbsp;&nbsp;]<br />}</div>';

    it.each([
      ['text/html', true],
      ['text/html, application/json', true],
      ['application/json, text/html', false],
      ['text/html;q=0.5, application/json', false],
      ['application/json;q=0.4, text/html;q=0.9', true],
      ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', true],
      ['*/*', false],
      ['text/plain', false],
    ])('renders for Accept %j as HTML: %s', async (accept, asHtml) => {
      const res = await api.anonymous().get('/probe/doc').set('Accept', accept);
      expect(res.status).toBe(200);
      if (asHtml) {
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(res.text).toBe(html);
      } else {
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(JSON.parse(res.text)).toEqual({
          alpha: { a: null, b: '<a & "b">' },
          empty: {},
          none: [],
          zeta: [1, 'two words'],
        });
      }
    });

    it('renders errors as HTML too', async () => {
      const res = await api.anonymous().get('/probe/teapot').set('Accept', 'text/html');
      expect(res.status).toBe(418);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toBe(
        '<div style="font-family:monospace;">{<br />&nbsp;&nbsp;&nbsp;&nbsp;&quot;extra&quot;:&nbsp;{<br />' +
          '&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&quot;spout&quot;:&nbsp;1<br />&nbsp;&nbsp;&nbsp;&nbsp;},<br />' +
          '&nbsp;&nbsp;&nbsp;&nbsp;&quot;message&quot;:&nbsp;&quot;I&nbsp;am&nbsp;a&nbsp;teapot.&quot;,<br />' +
          '&nbsp;&nbsp;&nbsp;&nbsp;&quot;type&quot;:&nbsp;&quot;rest&quot;<br />}</div>',
      );
    });
  });

  describe('headers', () => {
    it('sets Girder-Request-Uid and no-cache headers on every response', async () => {
      const responses = [
        await api.anonymous().get('/probe/params'),
        await api.anonymous().get('/probe/boom'),
        await api.anonymous().get('/probe/admin'),
        await api.anonymous().get('/nosuch'),
        await api.anonymous().get('/describe'),
        await api.anonymous().get('/user/me'),
      ];
      const uids = new Set<string>();
      for (const res of responses) {
        expect(res.headers['girder-request-uid']).toMatch(UUID);
        uids.add(res.headers['girder-request-uid']);
        expect(res.headers['cache-control']).toBe('no-cache, no-store, must-revalidate');
        expect(res.headers.pragma).toBe('no-cache');
        expect(res.headers.expires).toBe('0');
      }
      expect(uids.size).toBe(responses.length);
    });

    it('sets Girder-Total-Count on listings', async () => {
      const res = await api.as(admin).get('/user?limit=1');
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(1);
      expect(res.headers['girder-total-count']).toBe('2');
      const all = await api.as(admin).get('/user?limit=0&sort=login');
      expect(all.body.map((u: { login: string }) => u.login)).toEqual(['admin', 'alice']);
      expect(all.headers['girder-total-count']).toBe('2');
      expect((await api.anonymous().get('/probe/params')).headers['girder-total-count']).toBeUndefined();
    });
  });
});
