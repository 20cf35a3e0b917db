import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import Database from 'better-sqlite3';

/**
 * Crash safety of subtree operations against the real service in a child process: a large copy and a large delete
 * are cut short by `kill -9` a few milliseconds into the request; after a restart on the same DATA_DIR the operation
 * is either absent or complete (never half done), no file references missing bytes and, after the startup sweep, no
 * stored blob is unreferenced.
 */

// Four kill-and-restart cycles per test, each restart catching the projection of a 10k-row operation up: minutes on a
// loaded 2-core machine (a quiet one takes seconds).
jest.setTimeout(300_000);

const ROOT = path.resolve(__dirname, '..', '..');

interface Service {
  proc: ChildProcess;
  base: string;
  exited: Promise<void>;
}

function startService(dataDir: string): Promise<Service> {
  const proc = spawn(process.execPath, ['-r', 'tsx/cjs', 'src/cli/main.ts', 'serve'], {
    cwd: ROOT,
    // BLOB_RETENTION_DAYS=0: deleted bytes are not kept for restore, and BLOB_SWEEP_GRACE_SECONDS=0: the sweep spares
    // no young blob, so it must leave none unreferenced.
    env: {
      ...process.env,
      PORT: '0',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      NODE_ENV: 'development',
      BLOB_RETENTION_DAYS: '0',
      BLOB_SWEEP_GRACE_SECONDS: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start:\n${output}`)), 90_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on http:\/\/localhost:(\d+)\/api\/v1/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ proc, base: `http://127.0.0.1:${match[1]}/api/v1`, exited });
      }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited (${code}):\n${output}`));
    });
  });
}

async function kill9(service: Service): Promise<void> {
  service.proc.kill('SIGKILL');
  await service.exited;
}

let dataDir: string;
let service: Service;
let token: string;
let adminId: string;

async function call(method: string, url: string, form?: Record<string, string>, body?: Buffer): Promise<any> {
  const init: RequestInit = { method, headers: { 'Service-Token': token } };
  let target = `${service.base}${url}`;
  if (form) target += `${url.includes('?') ? '&' : '?'}${new URLSearchParams(form).toString()}`;
  if (body) {
    init.body = body;
    (init.headers as Record<string, string>)['Content-Type'] = 'application/octet-stream';
  }
  const res = await fetch(target, init);
  const json = await res.json();
  if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Folders and items whose names hold `word`, under the root user or collection `rootId`, counted through the API. */
async function countUnder(rootId: string, word: string): Promise<{ folders: number; items: number }> {
  const folders = (await call('GET', '/folder', { text: word, limit: '0' })) as { baseParentId: string }[];
  const items = (await call('GET', '/item', { text: word, limit: '0' })) as { baseParentId: string }[];
  return {
    folders: folders.filter((f) => f.baseParentId === rootId).length,
    items: items.filter((i) => i.baseParentId === rootId).length,
  };
}

/** The stored blobs (DATA_DIR/blobs/<aa>/<sha256>). */
function blobsOnDisk(): Set<string> {
  const root = path.join(dataDir, 'blobs');
  const found = new Set<string>();
  for (const dir of fs.readdirSync(root)) {
    if (!/^[0-9a-f]{2}$/.test(dir)) continue;
    for (const name of fs.readdirSync(path.join(root, dir))) if (/^[0-9a-f]{64}$/.test(name)) found.add(name);
  }
  return found;
}

/** Read-model integrity and bytes, read straight from the running service's database file. */
function checkStore(): void {
  const db = new Database(path.join(dataDir, 'folder-service.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const one = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    expect({
      orphanFolders: one(
        "SELECT COUNT(*) AS n FROM rm_folders f WHERE f.parent_type = 'folder' AND NOT EXISTS (SELECT 1 FROM rm_folders p WHERE p.id = f.parent_id)",
      ),
      orphanItems: one(
        'SELECT COUNT(*) AS n FROM rm_items i WHERE NOT EXISTS (SELECT 1 FROM rm_folders f WHERE f.id = i.folder_id)',
      ),
      orphanFiles: one(
        'SELECT COUNT(*) AS n FROM rm_files fl WHERE NOT EXISTS (SELECT 1 FROM rm_items i WHERE i.id = fl.item_id)',
      ),
    }).toEqual({ orphanFolders: 0, orphanItems: 0, orphanFiles: 0 });
    const referenced = new Set(db.prepare('SELECT DISTINCT blob_id FROM rm_files').pluck().all() as string[]);
    const stored = blobsOnDisk();
    expect([...referenced].filter((b) => !stored.has(b))).toEqual([]); // no file without its bytes
    expect([...stored].filter((b) => !referenced.has(b))).toEqual([]); // no bytes without a file (after the sweep)
  } finally {
    db.close();
  }
}

/**
 * A tree of `word` folders with one item (and file) each, doubled by copying it into itself `doublings` times:
 * 1 + `width` folders and `width` items become (1 + width)·2^doublings folders and width·2^doublings items.
 */
async function buildTree(
  parentId: string,
  word: string,
  width: number,
  doublings: number,
): Promise<{ id: string; folders: number; items: number; lastCopyMs: number }> {
  const root = await call('POST', '/folder', { parentType: 'folder', parentId, name: `${word} root` });
  for (let i = 0; i < width; i++) {
    const folder = await call('POST', '/folder', { parentType: 'folder', parentId: root._id, name: `${word} ${i}` });
    const item = await call('POST', '/item', { folderId: folder._id, name: `${word} item ${i}` });
    const bytes = Buffer.from(`${word} bytes ${i} ${Math.random()}`);
    await call(
      'POST',
      '/file',
      { parentType: 'item', parentId: item._id, name: 'data.txt', size: String(bytes.length) },
      bytes,
    );
  }
  let lastCopyMs = 0;
  for (let n = 0; n < doublings; n++) {
    const started = Date.now();
    await call('POST', `/folder/${root._id}/copy`, { parentType: 'folder', parentId: root._id });
    lastCopyMs = Date.now() - started;
  }
  return { id: root._id, folders: (1 + width) * 2 ** doublings, items: width * 2 ** doublings, lastCopyMs };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends the request, kills the service `afterMs` later (whatever the request's state), and restarts it. Resolves
 * with whether the request was answered before the kill.
 */
async function crashDuring(
  method: string,
  url: string,
  form: Record<string, string>,
  afterMs: number,
): Promise<boolean> {
  const pending = fetch(`${service.base}${url}?${new URLSearchParams(form).toString()}`, {
    method,
    headers: { 'Service-Token': token },
  })
    .then((res) => res.status)
    .catch(() => null);
  await sleep(afterMs);
  await kill9(service);
  const answered = (await pending) !== null;
  service = await startService(dataDir);
  return answered;
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'subtree-crash-'));
  service = await startService(dataDir);
  const user = await fetch(
    `${service.base}/user?${new URLSearchParams({ login: 'admin', email: 'admin@example.com', firstName: 'A', lastName: 'D', password: 'password1' }).toString()}`,
    {
      method: 'POST',
    },
  ).then((r) => r.json() as Promise<{ _id: string; authToken: { token: string } }>);
  token = user.authToken.token;
  adminId = user._id;
});

afterAll(async () => {
  if ((service as Service | undefined) !== undefined) await kill9(service); // undefined if beforeAll failed
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it('a large copy cut short by kill -9 is absent or complete after a restart', async () => {
  const folders = (await call('GET', '/folder', { parentType: 'user', parentId: adminId })) as {
    name: string;
    _id: string;
  }[];
  const privateId = folders.find((f) => f.name === 'Private')!._id;
  const tree = await buildTree(privateId, 'node', 10, 9); // 5632 folders, 5120 items
  expect(await countUnder(adminId, 'node')).toEqual({ folders: tree.folders, items: tree.items });

  // The copy takes about twice the last doubling; kill at several points of it (and before it starts).
  const delays = [2, Math.round(tree.lastCopyMs * 0.5), tree.lastCopyMs, Math.round(tree.lastCopyMs * 1.5)];
  const outcomes: string[] = [];
  for (const [n, delay] of delays.entries()) {
    const collection = await call('POST', '/collection', { name: `destination ${n}` });
    const answered = await crashDuring(
      'POST',
      `/folder/${tree.id}/copy`,
      { parentType: 'collection', parentId: collection._id },
      delay,
    );
    const copied = await countUnder(collection._id, 'node');
    expect([
      { folders: 0, items: 0 },
      { folders: tree.folders, items: tree.items },
    ]).toContainEqual(copied);
    outcomes.push(`${copied.folders === 0 ? 'absent' : 'complete'}${answered ? '' : ' (killed before the answer)'}`);
    // The source is untouched either way.
    expect(await countUnder(adminId, 'node')).toEqual({ folders: tree.folders, items: tree.items });
    checkStore();
  }
  console.log(`copy crash outcomes (kill after ${delays.join(', ')} ms): ${outcomes.join(', ')}`);
});

it('a large delete cut short by kill -9 is absent or complete after a restart, and its bytes are swept', async () => {
  const folders = (await call('GET', '/folder', { parentType: 'user', parentId: adminId })) as {
    name: string;
    _id: string;
  }[];
  const publicId = folders.find((f) => f.name === 'Public')!._id;
  const outcomes: string[] = [];
  for (const [n, factor] of [0.5, 1.5].entries()) {
    const word = `doomed${n}`;
    const tree = await buildTree(publicId, word, 10, 8); // 2816 folders, 2560 items, bytes of their own
    expect(await countUnder(adminId, word)).toEqual({ folders: tree.folders, items: tree.items });
    const answered = await crashDuring(
      'DELETE',
      `/folder/${tree.id}`,
      {},
      Math.max(2, Math.round(tree.lastCopyMs * factor)),
    );
    const left = await countUnder(adminId, word);
    expect([
      { folders: 0, items: 0 },
      { folders: tree.folders, items: tree.items },
    ]).toContainEqual(left);
    outcomes.push(`${left.folders === 0 ? 'deleted' : 'intact'}${answered ? '' : ' (killed before the answer)'}`);
    checkStore();
  }
  console.log(`delete crash outcomes: ${outcomes.join(', ')}`);
});
