import zlib from 'node:zlib';
import { startApi, type ApiClient, type TestUser } from '../support/apiClient';

/**
 * Rule 2 of docs/http-conventions.md (issue 28): nothing the service stores differs from what it accepted. Text that
 * is not UTF-8, numbers JSON.parse would round, dates that do not exist are 400s naming the parameter; a body's
 * Content-Encoding is undone (gzip, deflate) or refused (415), never stored compressed.
 */
let api: ApiClient;
let admin: TestUser;
let home: string;

beforeAll(async () => {
  api = await startApi();
  admin = await api.createUser('admin');
  home = await api.createFolder(admin, 'user', admin._id, 'home');
});
afterAll(async () => api.close());

const notUtf8 = (name: string) => ({ message: `Parameter ${name} is not valid UTF-8.`, type: 'rest' });
const form = (fields: string) => Buffer.from(`parentType=folder&parentId=${home}&${fields}`);
/** Bytes sent as they are (superagent would serialise a Buffer as JSON or form fields). */
const asIs = (body: unknown) => body as string;
const createFolder = (body: Buffer, headers: Record<string, string> = {}) => {
  const req = api.as(admin).post('/folder').type('form').serialize(asIs);
  for (const [name, value] of Object.entries(headers)) req.set(name, value);
  return req.send(body);
};
const childNames = async () =>
  (
    (await api.as(admin).get('/folder').query({ parentType: 'folder', parentId: home, limit: 0 })).body as {
      name: string;
    }[]
  ).map((f) => f.name);

