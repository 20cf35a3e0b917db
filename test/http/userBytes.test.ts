import { ApiClient, binary, ok, startApi, type TestUser } from '../support/apiClient';

/**
 * Rule "user bytes never run as the service" (docs/security.md, "User bytes"): a download is inline only when asked
 * and its type is on the short list a browser shows without running anything; every download route carries nosniff
 * and a sandboxing Content-Security-Policy.
 */
const SANDBOX = "sandbox; default-src 'none'; style-src 'unsafe-inline'";

describe('downloads of user bytes', () => {
  let api: ApiClient;
  let alice: TestUser;
  let folderId: string;
  let itemId: string;

  /** Uploads `name` declared as `mimeType` into a fresh item of alice's public folder; returns the file id. */
  async function upload(name: string, mimeType: string, content = '<script>alert(1)</script>'): Promise<string> {
    const item = ok(await api.as(alice).post('/item').query({ folderId, name }))._id as string;
    const bytes = Buffer.from(content);
    const res = await api
      .as(alice)
      .post('/file')
      .query({ parentType: 'item', parentId: item, name, size: bytes.length, mimeType })
      .set('Content-Type', 'application/octet-stream')
      .send(bytes);
    return ok(res, `upload ${name}`)._id;
  }
  const download = (fileId: string, query = '') =>
    api.anonymous().get(`/file/${fileId}/download${query}`).buffer(true).parse(binary);

  beforeAll(async () => {
    api = await startApi();
    alice = await api.createUser('alice');
    folderId = await api.defaultFolder(alice, 'Public');
    itemId = ok(await api.as(alice).post('/item').query({ folderId, name: 'two files' }))._id;
    await api.addFile(alice, itemId, 'one', 'one.txt');
    await api.addFile(alice, itemId, 'two', 'two.txt');
  });
  afterAll(() => api.close());

  it.each([
    ['page.html', 'text/html'],
    ['page.htm', 'text/html; charset=utf-8'],
    ['image.svg', 'image/svg+xml'],
    ['data.xml', 'application/xml'],
    ['data.xml', 'text/xml'],
    ['page.xhtml', 'application/xhtml+xml'],
    ['script.js', 'text/javascript'],
    ['script.js', 'application/javascript'],
    ['unknown.bin', 'application/octet-stream'],
    ['made-up', 'application/x-made-up'],
    ['upper.html', 'TEXT/HTML'],
    ['two types', 'image/png, text/html'],
    ['utf7.txt', 'text/plain; charset=utf-7'],
    ['param.png', 'image/png; x=1'],
  ])('serves %s (%s) as an attachment even when inline is asked', async (name, mimeType) => {
    const fileId = await upload(name, mimeType);
    const res = await download(fileId, '?contentDisposition=inline');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(mimeType);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${name}"`);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toBe(SANDBOX);
    expect(res.body.toString()).toBe('<script>alert(1)</script>');
  });

  it.each([
    ['photo.png', 'image/png'],
    ['photo.jpg', 'image/jpeg'],
    ['anim.gif', 'image/gif'],
    ['photo.webp', 'image/webp'],
    ['photo.avif', 'image/avif'],
    ['photo.bmp', 'image/bmp'],
    ['paper.pdf', 'application/pdf'],
    ['notes.txt', 'text/plain'],
    ['notes8.txt', 'text/plain; charset=UTF-8'],
    ['quoted.txt', 'text/plain; charset="iso-8859-1"'],
    ['song.mp3', 'audio/mpeg'],
    ['clip.mp4', 'video/mp4'],
    ['upper.png', 'IMAGE/PNG'],
  ])('honours inline for %s (%s), still sandboxed', async (name, mimeType) => {
    const fileId = await upload(name, mimeType);
    const inline = await download(fileId, '?contentDisposition=inline');
    expect(inline.status).toBe(200);
    expect(inline.headers['content-type']).toBe(mimeType);
    expect(inline.headers['content-disposition']).toBe(`inline; filename="${name}"`);
    expect(inline.headers['x-content-type-options']).toBe('nosniff');
    expect(inline.headers['content-security-policy']).toBe(SANDBOX);
    const plain = await download(fileId);
    expect(plain.headers['content-disposition']).toBe(`attachment; filename="${name}"`);
  });

  it('puts the same headers on a ranged, a HEAD and a named download', async () => {
    const fileId = await upload('ranged.html', 'text/html');
    const ranged = await download(fileId, '?contentDisposition=inline').set('Range', 'bytes=0-7');
    expect(ranged.status).toBe(206);
    expect(ranged.body.toString()).toBe('<script>');
    const head = await api.anonymous().head(`/file/${fileId}/download?contentDisposition=inline`);
    const named = await api.anonymous().get(`/file/${fileId}/download/ranged.html?contentDisposition=inline`);
    for (const res of [ranged, head, named]) {
      expect(res.headers['content-disposition']).toBe('attachment; filename="ranged.html"');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toBe(SANDBOX);
    }
  });

  it('serves an item of one file as that file, an item of several and a folder as zip attachments', async () => {
    const fileId = await upload('single.svg', 'image/svg+xml');
    const single = ok(await api.as(alice).get(`/file/${fileId}`)).itemId as string;
    const one = await api.anonymous().get(`/item/${single}/download`).buffer(true).parse(binary);
    expect(one.status).toBe(200);
    expect(one.headers['content-type']).toBe('image/svg+xml');
    expect(one.headers['content-disposition']).toBe('attachment; filename="single.svg"');
    const zips = [
      [await api.anonymous().get(`/item/${itemId}/download`).buffer(true).parse(binary), 'two files.zip'],
      [await api.anonymous().get(`/folder/${folderId}/download`).buffer(true).parse(binary), 'Public.zip'],
    ] as const;
    for (const [res, name] of zips) {
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/zip');
      expect(res.headers['content-disposition']).toBe(`attachment; filename="${name}"`);
    }
    for (const res of [one, ...zips.map(([r]) => r)]) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toBe(SANDBOX);
    }
  });

  it('refuses a contentDisposition other than inline or attachment', async () => {
    const fileId = await upload('other.txt', 'text/plain');
    const res = await api.anonymous().get(`/file/${fileId}/download?contentDisposition=render`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: 'Invalid value for contentDisposition: "render". Allowed values: inline, attachment.',
      type: 'rest',
    });
  });
});
