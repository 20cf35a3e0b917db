import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ok, startApi, type ApiClient, type TestUser } from '../support/apiClient';

/**
 * Another process holding the embedded file's write lock (its commit of a 100k-folder copy takes seconds): a write
 * waits for it on the append worker, off the event loop, up to APPEND_LOCK_WAIT_MS, and then succeeds; past that wait
 * it is refused whole with 503 and `Retry-After` (it used to answer 500 "database is locked" after 5 s), nothing of
 * it is recorded, and the same request passes once the lock is free. The other process is a second connection to
 * the file holding `BEGIN IMMEDIATE`, which SQLite treats exactly as another process's writer.
 */

jest.setTimeout(60_000);

let dataDir: string;
let api: ApiClient;
let admin: TestUser;
let parentId: string;
let other: Database.Database;

async function startWith(lockWaitMs: number): Promise<void> {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-service-lock-'));
  api = await startApi({ APPEND_LOCK_WAIT_MS: String(lockWaitMs) }, { dataDir });
  admin = await api.createUser('admin');
  parentId = await api.createFolder(admin, 'user', admin._id, 'parent');
  other = new Database(path.join(dataDir, 'folder-service.sqlite'));
}

afterEach(async () => {
  if (other.inTransaction) other.exec('ROLLBACK');
  other.close();
  await api.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const create = (name: string) => api.as(admin).post('/folder').query({ parentId, name });
const childNames = async () =>
  ok<{ name: string }[]>(await api.as(admin).get('/folder').query({ parentId, parentType: 'folder' })).map(
    (f) => f.name,
  );

it("outwaits a lock held past SQLite's 5 s busy timeout (shorter than APPEND_LOCK_WAIT_MS), then writes", async () => {
  await startWith(20_000);
  other.exec('BEGIN IMMEDIATE');
  const released = new Promise<void>((resolve) =>
    setTimeout(() => {
      other.exec('COMMIT');
      resolve();
    }, 5_500),
  );
  const res = await create('after the wait');
  await released;
  expect(res.status).toBe(200);
  expect(res.body.name).toBe('after the wait');
  expect(await childNames()).toEqual(['after the wait']);
});

it('answers 503 with Retry-After past the wait, records nothing, and takes the same request once the lock is free', async () => {
  await startWith(300);
  other.exec('BEGIN IMMEDIATE');
  const refused = await create('retried');
  expect(refused.status).toBe(503);
  expect(refused.headers['retry-after']).toBe('1');
  expect(refused.body).toEqual({
    message:
      'The change was not made: another writer held the database for over 300 ms (a large copy or delete, say). ' +
      'Retry shortly.',
    type: 'rest',
  });
  other.exec('COMMIT');

  expect(await childNames()).toEqual([]);
  const retried = await create('retried');
  expect(retried.status).toBe(200);
  expect(await childNames()).toEqual(['retried']);
});