describe('text that is not UTF-8 is refused, naming the parameter', () => {
  it('in a form body: an escape (%FF), a truncated sequence, an encoded surrogate, a raw byte', async () => {
    const bodies = [
      form('name=caf%E9'),
      form('name=%E2%82'),
      form('name=%ED%A0%80'),
      Buffer.concat([form('name=caf'), Buffer.from([0xe9])]),
    ];
    for (const body of bodies) {
      const res = await createFolder(body);
      expect([res.status, res.body]).toEqual([400, notUtf8('name')]);
    }
    expect(await childNames()).toEqual([]);
  });

  it('in the query string', async () => {
    const res = await api.as(admin).post(`/folder?parentType=folder&parentId=${home}&name=%FFx`);
    expect([res.status, res.body]).toEqual([400, notUtf8('name')]);
    const description = await api.as(admin).get(`/folder?parentType=folder&parentId=${home}&text=%C0%AF`);
    expect([description.status, description.body]).toEqual([400, notUtf8('text')]);
  });

  it('in a JSON body', async () => {
    const body = Buffer.concat([Buffer.from('{"k": "'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    const res = await api
      .as(admin)
      .put(`/folder/${home}/metadata`)
      .set('Content-Type', 'application/json')
      .serialize(asIs)
      .send(body);
    expect([res.status, res.body]).toEqual([
      400,
      { message: 'JSON parameter metadata: the request body is not valid UTF-8.', type: 'rest' },
    ]);
  });

  it('keeps every UTF-8 name exactly, U+FFFD sent as such included', async () => {
    const names = ['\uFFFD', 'caf\u00e9 \u{1F600}', 'in\uFEFFside', 'a+b&c=d%'];
    for (const name of names) {
      const res = await createFolder(form(`name=${encodeURIComponent(name)}`));
      expect([res.status, res.body.name]).toEqual([200, name]);
    }
    expect((await childNames()).sort()).toEqual([...names].sort());
  });
});

describe('numbers that JSON cannot carry exactly are refused, naming the field', () => {
  const putMetadata = (text: string) =>
    api.as(admin).put(`/folder/${home}/metadata`).set('Content-Type', 'application/json').send(text);
  const refusal = (literal: string) => ({
    message: `metadata holds the number ${literal}, which cannot be stored exactly: integers must be within ±9007199254740991 and numbers finite.`,
    type: 'validation',
    field: 'metadata',
  });

  it.each(['9007199254740993', '-9007199254740993', '1e400', '-2e308'])('%s in a JSON body', async (literal) => {
    const res = await putMetadata(`{"n": ${literal}}`);
    expect([res.status, res.body]).toEqual([400, refusal(literal)]);
  });

  it('in a JSON query or form parameter, and in a setting value', async () => {
    const res = await createFolder(form(`name=n&metadata=${encodeURIComponent('{"n": [1e400]}')}`));
    expect([res.status, res.body]).toEqual([400, refusal('1e400')]);
    const setting = await api
      .as(admin)
      .put('/system/setting')
      .query({ key: 'core.brand_name', value: '9007199254740993' });
    expect([setting.status, setting.body]).toEqual([
      400,
      {
        message:
          'value holds the number 9007199254740993, which cannot be stored exactly: integers must be within ±9007199254740991 and numbers finite.',
        type: 'validation',
        field: 'value',
      },
    ]);
  });

  it('keeps the largest safe integers, finite doubles and number-like strings as sent', async () => {
    const text = '{"max": 9007199254740991, "min": -9007199254740991, "big": 1e308, "s": "9007199254740993 1e400"}';
    const res = await putMetadata(text);
    expect(res.status).toBe(200);
    const read = await api.as(admin).get(`/folder/${home}`);
    expect(read.body.metadata).toEqual(JSON.parse(text));
    expect(read.text).toContain('"max":9007199254740991');
  });
});

describe('dates that do not exist are refused', () => {
  it.each(['2027-02-30', '2027-04-31', '2027-01-01T24:00:00Z'])('at=%s', async (at) => {
    const res = await api.as(admin).get(`/folder/${home}`).query({ at });
    expect([res.status, res.body]).toEqual([
      400,
      { message: `Invalid value for at: "${at}". Expected an ISO 8601 time or a position.`, type: 'rest' },
    ]);
  });

  it('a leap day that exists is a time (before the folder was created)', async () => {
    const res = await api.as(admin).get(`/folder/${home}`).query({ at: '2024-02-29' });
    expect([res.status, res.body.message]).toEqual([400, 'The folder did not exist at 2024-02-29.']);
  });
});

describe('Content-Encoding', () => {
  it('a gzip or deflate form body is decoded: the name stored is the one sent', async () => {
    const gz = await createFolder(zlib.gzipSync(form('name=zipped')), { 'Content-Encoding': 'gzip' });
    expect([gz.status, gz.body.name]).toEqual([200, 'zipped']);
    const deflated = await createFolder(zlib.deflateSync(form('name=deflated')), { 'Content-Encoding': 'deflate' });
    expect([deflated.status, deflated.body.name]).toEqual([200, 'deflated']);
    const identity = await createFolder(form('name=plain'), { 'Content-Encoding': 'identity' });
    expect([identity.status, identity.body.name]).toEqual([200, 'plain']);
  });

  it('a gzip JSON body is decoded', async () => {
    const res = await api
      .as(admin)
      .put(`/folder/${home}/metadata`)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .serialize(asIs)
      .send(zlib.gzipSync('{"zipped": true}'));
    expect([res.status, res.body.metadata.zipped]).toEqual([200, true]);
  });

  it('another coding is 415; bytes that are not gzip are 400; more than the limit once decoded is 413', async () => {
    const br = await createFolder(zlib.brotliCompressSync(form('name=br')), { 'Content-Encoding': 'br' });
    expect([br.status, br.body]).toEqual([
      415,
      {
        message: 'Unsupported Content-Encoding "br": send the body as is, or encoded with gzip or deflate.',
        type: 'rest',
      },
    ]);
    const garbage = await createFolder(form('name=notgzip'), { 'Content-Encoding': 'gzip' });
    expect([garbage.status, garbage.body]).toEqual([
      400,
      { message: 'The request body is not valid gzip data (Content-Encoding: gzip).', type: 'rest' },
    ]);
    // 17 MiB of zeros compress to some 17 KiB: decoding stops at the 16 MiB limit.
    const bomb = zlib.gzipSync(Buffer.concat([form('name=bomb&description='), Buffer.alloc(17 * 1024 * 1024, 0x30)]));
    const res = await createFolder(bomb, { 'Content-Encoding': 'gzip' });
    expect([res.status, res.body]).toEqual([
      413,
      { message: 'Request entity too large once decoded (gzip): the limit is 16777216 bytes.', type: 'rest' },
    ]);
    const deflateBomb = zlib.deflateSync(Buffer.alloc(17 * 1024 * 1024, 0x30));
    const deflated = await createFolder(deflateBomb, { 'Content-Encoding': 'deflate' });
    expect([deflated.status, deflated.body.message]).toEqual([
      413,
      'Request entity too large once decoded (deflate): the limit is 16777216 bytes.',
    ]);
    const rawDeflate = await createFolder(zlib.deflateRawSync(form('name=raw')), { 'Content-Encoding': 'deflate' });
    expect([rawDeflate.status, rawDeflate.body.name]).toEqual([200, 'raw']);
    expect((await childNames()).filter((n) => ['br', 'notgzip', 'bomb'].includes(n))).toEqual([]);
    expect(await childNames()).toContain('raw');
  });

  it('an upload chunk with a Content-Encoding is 415 and nothing is stored', async () => {
    const itemId = await api.newItem(admin, home, 'uploads');
    const upload = await api
      .as(admin)
      .post('/file')
      .query({ parentType: 'item', parentId: itemId, name: 'f', size: 5 });
    expect(upload.status).toBe(200);
    const res = await api
      .as(admin)
      .post('/file/chunk')
      .query({ uploadId: upload.body._id, offset: 0 })
      .set('Content-Type', 'application/octet-stream')
      .set('Content-Encoding', 'gzip')
      .send(zlib.gzipSync('hello'));
    expect([res.status, res.body]).toEqual([
      415,
      {
        message:
          'Unsupported Content-Encoding "gzip": upload bytes are stored as sent; send them without a Content-Encoding.',
        type: 'rest',
      },
    ]);
    const offset = await api.as(admin).get('/file/offset').query({ uploadId: upload.body._id });
    expect(offset.body).toEqual({ offset: 0 });
  });
});
