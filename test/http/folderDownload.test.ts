import crypto from 'node:crypto';
import http from 'node:http';
import { PassThrough, Readable } from 'node:stream';
import { binary, startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { readZip, type ZipFileEntry } from '../support/readZip';
import { writeZip } from '../../src/http/resources/folderDownload';
import { needsZip64, type ZipEntry } from '../../src/queries/zipLayout';
import type { BlobStore } from '../../src/ports/blobStore';
import type { FileDoc } from '../../src/ports/readModel';

/**
 * GET /folder/:id/download: the zip's every entry name and byte, filters, access, cookies, hostile names, disconnects.
 */

let api: ApiClient;
let admin: TestUser;
let alice: TestUser;
let bob: TestUser;
let alicePublic: string;

type Caller = TestUser | null;

function download(folderId: string, caller: Caller, query: Record<string, string> = {}) {
  return api.as(caller).get(`/folder/${folderId}/download`).query(query).buffer(true).parse(binary);
}

const jsonOf = (body: Buffer) => JSON.parse(body.toString('utf8'));

async function createFolder(owner: TestUser, parentId: string, name: string, isPublic = true): Promise<string> {
  const res = await api
    .as(owner)
    .post('/folder')
    .type('form')
    .send({ parentType: 'folder', parentId, name, public: String(isPublic) });
  if (res.status !== 200) throw new Error(`POST /folder ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body._id;
}

async function createItem(owner: TestUser, folderId: string, name: string): Promise<string> {
  const res = await api.as(owner).post('/item').type('form').send({ folderId, name });
  if (res.status !== 200) throw new Error(`POST /item ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body._id;
}

/**
 * One-request upload (`POST /file` with the whole body), into a folder (a new item named after the file) or an item.
 */
async function upload(
  owner: TestUser,
  parentType: 'folder' | 'item',
  parentId: string,
  name: string,
  bytes: Buffer,
  mimeType = 'application/octet-stream',
) {
  const res = await api
    .as(owner)
    .post('/file')
    .query({ parentType, parentId, name, size: String(bytes.length), mimeType })
    .set('Content-Type', 'application/octet-stream')
    .send(bytes);
  if (res.status !== 200 || res.body._modelType !== 'file')
    throw new Error(`POST /file ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The tree of the main tests, with the archive each caller must get (path → bytes, in archive order). */
let root: string;
let privateSub: string;
const bytes: Record<string, Buffer> = {};
let everything: [string, Buffer][];
let publicOnly: [string, Buffer][];

beforeAll(async () => {
  api = await startApi();
  admin = await api.createUser('admin');
  alice = await api.createUser('alice');
  bob = await api.createUser('bobby');
  const defaults = await api.as(alice).get('/folder').query({ parentType: 'user', parentId: alice._id });
  alicePublic = defaults.body.find((f: { name: string }) => f.name === 'Public')._id;

  for (const [key, size] of [
    ['big', 1536 * 1024 + 7],
    ['deep', 100_000],
    ['secret', 2048],
    ['single', 333],
    ['a', 10],
    ['pic', 4096],
    ['other', 77],
  ] as const) {
    bytes[key] = crypto.randomBytes(size);
  }
  root = await createFolder(alice, alicePublic, 'Root');
  // Items first, then folders: folders still come first in the archive.
  await upload(alice, 'folder', root, 'single.txt', bytes.single, 'text/plain');
  const subA = await createFolder(alice, root, 'Sub A');
  privateSub = await createFolder(alice, root, 'Sub B', false);
  await createFolder(alice, root, 'Empty');
  const deeper = await createFolder(alice, subA, 'Deeper');
  await upload(alice, 'folder', deeper, 'deep.bin', bytes.deep);
  await upload(alice, 'folder', subA, 'big.bin', bytes.big);
  await upload(alice, 'folder', privateSub, 'secret.bin', bytes.secret);
  const multi = await createItem(alice, root, 'multi');
  await upload(alice, 'item', multi, 'a.txt', bytes.a, 'text/plain');
  await upload(alice, 'item', multi, 'pic.jpeg', bytes.pic, 'image/jpeg');
  const renamed = await createItem(alice, root, 'renamed');
  await upload(alice, 'item', renamed, 'other.dat', bytes.other);
  await createItem(alice, root, 'no files');
  await upload(alice, 'folder', root, 'zero.txt', Buffer.alloc(0), 'text/plain');

  const head: [string, Buffer][] = [
    ['Root/Sub A/Deeper/deep.bin', bytes.deep],
    ['Root/Sub A/big.bin', bytes.big],
  ];
  const tail: [string, Buffer][] = [
    ['Root/single.txt', bytes.single],
    ['Root/multi/a.txt', bytes.a],
    ['Root/multi/pic.jpeg', bytes.pic],
    ['Root/renamed/other.dat', bytes.other],
    ['Root/zero.txt', Buffer.alloc(0)],
  ];
  everything = [...head, ['Root/Sub B/secret.bin', bytes.secret], ...tail];
  publicOnly = [...head, ...tail];
});
afterAll(() => api.close());

const digest = (data: Buffer) => crypto.createHash('sha256').update(data).digest('hex');
/** [name, sha256 of the bytes] pairs: jest compares long buffers byte by byte, slowly. */
const simplify = (entries: ZipFileEntry[]) => entries.map((e) => [e.name, digest(e.data)]);
const expected = (pairs: [string, Buffer][]) => pairs.map(([name, data]) => [name, digest(data)]);

describe('GET /folder/:id/download', () => {
  it('streams a STORE zip rooted at the folder name: subfolders first, every byte intact', async () => {
    const res = await download(root, alice);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toBe('attachment; filename="Root.zip"');
    const entries = await readZip(res.body);
    expect(simplify(entries)).toEqual(expected(everything));
    for (const entry of entries) {
      expect(entry.compressionMethod).toBe(0);
      // Data descriptors (sizes after the data), as a streamed archive has; a zero-length entry has none.
      expect(entry.flags & 0x8).toBe(entry.data.length > 0 ? 0x8 : 0);
    }
  });

  it('leaves out the subfolders the caller may not read; anonymous callers get the public tree', async () => {
    const anonymous = await download(root, null);
    expect(anonymous.status).toBe(200);
    expect(simplify(await readZip(anonymous.body))).toEqual(expected(publicOnly));
    const other = await download(root, bob);
    expect(simplify(await readZip(other.body))).toEqual(expected(publicOnly));
    const siteAdmin = await download(root, admin);
    expect(simplify(await readZip(siteAdmin.body))).toEqual(expected(everything));
  });

  it('mimeFilter keeps only the listed MIME types; an empty list keeps everything', async () => {
    const jpeg = await download(root, alice, { mimeFilter: '["image/jpeg"]' });
    expect(simplify(await readZip(jpeg.body))).toEqual(expected([['Root/multi/pic.jpeg', bytes.pic]]));
    const text = await download(root, alice, { mimeFilter: JSON.stringify(['text/plain', 'nothing/else']) });
    expect(simplify(await readZip(text.body)).map(([name]) => name)).toEqual([
      'Root/single.txt',
      'Root/multi/a.txt',
      'Root/zero.txt',
    ]);
    const all = await download(root, alice, { mimeFilter: '[]' });
    expect(simplify(await readZip(all.body))).toEqual(expected(everything));
  });

  it('rejects a mimeFilter that is not a JSON array', async () => {
    for (const [value, message] of [
      ['{}', 'Parameter mimeFilter must be a JSON array.'],
      ['"image/jpeg"', 'Parameter mimeFilter must be a JSON array.'],
      ['nope', 'Parameter mimeFilter must be valid JSON.'],
    ]) {
      const res = await download(root, alice, { mimeFilter: value });
      expect(res.status).toBe(400);
      expect(jsonOf(res.body)).toEqual({ message, type: 'rest' });
    }
  });

  it('an empty folder gives an empty archive', async () => {
    const empty = await createFolder(alice, alicePublic, 'Nothing here');
    const res = await download(empty, alice);
    expect(res.status).toBe(200);
    expect(await readZip(res.body)).toEqual([]);
  });

  it('needs READ on the folder: 401 anonymous, 403 logged in; unknown ids are 400', async () => {
    const anonymous = await download(privateSub, null);
    expect(anonymous.status).toBe(401);
    expect(jsonOf(anonymous.body)).toEqual({
      message: `Read access denied for folder ${privateSub} (user None).`,
      type: 'access',
    });
    const other = await download(privateSub, bob);
    expect(other.status).toBe(403);
    expect(jsonOf(other.body)).toEqual({
      message: `Read access denied for folder ${privateSub} (user ${bob._id}).`,
      type: 'access',
    });
    const missing = await download('0123456789abcdef01234567', alice);
    expect(missing.status).toBe(400);
    expect(jsonOf(missing.body)).toEqual({ message: 'Invalid folder id (0123456789abcdef01234567).', type: 'rest' });
  });

  it('accepts the token from the serviceToken or girderToken cookie', async () => {
    for (const cookie of [`serviceToken=${alice.token}`, `girderToken=${alice.token}`]) {
      const res = await api
        .anonymous()
        .get(`/folder/${privateSub}/download`)
        .set('Cookie', cookie)
        .buffer(true)
        .parse(binary);
      expect(res.status).toBe(200);
      expect(simplify(await readZip(res.body))).toEqual(expected([['Sub B/secret.bin', bytes.secret]]));
    }
    // Other routes do not read the cookie.
    const plain = await api.anonymous().get(`/folder/${privateSub}`).set('Cookie', `serviceToken=${alice.token}`);
    expect(plain.status).toBe(401);
  });

  it('answers HEAD with the headers only', async () => {
    const res = await api.as(alice).head(`/folder/${root}/download`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toBe('attachment; filename="Root.zip"');
  });

  it('sanitises hostile names so that every entry stays under the root', async () => {
    const hostile = await createFolder(alice, alicePublic, 'Hostile');
    const dotdot = await createFolder(alice, hostile, '..');
    const payload = crypto.randomBytes(64);
    await upload(alice, 'folder', dotdot, 'x', payload);
    const slashed = await createItem(alice, hostile, 'a/b');
    await upload(alice, 'item', slashed, '..', payload);
    await upload(alice, 'item', slashed, '..\\..\\win', payload);
    await upload(alice, 'item', slashed, 'nul\u0000and\u0001ctl', payload);
    await upload(alice, 'item', slashed, '/etc/passwd', payload);
    const res = await download(hostile, alice);
    expect(res.status).toBe(200);
    const entries = await readZip(res.body);
    expect(entries.map((e) => e.name)).toEqual([
      'Hostile/_../x',
      'Hostile/a_b/_..',
      'Hostile/a_b/.._.._win',
      'Hostile/a_b/nul_and_ctl',
      'Hostile/a_b/_etc_passwd',
    ]);
    for (const entry of entries) expect(entry.data.equals(payload)).toBe(true);
  });

  it('sanitises the root name too (".." and a drive letter)', async () => {
    const dots = await createFolder(alice, alicePublic, '..');
    await upload(alice, 'folder', dots, 'f', Buffer.from('f'));
    expect((await readZip((await download(dots, alice)).body)).map((e) => e.name)).toEqual(['_../f']);
    const drive = await createFolder(alice, alicePublic, 'C:');
    await upload(alice, 'folder', drive, 'f', Buffer.from('f'));
    const res = await download(drive, alice);
    expect(res.headers['content-disposition']).toBe('attachment; filename="C:.zip"');
    expect((await readZip(res.body)).map((e) => e.name)).toEqual(['C_/f']);
  });

  it('names a unicode folder in UTF-8 entries and an RFC 5987 Content-Disposition with a latin-1 fallback', async () => {
    const name = 'Résumé 数据';
    const folder = await createFolder(alice, alicePublic, name);
    await upload(alice, 'folder', folder, 'ünï.txt', Buffer.from('u'));
    const res = await download(folder, alice);
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="Resume .zip"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%E6%95%B0%E6%8D%AE.zip`,
    );
    const entries = await readZip(res.body);
    expect(entries.map((e) => e.name)).toEqual([`${name}/ünï.txt`]);
    // Non-ASCII names carry the UTF-8 flag (bit 11), so every reader decodes them the same way.
    expect(entries[0].flags & 0x800).toBe(0x800);
    // Girder compares the NFKD latin-1 fallback with the UTF-8 name: an accented latin-1 name gets both forms too.
    const latin = await createFolder(alice, alicePublic, 'Café');
    expect((await download(latin, alice)).headers['content-disposition']).toBe(
      `attachment; filename="Cafe.zip"; filename*=UTF-8''Caf%C3%A9.zip`,
    );
  });
});

