import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApi, ok, type ApiClient, type TestUser } from '../support/apiClient';
import { KeepAliveSocket } from '../support/keepAliveSocket';

/**
 * Issue 28, rule 4: a fault is named, and readiness tells the truth. DATA_DIR is a small tmpfs the test mounts, so
 * that the disk really fills up, and a read-only tmpfs mounted over the blob store's directory makes that store
 * really refuse writes underneath the running service. Mounting needs root (CAP_SYS_ADMIN); where the machine does
 * not allow it, the tests are skipped with a message saying so.
 */

const mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-service-faults-'));
const mounts: string[] = [];

function mountTmpfs(dir: string, options: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { stdio: 'pipe' });
    mounts.push(dir);
    return true;
  } catch {
    return false;
  }
}

function unmount(dir: string): void {
  execFileSync('umount', [dir]);
  mounts.splice(mounts.indexOf(dir), 1);
}

const canMount = mountTmpfs(mountPoint, 'size=12m');
if (!canMount) {
  console.warn(
    `storageFaults.test.ts skipped: this machine does not let the test mount a tmpfs (needs root), so a full disk ` +
      `and a read-only store cannot be made real here.`,
  );
}
const describeWithMounts = canMount ? describe : describe.skip;

let api: ApiClient;
let admin: TestUser;
let itemId: string;

beforeAll(async () => {
  if (!canMount) return;
  api = await startApi({}, { dataDir: path.join(mountPoint, 'data') });
  admin = await api.createUser('admin');
  await api.allowSmallChunks(admin);
  itemId = await api.newItem(admin, await api.defaultFolder(admin, 'Private'), 'target');
});
afterAll(async () => {
  await api?.close();
  for (const dir of [...mounts].reverse()) execFileSync('umount', ['-l', dir]);
  fs.rmSync(mountPoint, { recursive: true, force: true });
});

/** New bytes (the blob store keeps one copy of equal contents, so each upload must differ). */
const freshBytes = (size: number) => crypto.randomBytes(size);

function upload(bytes: Buffer) {
  return api
    .as(admin)
    .post('/file')
    .query({ parentType: 'item', parentId: itemId, name: 'data.bin', size: bytes.length })
    .set('Content-Type', 'application/octet-stream')
    .send(bytes);
}

/** Fills the file system of `dir` with a file of its own; returns the file (remove it to free the space). */
function fill(dir: string): string {
  const filler = path.join(dir, 'filler');
  const fd = fs.openSync(filler, 'w');
  const block = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) fs.writeSync(fd, block);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    fs.closeSync(fd);
  }
  return filler;
}

describeWithMounts('a full disk', () => {
  let filler: string;
  let uploadId: string;
  beforeAll(async () => {
    // An upload started while there is room: its chunk then meets the full disk.
    uploadId = ok(
      await api
        .as(admin)
        .post('/file')
        .query({ parentType: 'item', parentId: itemId, name: 'big.bin', size: 1 << 20 }),
    )._id;
    filler = fill(mountPoint);
  });

  it('answers an upload 507 naming the full disk', async () => {
    const res = await upload(freshBytes(256 * 1024));
    expect(res.status).toBe(507);
    expect(res.body).toEqual({
      message: 'The change was not made: the disk of the data store is full (ENOSPC).',
      type: 'rest',
    });
  });

  it('answers an event append 507 as well (SQLite: database or disk is full)', async () => {
    // The WAL reuses the room it has: appends go on until it needs more.
    let res = await api.as(admin).get(`/item/${itemId}`);
    for (let i = 0; i < 40 && res.status === 200; i++) {
      res = await api
        .as(admin)
        .put(`/item/${itemId}/metadata`)
        .send({ big: crypto.randomBytes(200 * 1024).toString('hex') });
    }
    expect(res.status).toBe(507);
    expect(res.body).toEqual({
      message: 'The change was not made: the disk of the data store is full (SQLITE_FULL).',
      type: 'rest',
    });
  });

  it('answers a chunk refused mid-body 507 on a kept-alive connection, and the next request on it', async () => {
    const { port } = await api.listen();
    const socket = await KeepAliveSocket.open(port);
    try {
      socket.write(
        `POST /api/v1/file/chunk?uploadId=${uploadId}&offset=0 HTTP/1.1\r\nHost: service\r\n` +
          `Service-Token: ${admin.token}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${1 << 20}\r\n\r\n`,
      );
      for (let sent = 0; sent < 1 << 20; sent += 64 * 1024) socket.write(freshBytes(64 * 1024));
      const refused = await socket.answer(5000);
      expect({ status: refused.status, body: JSON.parse(refused.body) as unknown }).toEqual({
        status: 507,
        body: { message: 'The change was not made: the disk of the data store is full (ENOSPC).', type: 'rest' },
      });
      socket.write('GET /api/v1/system/version HTTP/1.1\r\nHost: service\r\n\r\n');
      expect((await socket.answer()).status).toBe(200);
    } finally {
      socket.destroy();
    }
  });

  it('makes /readyz report the fault while reads go on', async () => {
    const ready = await api.site().get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.failed).toEqual(['storage']);
    expect(ready.body.checks.storage).toMatchObject({
      status: 'failed',
      fault: 'full',
      error: expect.stringMatching(/^the disk of the data store is full \((ENOSPC|SQLITE_FULL): /),
    });
    expect((await api.as(admin).get(`/item/${itemId}`)).status).toBe(200);
  });

  it('is ready again, and writes, once space is free', async () => {
    fs.rmSync(filler);
    const ready = await api.site().get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks.storage).toEqual({ status: 'ok' });
    expect((await upload(freshBytes(64 * 1024))).status).toBe(200);
  });
});

describeWithMounts('a store that turns read-only underneath the service', () => {
  let readOnlyDir: string;
  beforeAll(() => {
    // The blob store writes each new file in blobs/tmp first: a read-only file system over it refuses that.
    readOnlyDir = path.join(mountPoint, 'data', 'blobs', 'tmp');
    if (!mountTmpfs(readOnlyDir, 'ro,size=1m')) throw new Error('could not mount the read-only tmpfs');
  });

  it('answers a write 503 with the reason and Retry-After', async () => {
    const res = await upload(freshBytes(1024));
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('30');
    expect(res.body).toEqual({
      message: 'The change was not made: the data store cannot be written (EROFS). Retry later.',
      type: 'rest',
    });
  });

  it('makes /readyz report the store read-only while reads go on', async () => {
    const ready = await api.site().get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.failed).toEqual(['storage']);
    expect(ready.body.checks.storage).toMatchObject({
      status: 'failed',
      fault: 'readOnly',
      code: 'EROFS',
      error: expect.stringMatching(/^the data store cannot be written \(EROFS: /),
    });
    expect((await api.as(admin).get(`/item/${itemId}`)).status).toBe(200);
  });

  it('is ready again, and writes, once the store is writable', async () => {
    unmount(readOnlyDir);
    const ready = await api.site().get('/readyz');
    expect(ready.status).toBe(200);
    expect((await upload(freshBytes(1024))).status).toBe(200);
  });
});
