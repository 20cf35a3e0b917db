import http from 'node:http';
import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { MAX_JSON_BYTES } from '../../src/domain/userJson';

/** Regression tests for each finding of issue 15: bad values get a clear 4xx naming the parameter, never a 500. */
let api: ApiClient;
let admin: TestUser;
let bob: TestUser;

/** `{"a":{"a":…1…}}` nested `depth` levels. */
const nested = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

beforeAll(async () => {
  api = await startApi();
  admin = await api.createUser('admin');
  bob = await api.createUser('bobby');
});
afterAll(async () => api.close());

async function newFolder(user: TestUser, name: string, parentId = user._id, parentType = 'user'): Promise<string> {
  const res = await api.as(user).post('/folder').type('form').send({ parentType, parentId, name });
  expect(res.status).toBe(200);
  return res.body._id;
}

describe('user JSON is bounded before anything is appended', () => {
  it('refuses metadata nested 1,500 levels (which used to poison the projector on a move)', async () => {
    const res = await api
      .as(admin)
      .post('/folder')
      .type('form')
      .send({ parentType: 'user', parentId: admin._id, name: 'deep', metadata: nested(1500) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: 'metadata is nested more than 100 levels deep.',
      type: 'validation',
      field: 'metadata',
    });
    const listed = await api.as(admin).get('/folder').query({ parentType: 'user', parentId: admin._id, name: 'deep' });
    expect(listed.body).toEqual([]);
  });

  it('refuses metadata nested 5,000 levels on every metadata route, and accepts exactly 100', async () => {
    const folderId = await newFolder(admin, 'meta-target');
    const deep = nested(5000);
    const put = await api
      .as(admin)
      .put(`/folder/${folderId}/metadata`)
      .set('Content-Type', 'application/json')
      .send(deep);
    expect(put.status).toBe(400);
    expect(put.body.field).toBe('metadata');
    const itemId = await api.newItem(admin, folderId, 'meta-item');
    const item = await api.as(admin).put(`/item/${itemId}/metadata`).set('Content-Type', 'application/json').send(deep);
    expect(item.status).toBe(400);
    expect(item.body.message).toBe('metadata is nested more than 100 levels deep.');
    const ok = await api
      .as(admin)
      .put(`/folder/${folderId}/metadata`)
      .set('Content-Type', 'application/json')
      .send(nested(100));
    expect(ok.status).toBe(200);
    const moved = await api.as(admin).put(`/folder/${folderId}`).query({ parentType: 'user', parentId: bob._id });
    expect(moved.status).toBe(200);
  });

  it('refuses metadata over the size limit, also when it grows there by merges', async () => {
    const folderId = await newFolder(admin, 'meta-size');
    const half = 'x'.repeat(MAX_JSON_BYTES / 2);
    const first = await api
      .as(admin)
      .put(`/folder/${folderId}/metadata`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ a: half }));
    expect(first.status).toBe(200);
    const second = await api
      .as(admin)
      .put(`/folder/${folderId}/metadata`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ b: half }));
    expect(second.status).toBe(400);
    expect(second.body.message).toMatch(/^metadata is too large: \d+ bytes of JSON, at most 524288 allowed\.$/);
    const read = await api.as(admin).get(`/folder/${folderId}`);
    expect(read.status).toBe(200);
    expect(Object.keys(read.body.metadata)).toEqual(['a']);
  });
});

