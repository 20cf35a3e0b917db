import { ApiClient, binary, ok, startApi, type TestUser } from '../support/apiClient';
import { loadConfig } from '../../src/config';
import { fileOriginOf, signedDownloadUrl } from '../../src/http/fileOrigin';

/**
 * FILE_ORIGIN (docs/security.md, "The file origin"): downloads requested on the service's host are checked, then sent
 * to the file origin with a signed link (never the caller's token); the file origin answers file downloads only, and
 * checks a signed link again at each use.
 */
const FILES = 'files.example.test';
const SECRET = 'a-test-secret-of-at-least-thirty-two-characters';
const SANDBOX = "sandbox; default-src 'none'; style-src 'unsafe-inline'";

describe('a separate origin for file bytes', () => {
  let api: ApiClient;
  let alice: TestUser;
  let bob: TestUser;
  let publicFolder: string;
  let privateFolder: string;
  let publicFile: string;
  let privateFile: string;
  let pngFile: string;
  let singleItem: string;

  async function upload(user: TestUser, folderId: string, name: string, mimeType: string, content: string) {
    const item = ok(await api.as(user).post('/item').query({ folderId, name }))._id as string;
    const bytes = Buffer.from(content);
    const res = await api
      .as(user)
      .post('/file')
      .query({ parentType: 'item', parentId: item, name, size: bytes.length, mimeType })
      .set('Content-Type', 'application/octet-stream')
      .send(bytes);
    return { item, file: ok(res)._id as string };
  }
  /** A request to the file origin for the path and query of `location` (a Location header). */
  const onFiles = (location: string) => {
    const url = new URL(location);
    expect(url.origin).toBe(`https://${FILES}`);
    return api
      .site()
      .get(url.pathname + url.search)
      .set('Host', FILES)
      .buffer(true)
      .parse(binary);
  };
  const errorOf = (res: { body: Buffer }) => JSON.parse(res.body.toString()) as unknown;

  beforeAll(async () => {
    api = await startApi({ FILE_ORIGIN: `https://${FILES}`, FILE_URL_SECRET: SECRET });
    alice = await api.createUser('alice');
    bob = await api.createUser('bobby');
    publicFolder = await api.defaultFolder(alice, 'Public');
    privateFolder = await api.defaultFolder(alice, 'Private');
    publicFile = (await upload(alice, publicFolder, 'page.html', 'text/html', '<script>1</script>')).file;
    ({ item: singleItem, file: privateFile } = await upload(alice, privateFolder, 'secret.txt', 'text/plain', 'abc'));
    pngFile = (await upload(alice, publicFolder, 'dot.png', 'image/png', 'not really a png')).file;
  });
  afterAll(() => api.close());

  it('answers a download on the service host with 307 to a signed link on the file origin, without the token', async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await api.as(alice).get(`/file/${privateFile}/download?token=${alice.token}`);
    expect(res.status).toBe(307);
    const location = new URL(res.headers.location);
    expect(location.origin + location.pathname).toBe(`https://${FILES}/api/v1/file/${privateFile}/download`);
    expect([...location.searchParams.keys()]).toEqual(['user', 'expires', 'signature']);
    expect(location.searchParams.get('user')).toBe(alice._id);
    const expires = Number(location.searchParams.get('expires'));
    expect(expires - before).toBeGreaterThanOrEqual(3600);
    expect(expires - before).toBeLessThanOrEqual(3601);
    expect(location.searchParams.get('signature')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(res.headers.location).not.toContain(alice.token);

    const bytes = await onFiles(res.headers.location);
    expect(bytes.status).toBe(200);
    expect(bytes.body.toString()).toBe('abc');
    expect(bytes.headers['content-disposition']).toBe('attachment; filename="secret.txt"');
    expect(bytes.headers['x-content-type-options']).toBe('nosniff');
    expect(bytes.headers['content-security-policy']).toBe(SANDBOX);
  });

  it('checks access before redirecting', async () => {
    const anonymous = await api.anonymous().get(`/file/${privateFile}/download`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({
      message: `Read access denied for file ${privateFile} (user None).`,
      type: 'access',
    });
    const other = await api.as(bob).get(`/file/${privateFile}/download`);
    expect(other.status).toBe(403);
    expect(other.headers.location).toBeUndefined();
  });

  it('carries the disposition and the byte range along; the rule on inline holds on the file origin', async () => {
    const png = await api.anonymous().get(`/file/${pngFile}/download?contentDisposition=inline&offset=4&endByte=10`);
    expect(png.status).toBe(307);
    const location = new URL(png.headers.location);
    expect([...location.searchParams.keys()]).toEqual([
      'expires',
      'signature',
      'contentDisposition',
      'offset',
      'endByte',
    ]);
    const bytes = await onFiles(png.headers.location);
    expect(bytes.status).toBe(206);
    expect(bytes.body.toString()).toBe('really');
    expect(bytes.headers['content-disposition']).toBe('inline; filename="dot.png"');
    const html = await api.anonymous().get(`/file/${publicFile}/download?contentDisposition=inline`);
    const served = await onFiles(html.headers.location).set('Range', 'bytes=0-7');
    expect(served.status).toBe(206);
    expect(served.body.toString()).toBe('<script>');
    expect(served.headers['content-disposition']).toBe('attachment; filename="page.html"');
  });

  it('sends an item of one file to the file download on the file origin; zips stay on the service host', async () => {
    const item = await api.as(alice).get(`/item/${singleItem}/download`);
    expect(item.status).toBe(307);
    expect(new URL(item.headers.location).pathname).toBe(`/api/v1/file/${privateFile}/download`);
    expect((await onFiles(item.headers.location)).body.toString()).toBe('abc');
    const zip = await api.as(alice).get(`/folder/${privateFolder}/download`).buffer(true).parse(binary);
    expect(zip.status).toBe(200);
    expect(zip.headers['content-type']).toBe('application/zip');
  });

  it('refuses a link whose signature, file, user or expiry was changed, with one message', async () => {
    const res = await api.as(alice).get(`/file/${privateFile}/download`);
    const link = new URL(res.headers.location);
    const altered = (change: (url: URL) => void) => {
      const url = new URL(link);
      change(url);
      return url.toString();
    };
    const tampered = [
      // The last character changed (to another one: a signature may well end in `A` already).
      altered((u) => {
        const signature = link.searchParams.get('signature')!;
        u.searchParams.set('signature', `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`);
      }),
      altered((u) => u.searchParams.set('signature', 'short')),
      altered((u) => u.searchParams.set('expires', String(Number(link.searchParams.get('expires')) + 60))),
      altered((u) => u.searchParams.set('user', bob._id)),
      altered((u) => u.searchParams.delete('user')),
      altered((u) => u.searchParams.delete('expires')),
      altered((u) => (u.pathname = `/api/v1/file/${publicFile}/download`)),
    ];
    for (const url of tampered) {
      const refused = await onFiles(url);
      expect(refused.status).toBe(401);
      expect(errorOf(refused)).toEqual({ message: 'Invalid or expired download link.', type: 'access' });
    }
    const fileOrigin = fileOriginOf(api.runtime.services.config)!;
    const file = (await api.runtime.services.readModel.files.get(privateFile))!;
    const stale = signedDownloadUrl(fileOrigin, file, alice._id, { offset: 0, disposition: 'attachment' }, 0);
    const expired = await onFiles(stale);
    expect(expired.status).toBe(401);
    expect(errorOf(expired)).toEqual({ message: 'Invalid or expired download link.', type: 'access' });
  });

  it('checks the link’s user again at each use: access taken away closes the link', async () => {
    const shared = await api.createFolder(alice, 'user', alice._id, 'shared with bob', {
      access: {
        users: [
          { id: alice._id, level: 2 },
          { id: bob._id, level: 0 },
        ],
        groups: [],
      },
    });
    const { file } = await upload(alice, shared, 'for-bob.txt', 'text/plain', 'hi bob');
    const res = await api.as(bob).get(`/file/${file}/download`);
    expect(res.status).toBe(307);
    expect((await onFiles(res.headers.location)).body.toString()).toBe('hi bob');
    ok(await api.putFolderAccess(alice, shared, { users: [{ id: alice._id, level: 2 }], groups: [] }));
    const closed = await onFiles(res.headers.location);
    expect(closed.status).toBe(401);
    expect(errorOf(closed)).toEqual({
      message: `Read access denied for file ${file} (user ${bob._id}).`,
      type: 'access',
    });
  });

  it('answers nothing but file downloads on the file origin', async () => {
    const refused = [
      api.site().get('/').set('Host', FILES),
      api.site().get('/api/v1').set('Host', FILES),
      api.site().get('/static/boot.js').set('Host', FILES),
      api.site().get('/api/v1/user/me').set('Host', FILES),
      api.site().get('/api/v1/user/authentication').auth('alice', 'password1').set('Host', FILES),
      api.site().get(`/api/v1/file/${publicFile}`).set('Host', FILES),
      api.site().get(`/api/v1/item/${singleItem}/download`).set('Host', FILES),
      api.site().get(`/api/v1/folder/${publicFolder}/download`).set('Host', FILES),
      api.site().delete(`/api/v1/file/${publicFile}/download`).set('Host', FILES),
      api.site().get(`/API/V1/file/${publicFile}/download`).set('Host', FILES),
    ];
    for (const request of refused) {
      const res = await request;
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'Only file downloads are served on the file origin.', type: 'rest' });
    }
    // Without a signed link, the file origin checks as the service does (a public file, for anyone).
    const direct = await api.site().get(`/api/v1/file/${publicFile}/download/page.html`).set('Host', FILES);
    expect(direct.status).toBe(200);
    expect(direct.headers['content-disposition']).toBe('attachment; filename="page.html"');
    const denied = await api.site().get(`/api/v1/file/${privateFile}/download`).set('Host', FILES);
    expect(denied.status).toBe(401);
  });

  describe('behind a trusted proxy', () => {
    let proxied: ApiClient;
    let fileId: string;
    beforeAll(async () => {
      proxied = await startApi({ FILE_ORIGIN: `https://${FILES}`, FILE_URL_SECRET: SECRET, TRUST_PROXY: 'loopback' });
      const carol = await proxied.createUser('carol');
      const folder = await proxied.defaultFolder(carol, 'Public');
      const item = await proxied.newItem(carol, folder, 'x');
      fileId = await proxied.addFile(carol, item, 'proxied');
    });
    afterAll(() => proxied.close());

    it('reads the host from X-Forwarded-Host', async () => {
      const main = await proxied.anonymous().get(`/file/${fileId}/download`).set('X-Forwarded-Host', 'example.test');
      expect(main.status).toBe(307);
      const url = new URL(main.headers.location);
      const files = await proxied
        .site()
        .get(url.pathname + url.search)
        .set('X-Forwarded-Host', FILES)
        .buffer(true)
        .parse(binary);
      expect(files.status).toBe(200);
      expect(files.body.toString()).toBe('proxied');
    });
  });

  it('X-Forwarded-Host from an untrusted sender is not the file origin', async () => {
    const res = await api.anonymous().get(`/file/${publicFile}/download`).set('X-Forwarded-Host', FILES);
    expect(res.status).toBe(307);
  });

  it('needs FILE_URL_SECRET with FILE_ORIGIN, and an origin, said in one line', () => {
    const needsSecret =
      'FILE_ORIGIN needs FILE_URL_SECRET: at least 32 random characters, the same in every process (e.g. openssl rand -hex 32).';
    expect(() => loadConfig({ FILE_ORIGIN: 'https://files.example.org' })).toThrow(needsSecret);
    expect(() => loadConfig({ FILE_ORIGIN: 'https://files.example.org', FILE_URL_SECRET: 'short' })).toThrow(
      needsSecret,
    );
    for (const bad of [
      'files.example.org',
      'ftp://files.example.org',
      'https://files.example.org/x',
      'https://u:p@f.org',
    ]) {
      expect(() => loadConfig({ FILE_ORIGIN: bad, FILE_URL_SECRET: SECRET })).toThrow(
        `FILE_ORIGIN must be an origin such as https://files.example.org (scheme, host, port), got "${bad}".`,
      );
    }
    expect(loadConfig({ FILE_ORIGIN: 'HTTPS://Files.Example.org:443/', FILE_URL_SECRET: SECRET })).toMatchObject({
      fileOrigin: 'https://files.example.org',
      fileUrlSecret: SECRET,
    });
    expect(loadConfig({ FILE_URL_SECRET: SECRET }).fileUrlSecret).toBeUndefined();
  });
});
