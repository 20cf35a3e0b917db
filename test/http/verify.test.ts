import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import Database from 'better-sqlite3';
import { startApi, type ApiClient, type TestUser } from '../support/apiClient';
import { mongoStandInMode } from '../../src/infra/readmodel/createReadModel';

jest.setTimeout(240_000);

const ROOT = path.resolve(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      TSX,
      ['src/cli/main.ts', ...args],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** A small deterministic PRNG (mulberry32), so that a failing workload can be replayed. */
function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(items: T[]): T | undefined => (items.length ? items[Math.floor(next() * items.length)] : undefined),
  };
}

const SEED = 20240601;
const OPERATIONS = 2000;

/**
 * 2,000 random operations through the API: folders created, renamed, moved, re-permissioned (sometimes recursively),
 * given metadata, copied, deleted, emptied and restored; items created, renamed, moved, copied and deleted; files
 * uploaded and deleted. Refusals (400/403) are part of the mix; a 5xx fails the workload.
 */
async function workload(api: ApiClient, users: TestUser[], roots: string[]): Promise<Record<string, number>> {
  const rng = random(SEED);
  const db = api.runtime.db;
  const ids = (sql: string) => db.prepare(sql).pluck().all() as string[];
  let folders: string[] = [...roots];
  let items: string[] = [];
  let files: string[] = [];
  let deleted: string[] = [];
  const refresh = () => {
    folders = ids('SELECT id FROM rm_folders');
    items = ids('SELECT id FROM rm_items');
    files = ids('SELECT id FROM rm_files');
    deleted = ids('SELECT DISTINCT id FROM rm_deleted_folders WHERE id NOT IN (SELECT id FROM rm_folders)');
  };
  const counts: Record<string, number> = {};
  for (let n = 0; n < OPERATIONS; n++) {
    if (n % 25 === 0) refresh();
    const user = users[rng.int(users.length)];
    const as = api.as(rng.next() < 0.7 ? users[0] : user);
    const folder = rng.pick(folders) ?? roots[0];
    const other = rng.pick(folders) ?? roots[0];
    const item = rng.pick(items);
    const word = `w${rng.int(40)}`;
    const kinds = [
      'createFolder',
      'createFolder',
      'createFolder',
      'rename',
      'move',
      'metadata',
      'access',
      'createItem',
      'createItem',
      'upload',
      'upload',
      'renameItem',
      'moveItem',
      'copyItem',
      'deleteItem',
      'deleteFile',
      'copyFolder',
      'deleteFolder',
      'clear',
      'restore',
    ];
    const kind = kinds[rng.int(kinds.length)];
    let res;
    switch (kind) {
      case 'createFolder':
        res = await as
          .post('/folder')
          .type('form')
          .send({ parentType: 'folder', parentId: folder, name: `${word} ${rng.int(5)}` });
        break;
      case 'rename':
        res = await as
          .put(`/folder/${folder}`)
          .type('form')
          .send({ name: `${word} renamed`, description: `d${n}` });
        break;
      case 'move':
        res = await as.put(`/folder/${folder}`).type('form').send({ parentType: 'folder', parentId: other });
        break;
      case 'metadata':
        res = await as
          .put(`/folder/${folder}/metadata`)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify({ [word]: n, nested: { n } }));
        break;
      case 'access': {
        const level = rng.int(3);
        const access = {
          users: [
            { id: users[0]._id, level: 2 },
            { id: users[1 + rng.int(users.length - 1)]._id, level },
          ],
          groups: [],
        };
        res = await as
          .put(`/folder/${folder}/access`)
          .type('form')
          .send({
            access: JSON.stringify(access),
            public: String(rng.next() < 0.5),
            ...(rng.next() < 0.3 ? { recurse: 'true' } : {}),
          });
        break;
      }
      case 'createItem':
        res = await as.post('/item').query({ folderId: folder, name: `${word} item` });
        break;
      case 'upload': {
        if (!item) continue;
        const bytes = Buffer.from(`${word}-${rng.int(1000)}-`.repeat(1 + rng.int(20)));
        res = await as
          .post('/file')
          .query({ parentType: 'item', parentId: item, name: `${word}.txt`, size: bytes.length })
          .set('Content-Type', 'application/octet-stream')
          .send(bytes);
        break;
      }
      case 'renameItem':
        if (!item) continue;
        res = await as
          .put(`/item/${item}`)
          .type('form')
          .send({ name: `${word} item renamed` });
        break;
      case 'moveItem':
        if (!item) continue;
        res = await as.put(`/item/${item}`).type('form').send({ folderId: other });
        break;
      case 'copyItem':
        if (!item) continue;
        res = await as.post(`/item/${item}/copy`).type('form').send({ folderId: other });
        break;
      case 'deleteItem':
        if (!item) continue;
        res = await as.delete(`/item/${item}`);
        break;
      case 'deleteFile': {
        const file = rng.pick(files);
        if (!file) continue;
        res = await as.delete(`/file/${file}`);
        break;
      }
      case 'copyFolder':
        res = await as.post(`/folder/${folder}/copy`).type('form').send({ parentType: 'folder', parentId: other });
        break;
      case 'deleteFolder':
        if (roots.includes(folder)) continue;
        res = await as.delete(`/folder/${folder}`);
        break;
      case 'clear':
        if (roots.includes(folder) || rng.next() < 0.5) continue;
        res = await as.delete(`/folder/${folder}/contents`);
        break;
      case 'restore': {
        const gone = rng.pick(deleted);
        if (!gone) continue;
        res = await as.post(`/folder/${gone}/restore`).query(rng.next() < 0.5 ? { parentId: other } : {});
        break;
      }
    }
    if (!res) continue;
    if (res.status >= 500) throw new Error(`operation ${n} (${kind}): ${res.status} ${JSON.stringify(res.body)}`);
    const key = `${kind} ${res.status}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/**
 * `verify` as a command process on the embedded deployment's SQLite file (read models and log side by side); in the
 * http-mongo project the read models live in this test process's MongoDB stand-in, which no command process can reach,
 * so the suite is skipped there: verify on MongoDB runs in-process next to the service in
 * test/http-mongo/commands.test.ts.
 */
const describeEmbedded = mongoStandInMode() !== null ? describe.skip : describe;

describeEmbedded('npm run cli -- verify', () => {
  let api: ApiClient;
  let dataDir: string;
  const env = () => ({ DATA_DIR: dataDir, NODE_ENV: 'test' });

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verify-test-'));
    api = await startApi({}, { dataDir });
  });
  afterAll(async () => {
    await api?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('finds the read models equal to a replay after 2,000 random operations, and names a corrupted row', async () => {
    const admin = await api.createUser('admin');
    const alice = await api.createUser('alice');
    const bob = await api.createUser('bobby');
    const roots = [await api.defaultFolder(admin, 'Private'), await api.defaultFolder(admin, 'Public')];
    const counts = await workload(api, [admin, alice, bob], roots);
    const succeeded = (kind: string) => counts[`${kind} 200`] ?? 0;
    for (const kind of [
      'createFolder',
      'rename',
      'move',
      'metadata',
      'access',
      'createItem',
      'upload',
      'copyFolder',
      'deleteFolder',
      'clear',
      'restore',
      'moveItem',
      'copyItem',
      'deleteItem',
      'deleteFile',
    ]) {
      expect([kind, succeeded(kind) > 0]).toEqual([kind, true]);
    }

    // While the service runs (the verify reads a snapshot).
    const clean = await runCli(['verify'], env());
    expect(clean.stderr).toBe('');
    expect(clean.stdout).toContain('The read models match the event log.');
    expect(clean.stdout).toMatch(
      new RegExp(
        `Verified the read models in ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} against a replay of \\d+ events`,
      ),
    );
    expect(clean.code).toBe(0);

    // Corrupt one live row behind the service's back (any folder: the random workload may have removed every
    // subfolder, but never a user's own folders): verify names it and fails.
    const file = path.join(dataDir, 'folder-service.sqlite');
    const raw = new Database(file);
    // Seen this round on a loaded machine (3 runs of 5 beside two other suites): a connection opened here right after
    // the verify found rm_folders and rm_items empty, then the rows a moment later. Not explained yet (a note for the
    // next round): the read is retried for up to 10 s so that the corruption check below still runs.
    const pickVictim = () =>
      raw.prepare('SELECT id, name FROM rm_folders ORDER BY id LIMIT 1').get() as
        { id: string; name: string } | undefined;
    let victim = pickVictim();
    for (const deadline = Date.now() + 10_000; !victim && Date.now() < deadline; victim = pickVictim())
      await new Promise((resolve) => setTimeout(resolve, 50));
    if (!victim) throw new Error('rm_folders stayed empty for 10 s on a fresh connection');
    raw.prepare('UPDATE rm_folders SET name = ? WHERE id = ?').run('corrupted', victim.id);
    raw.close();
    const corrupt = await runCli(['verify'], env());
    expect(corrupt.code).toBe(1);
    expect(corrupt.stdout).toContain(
      `rm_folders row id=${victim.id} differs: name: live "corrupted", replayed ${JSON.stringify(victim.name)}`,
    );
    expect(corrupt.stdout).toContain('1 difference between the live read models and the replay.');

    // A missing row is named too.
    const raw2 = new Database(file);
    const item = raw2.prepare('SELECT id, folder_id FROM rm_items ORDER BY id LIMIT 1').get() as {
      id: string;
      folder_id: string;
    };
    const inFolder = raw2.prepare('SELECT n FROM rm_folder_item_counts WHERE folder_id = ?').pluck();
    const itemsBefore = inFolder.get(item.folder_id) as number;
    // The folder's item count follows the deletion (its trigger), so it differs from the replay's too.
    raw2.prepare('DELETE FROM rm_items WHERE id = ?').run(item.id);
    raw2.close();
    const missing = await runCli(['verify'], env());
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain(`rm_items row id=${item.id} missing from the live read models:`);
    const countLine =
      itemsBefore === 1
        ? `rm_folder_item_counts row folder_id=${item.folder_id} missing from the live read models:`
        : `rm_folder_item_counts row folder_id=${item.folder_id} differs: n: live ${itemsBefore - 1}, replayed ${itemsBefore}`;
    expect(missing.stdout).toContain(countLine);
    expect(missing.stdout).toContain('3 differences between the live read models and the replay.');
  });

  it('refuses arguments and a DATA_DIR without data; rebuild accepts only the one projection', async () => {
    expect((await runCli(['verify', '--fast'], env())).stderr.trim()).toBe('verify takes no arguments, got: --fast.');
    const empty = path.join(dataDir, 'nothing-here');
    const none = await runCli(['verify'], { DATA_DIR: empty, NODE_ENV: 'test' });
    expect(none.code).toBe(1);
    expect(none.stderr.trim()).toBe(
      `No data to verify: ${path.join(empty, 'folder-service.sqlite')} does not exist (set DATA_DIR).`,
    );
    const other = await runCli(['rebuild', '--projection', 'folders'], env());
    expect(other.code).toBe(1);
    expect(other.stderr.trim()).toBe(
      'Unknown projection "folders". The read models are one projection, "read-models" (one checkpoint): rebuild rebuilds them all.',
    );
  });
});
