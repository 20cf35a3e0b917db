import { binary, startApi, type ApiClient, type TestUser } from '../support/apiClient';

/**
 * Rule 5 of issue 28: an empty or inverted range of a download is 416 with `Content-Range: bytes *\/<size>`, never a
 * 206 with a malformed `Content-Range` (`bytes 0--1/10`); an empty file read from its start is an empty 200.
 */
let api: ApiClient;
let admin: TestUser;
let tenBytes: string;
let empty: string;

beforeAll(async () => {
  api = await startApi();
  admin = await api.createUser('admin');
  const folderId = await api.createFolder(admin, 'user', admin._id, 'ranges');
  const itemId = await api.newItem(admin, folderId, 'item');
  tenBytes = await api.addFile(admin, itemId, '0123456789', 'ten.txt');
  empty = await api.addFile(admin, itemId, Buffer.alloc(0), 'empty.bin');
});
afterAll(async () => api.close());

const download = (fileId: string, query: Record<string, string>, range?: string) => {
  const req = api.as(admin).get(`/file/${fileId}/download`).query(query).buffer(true).parse(binary);
  return range === undefined ? req : req.set('Range', range);
};

describe('offset and endByte', () => {
  it.each([
    ['0', '0'],
    ['3', '3'],
    ['5', '2'],
    ['9', '1'],
  ])('offset=%s&endByte=%s selects no byte: 416 naming both', async (offset, endByte) => {
    const res = await download(tenBytes, { offset, endByte });
    expect(res.status).toBe(416);
    expect(res.headers['content-range']).toBe('bytes */10');
    expect(JSON.parse(String(res.body))).toEqual({
      message: `Requested range not satisfiable. endByte (${endByte}) must be greater than offset (${offset}).`,
      type: 'rest',
    });
  });

  it('an offset at the end is 416 with the plain message', async () => {
    const res = await download(tenBytes, { offset: '10', endByte: '10' });
    expect([res.status, res.headers['content-range'], JSON.parse(String(res.body)).message]).toEqual([
      416,
      'bytes */10',
      'Requested range not satisfiable.',
    ]);
  });

  it('a one-byte range and an endByte past the end are 206 with a well-formed Content-Range', async () => {
    const one = await download(tenBytes, { offset: '3', endByte: '4' });
    expect([one.status, one.headers['content-range'], String(one.body)]).toEqual([206, 'bytes 3-3/10', '3']);
    const past = await download(tenBytes, { offset: '8', endByte: '100' });
    expect([past.status, past.headers['content-range'], String(past.body)]).toEqual([206, 'bytes 8-9/10', '89']);
  });

  it('an empty file from its start is an empty 200 without Content-Range; past its start 416', async () => {
    const whole = await download(empty, { offset: '0', endByte: '0' });
    expect([whole.status, whole.headers['content-range'], whole.headers['content-length']]).toEqual([
      200,
      undefined,
      '0',
    ]);
    const past = await download(empty, { offset: '1' });
    expect([past.status, past.headers['content-range']]).toEqual([416, 'bytes */0']);
  });
});

describe('Range header', () => {
  it('a suffix of zero bytes is 416; an inverted range is ignored (RFC 9110: the whole file, 200)', async () => {
    const zero = await download(tenBytes, {}, 'bytes=-0');
    expect([zero.status, zero.headers['content-range']]).toEqual([416, 'bytes */10']);
    const inverted = await download(tenBytes, {}, 'bytes=5-2');
    expect([inverted.status, inverted.headers['content-range'], String(inverted.body)]).toEqual([
      200,
      undefined,
      '0123456789',
    ]);
  });

  it('the Range header wins over an empty offset/endByte pair', async () => {
    const res = await download(tenBytes, { offset: '0', endByte: '0' }, 'bytes=0-1');
    expect([res.status, res.headers['content-range'], String(res.body)]).toEqual([206, 'bytes 0-1/10', '01']);
  });
});