describe('numbers, dates and strings are bounded where they enter', () => {
  it.each([
    ['limit', '99999999999999999999'],
    ['offset', '99999999999999999999'],
    ['limit', '-1'],
    ['offset', '-5'],
  ])('refuses %s=%s on a listing with a 400 naming it', async (name, value) => {
    const res = await api
      .as(admin)
      .get('/folder')
      .query({ parentType: 'user', parentId: admin._id, [name]: value });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: `Invalid value for integer parameter ${name}: ${value}. It must be between 0 and ${Number.MAX_SAFE_INTEGER}.`,
      type: 'rest',
    });
  });

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty'])(
    'refuses a sort on %s as on any field the view does not show, and sorts on it as a metadata key',
    async (sort) => {
      await newFolder(admin, `sort-${sort}`);
      for (const url of ['/folder', '/item', '/collection', '/user']) {
        const res = await api
          .as(admin)
          .get(url)
          .query({ parentType: 'user', parentId: admin._id, folderId: admin._id, sort });
        expect(res.status).toBe(400);
        expect(res.body.message).toMatch(new RegExp(`^Invalid value for sort: "${sort}"\\. Allowed values: `));
      }
      const folders = await api
        .as(admin)
        .get('/folder')
        .query({ parentType: 'user', parentId: admin._id, sort: `metadata.${sort}` });
      expect(folders.status).toBe(200);
      expect(folders.body.length).toBeGreaterThan(0);
      const then = await api
        .as(admin)
        .get('/folder')
        .query({ parentType: 'user', parentId: admin._id, sort: `metadata.${sort}`, at: '1' });
      expect(then.status).toBe(200);
    },
  );

  it('refuses ?at= beyond the positions and dates it can represent', async () => {
    const folderId = await newFolder(admin, 'at-target');
    const position = await api.as(admin).get(`/folder/${folderId}`).query({ at: '99999999999999999999999' });
    expect(position.status).toBe(400);
    expect(position.body.message).toBe(
      'Invalid value for at: "99999999999999999999999". Expected an ISO 8601 time or a position.',
    );
    const farPast = await api.as(admin).get(`/folder/${folderId}`).query({ at: '0000-01-01' });
    expect(farPast.status).toBe(400);
    expect(farPast.body.message).toBe('The folder did not exist at 0000-01-01.');
  });

  it('refuses a file size past 2^53 and a MIME type with CR/LF', async () => {
    const folderId = await newFolder(admin, 'files');
    const big = await api
      .as(admin)
      .post('/file')
      .query({ parentType: 'folder', parentId: folderId, name: 'big', size: '9007199254740993' });
    expect(big.status).toBe(400);
    expect(big.body.message).toBe(
      `Invalid value for integer parameter size: 9007199254740993. It must be between ${Number.MIN_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}.`,
    );
    const crlf = await api
      .as(admin)
      .post('/file')
      .query({
        parentType: 'folder',
        parentId: folderId,
        name: 'x.txt',
        size: 1,
        mimeType: 'text/plain\r\nSet-Cookie: a=b',
      })
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('x'));
    expect(crlf.status).toBe(400);
    expect(crlf.body).toEqual({
      message: 'Invalid value for mimeType: control characters are not allowed.',
      type: 'rest',
    });
  });

  it('refuses token durations that are negative or past the date range, and issues tokens that live', async () => {
    for (const [name, value] of [
      ['tokenDuration', '-1'],
      ['tokenDuration', '100000000000'],
      ['tokenDuration', '0'],
    ]) {
      const res = await api
        .as(admin)
        .post('/api_key')
        .query({ name: 'k', [name]: value });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(
        `Invalid value for integer parameter ${name}: ${value}. It must be between 1 and 36525.`,
      );
    }
    const key = await api.as(admin).post('/api_key').query({ name: 'k', tokenDuration: '36525' });
    expect(key.status).toBe(200);
    const negative = await api.anonymous().post('/api_key/token').query({ key: key.body.key, duration: '-3' });
    expect(negative.status).toBe(400);
    expect(negative.body.message).toBe(
      'Invalid value for integer parameter duration: -3. It must be between 1 and 36525.',
    );
    const token = await api.anonymous().post('/api_key/token').query({ key: key.body.key, duration: '2' });
    expect(token.status).toBe(200);
    expect(Date.parse(token.body.authToken.expires)).toBeGreaterThan(Date.now());
  });
});

describe('copy needs WRITE on its destination', () => {
  it('refuses a copy without parentId into a parent where the caller can only read', async () => {
    const parent = await newFolder(admin, 'owner-parent');
    const shared = await newFolder(admin, 'shared', parent, 'folder');
    const access = { users: [{ id: bob._id, level: 0 }], groups: [] };
    expect(
      (
        await api
          .as(admin)
          .put(`/folder/${shared}/access`)
          .query({ access: JSON.stringify(access) })
      ).status,
    ).toBe(200);
    const res = await api.as(bob).post(`/folder/${shared}/copy`);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      message: `Write access denied for folder ${parent} (user ${bob._id}).`,
      type: 'access',
    });
    const children = await api.as(admin).get('/folder').query({ parentType: 'folder', parentId: parent });
    expect(children.body.map((f: { name: string }) => f.name)).toEqual(['shared']);
    const own = await api.as(admin).post(`/folder/${shared}/copy`);
    expect(own.status).toBe(200);
    expect(own.body.parentId).toBe(parent);
  });
});

