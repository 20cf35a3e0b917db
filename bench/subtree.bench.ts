/**
 * Subtree operations at scale: builds a subtree of about 100,000 folders (each holding one item with one file) and
 * times copying and deleting it through the HTTP API, against a baseline measured in the same run (creating 1,000
 * folders one by one through the API).
 *
 *   npx tsx bench/subtree.bench.ts            (FOLDERS=<n> to change the size)
 *
 * The service runs in this process on a throwaway DATA_DIR, listening on 127.0.0.1 only; the script stops by itself.
 * The tree is built through the API too: `width` folders with one item each under a root, then the root copied into
 * itself until the subtree reaches the target (each copy doubles it; a copy landing in its source is never copied
 * again).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { loadConfig } from '../src/config';
import { bootstrap } from '../src/bootstrap';
import { createApp } from '../src/http/app';

const TARGET = Number(process.env.FOLDERS ?? 100_000);
const BASELINE_FOLDERS = 1000;

let base = '';
let token = '';

async function call(method: string, url: string, form: Record<string, string> = {}, body?: Buffer): Promise<any> {
  const query = new URLSearchParams(form).toString();
  const headers: Record<string, string> = { 'Service-Token': token };
  if (body) headers['Content-Type'] = 'application/octet-stream';
  const res = await fetch(`${base}${url}${query ? `?${query}` : ''}`, { method, headers, ...(body ? { body } : {}) });
  const json = await res.json();
  if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function timed<T>(what: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await what();
  return { ms: performance.now() - started, value };
}

const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'subtree-bench-'));
  const runtime = await bootstrap(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', NODE_ENV: 'production' }));
  const app = createApp(runtime.services);
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  try {
    const user = await call('POST', '/user', { login: 'bench', email: 'bench@example.com', firstName: 'B', lastName: 'B', password: 'password1' });
    token = user.authToken.token;
    const mine = (await call('GET', '/folder', { parentType: 'user', parentId: user._id })) as { name: string; _id: string }[];
    const privateId = mine.find((f) => f.name === 'Private')!._id;
    const publicId = mine.find((f) => f.name === 'Public')!._id;

    // Baseline: one folder per request.
    const holder = await call('POST', '/folder', { parentType: 'folder', parentId: publicId, name: 'baseline' });
    const baseline = await timed(async () => {
      for (let i = 0; i < BASELINE_FOLDERS; i++) await call('POST', '/folder', { parentType: 'folder', parentId: holder._id, name: `f${i}` });
    });
    console.log(`baseline: ${BASELINE_FOLDERS} folders created one by one: ${fmt(baseline.ms)} (${(baseline.ms / BASELINE_FOLDERS).toFixed(2)} ms each)`);

    // The tree: (1 + width)·2^doublings folders ≥ TARGET.
    let doublings = 0;
    while (2 ** (doublings + 1) * 8 <= TARGET) doublings++;
    const width = Math.ceil(TARGET / 2 ** doublings) - 1;
    const root = await call('POST', '/folder', { parentType: 'folder', parentId: privateId, name: 'tree' });
    const built = await timed(async () => {
      for (let i = 0; i < width; i++) {
        const folder = await call('POST', '/folder', { parentType: 'folder', parentId: root._id, name: `node ${i}` });
        const item = await call('POST', '/item', { folderId: folder._id, name: `item ${i}` });
        const bytes = Buffer.from(`bytes of item ${i}`);
        await call('POST', '/file', { parentType: 'item', parentId: item._id, name: 'data.txt', size: String(bytes.length) }, bytes);
      }
      for (let n = 0; n < doublings; n++) {
        const copy = await timed(() => call('POST', `/folder/${root._id}/copy`, { parentType: 'folder', parentId: root._id }));
        console.log(`  doubling ${n + 1}/${doublings}: copied ${((1 + width) * 2 ** n).toLocaleString('en')} folders in ${fmt(copy.ms)}`);
      }
    });
    const rm = runtime.services.readModel;
    const count = await rm.subtree.subtreeCount(root._id);
    const folders = (1 + width) * 2 ** doublings;
    console.log(`built: ${folders.toLocaleString('en')} folders, ${(count - folders).toLocaleString('en')} items (subtree count ${count.toLocaleString('en')}) in ${fmt(built.ms)}`);

    // Measured: copy the whole subtree elsewhere, then delete the copy and the original.
    const copy = await timed(() => call('POST', `/folder/${root._id}/copy`, { parentType: 'folder', parentId: publicId }));
    const copied = await rm.subtree.subtreeCount(copy.value._id);
    if (copied !== count) throw new Error(`the copy holds ${copied} entries, the source ${count}`);
    console.log(`copy   ${folders.toLocaleString('en')} folders + ${(count - folders).toLocaleString('en')} items over HTTP: ${fmt(copy.ms)}`);
    const deleteCopy = await timed(() => call('DELETE', `/folder/${copy.value._id}`));
    console.log(`delete the copy over HTTP: ${fmt(deleteCopy.ms)}`);
    const deleteTree = await timed(() => call('DELETE', `/folder/${root._id}`, { progress: 'true' }));
    console.log(`delete the original over HTTP (with progress, bytes reclaimed): ${fmt(deleteTree.ms)}`);
    if ((await rm.subtree.subtreeCount(root._id)) !== 0) throw new Error('the tree is still there');

    const perFolder = baseline.ms / BASELINE_FOLDERS;
    console.log('');
    console.log(`ratio copy   / baseline(1,000 one-by-one creates): ${(copy.ms / baseline.ms).toFixed(2)}`);
    console.log(`ratio delete / baseline(1,000 one-by-one creates): ${(deleteTree.ms / baseline.ms).toFixed(2)}`);
    console.log(`one-by-one creation of ${folders.toLocaleString('en')} folders would take about ${fmt(perFolder * folders)}: copy is ${((perFolder * folders) / copy.ms).toFixed(0)}× faster`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await runtime.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