describe('streaming', () => {
  it('stops reading blobs when the client goes away', async () => {
    const folder = await createFolder(alice, alicePublic, 'Large');
    for (let i = 0; i < 8; i++)
      await upload(alice, 'folder', folder, `part${i}.bin`, crypto.randomBytes(4 * 1024 * 1024));
    const blobs = api.runtime.services.blobs;
    const opened: Readable[] = [];
    const original = blobs.get.bind(blobs);
    const spy = jest.spyOn(blobs, 'get').mockImplementation(async (...args: Parameters<BlobStore['get']>) => {
      const stream = await original(...args);
      opened.push(stream);
      return stream;
    });
    const listener = await api.listen();
    try {
      await new Promise<void>((resolve, reject) => {
        const req = http.get(
          {
            host: '127.0.0.1',
            port: listener.port,
            path: `/api/v1/folder/${folder}/download`,
            headers: { 'Service-Token': alice.token },
          },
          (res) => {
            expect(res.statusCode).toBe(200);
            res.once('data', () => {
              res.pause();
              req.destroy();
              resolve();
            });
          },
        );
        req.on('error', (error) =>
          (error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(error),
        );
      });
      // Every blob opened is closed soon after, and the walk stopped well before the last part.
      await waitFor(() => opened.length > 0 && opened.every((s) => s.destroyed));
      const openedAtStop = opened.length;
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(opened.length).toBe(openedAtStop);
      expect(openedAtStop).toBeLessThan(8);
    } finally {
      spy.mockRestore();
      await listener.close();
    }
  });

  it('answers a failure before any byte is sent with a JSON error, and cuts the connection after', async () => {
    const folder = await createFolder(alice, alicePublic, 'Failing');
    await upload(alice, 'folder', folder, 'one.bin', crypto.randomBytes(10));
    await upload(alice, 'folder', folder, 'two.bin', crypto.randomBytes(10));
    const blobs = api.runtime.services.blobs;
    const first = jest.spyOn(blobs, 'get').mockRejectedValueOnce(new Error('the disk is gone'));
    try {
      const res = await download(folder, alice);
      expect(res.status).toBe(500);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['content-disposition']).toBeUndefined();
      expect(jsonOf(res.body)).toMatchObject({ type: 'internal' });
    } finally {
      first.mockRestore();
    }
    const original = blobs.get.bind(blobs);
    const second = jest
      .spyOn(blobs, 'get')
      .mockImplementationOnce(original)
      .mockRejectedValueOnce(new Error('the disk is gone'));
    try {
      await expect(download(folder, alice)).rejects.toThrow();
    } finally {
      second.mockRestore();
    }
  });

  it('writes zip64 records from 65535 entries, so that readers find them all', async () => {
    const count = 65535;
    expect(needsZip64({ entries: count, bytes: count, nameBytes: count * 12 })).toBe(true);
    const file = {
      _id: 'f',
      itemId: 'i',
      name: 'n',
      mimeType: 'x',
      size: 0,
      blobId: 'b',
      creatorId: null,
      created: '',
      exts: [],
    } as FileDoc;
    async function* entries(): AsyncGenerator<ZipEntry> {
      for (let i = 0; i < count; i++) yield { entryPath: `R/${i}`, file };
    }
    const noBlobs = { get: () => Promise.reject(new Error('no blob is read for empty files')) } as unknown as BlobStore;
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    expect(await writeZip(entries(), noBlobs, out, { forceZip64: true })).toBe(true);
    const archive = Buffer.concat(chunks);
    // The zip64 end of central directory record and its locator.
    expect(archive.includes(Buffer.from([0x50, 0x4b, 0x06, 0x06]))).toBe(true);
    expect(archive.includes(Buffer.from([0x50, 0x4b, 0x06, 0x07]))).toBe(true);
    const zip = await readZip(archive, { data: false });
    expect(zip).toHaveLength(count);
    expect(zip[count - 1].name).toBe(`R/${count - 1}`);
  }, 120_000);

  it('fails without ending the output when a blob is missing', async () => {
    const file = {
      _id: 'f',
      itemId: 'i',
      name: 'n',
      mimeType: 'x',
      size: 3,
      blobId: 'b',
      creatorId: null,
      created: '',
      exts: [],
    } as FileDoc;
    async function* entries(): AsyncGenerator<ZipEntry> {
      yield { entryPath: 'R/ok', file };
      yield { entryPath: 'R/missing', file };
    }
    let calls = 0;
    const blobs = {
      get: async () => (++calls === 1 ? Readable.from([Buffer.from('abc')]) : Promise.reject(new Error('blob gone'))),
    } as unknown as BlobStore;
    const out = new PassThrough();
    out.resume();
    await expect(writeZip(entries(), blobs, out, { forceZip64: false })).rejects.toThrow('blob gone');
    expect(out.writableEnded).toBe(false);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