describe('downloads, streams and bodies answer with the right 4xx', () => {
  it('answers a download offset at or past the end with 416 and Content-Range: bytes */<size>', async () => {
    const folderId = await newFolder(admin, 'dl');
    const itemId = await api.newItem(admin, folderId, 'dl-item');
    const fileId = await api.addFile(admin, itemId, 'hello');
    for (const offset of ['5', '6', '9007199254740991']) {
      const res = await api.as(admin).get(`/file/${fileId}/download`).query({ offset });
      expect(res.status).toBe(416);
      expect(res.headers['content-range']).toBe('bytes */5');
      expect(res.body).toEqual({ message: 'Requested range not satisfiable.', type: 'rest' });
    }
    const partial = await api
      .as(admin)
      .get(`/file/${fileId}/download`)
      .query({ offset: '4' })
      .buffer(true)
      .parse((r, cb) => {
        let text = '';
        r.on('data', (c: Buffer) => (text += c.toString()));
        r.on('end', () => cb(null, text));
      });
    expect(partial.status).toBe(206);
    expect(partial.headers['content-range']).toBe('bytes 4-4/5');
    expect(partial.body).toBe('o');
  });

  it('refuses an event stream since a position past the head of the log', async () => {
    const head = await api.runtime.services.eventStore.headPosition();
    const since = (head + 1000n).toString();
    const res = await api.as(admin).get('/events').query({ since });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: `Invalid value for since: "${since}". The log ends at position ${head}.`,
      type: 'rest',
    });
  });

  it('answers a body over the limit with 413 and the JSON error body, not a reset connection', async () => {
    const { port, close } = await api.listen();
    try {
      const body = Buffer.alloc(16 * 1024 * 1024 + 1, 'a');
      const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'PUT',
            path: `/api/v1/folder/${admin._id}/metadata`,
            headers: {
              'Content-Type': 'application/json',
              'Content-Length': body.length,
              'Service-Token': admin.token,
            },
          },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode!, text }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.text)).toEqual({
        message: 'Request entity too large (the limit is 16777216 bytes).',
        type: 'rest',
      });
    } finally {
      await close();
    }
  });
});

describe('a missing folder is named as the reference names it, route by route', () => {
  it('answers every folder route whose :id names no folder with the reference message', async () => {
    const { folderResource } = await import('../../src/http/resources/folder');
    const missing = '0123456789abcdef01234567';
    const answers: Record<string, unknown> = {};
    for (const route of folderResource.routes.filter((r) => r.path.startsWith(':id'))) {
      const url = `/folder/${route.path.replace(':id', missing)}`;
      const agent = api.as(admin);
      // Well-formed required parameters, so that the id is what decides.
      const query = route.params.some((p) => p.name === 'access' && p.required)
        ? { access: '{"users":[],"groups":[]}' }
        : {};
      const body = route.params.find((p) => p.in === 'body')?.name === 'fields' ? '[]' : '{}';
      const res = await (
        route.method === 'GET'
          ? agent.get(url)
          : route.method === 'POST'
            ? agent.post(url)
            : route.method === 'PUT'
              ? agent.put(url)
              : agent.delete(url)
      )
        .query(query)
        .set('Content-Type', 'application/json')
        .send(route.params.some((p) => p.in === 'body') ? body : '');
      answers[`${route.method} ${route.path}`] = { status: res.status, message: res.body.message };
    }
    const expected = Object.fromEntries(
      Object.keys(answers).map((key) => [key, { status: 400, message: `Invalid folder id (${missing}).` }]),
    );
    expect(answers).toEqual(expected);
    // Named by a parameter, it is `No such folder: <id>` (Girder's load with exc=True), or the model-parameter
    // message where the reference loads `folderId` as a model parameter (items).
    const byParam = {
      'GET /folder?parentId': (await api.as(admin).get('/folder').query({ parentType: 'folder', parentId: missing }))
        .body.message,
      'POST /folder parentId': (
        await api.as(admin).post('/folder').query({ parentType: 'folder', parentId: missing, name: 'x' })
      ).body.message,
      'POST /file parentId': (
        await api.as(admin).post('/file').query({ parentType: 'folder', parentId: missing, name: 'x', size: 0 })
      ).body.message,
      'GET /item?folderId': (await api.as(admin).get('/item').query({ folderId: missing })).body.message,
      'POST /item folderId': (await api.as(admin).post('/item').query({ folderId: missing, name: 'x' })).body.message,
      'GET /resource/:id/path': (await api.as(admin).get(`/resource/${missing}/path`).query({ type: 'folder' })).body
        .message,
    };
    const noSuch = `No such folder: ${missing}`;
    expect(byParam).toEqual({
      'GET /folder?parentId': noSuch,
      'GET /item?folderId': noSuch,
      'POST /file parentId': noSuch,
      'POST /folder parentId': noSuch,
      'POST /item folderId': `Invalid folder id (${missing}).`,
      'GET /resource/:id/path': 'Invalid resource id.',
    });
  });
});
