/**
 * CPU profile (--cpu-prof) and event-loop delay of the compiled service under one kind of load, for
 * docs/performance.md.
 *   npm run build && npx tsx bench/prof/profile.ts <post|get|list|seq> <seconds> [profile dir]
 *   node bench/prof/selfTime.cjs <file>.cpuprofile; node bench/prof/inclusiveTime.cjs <file>.cpuprofile 'dist/'
 * The main thread's profile is the .001 file; the append worker's the next one.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { Api } from '../lib/api';
const ROOT = path.join(__dirname, '..', '..');

const mode = process.argv[2] ?? 'post';
const seconds = Number(process.argv[3] ?? 5);
const out = process.argv[4] ?? '/tmp/prof/out';
fs.mkdirSync(out, { recursive: true });
const PORT = 40000 + Math.floor(Math.random() * 20000);
async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'prof-'));
  const child = spawn(
    process.execPath,
    [
      '-r', '/tmp/aprof/allocSampling.cjs',
      

      '-r',
      path.join(__dirname, 'eventLoopDelay.cjs'),
      path.join(ROOT, 'dist/cli/main.js'),
      'serve',
    ],
    {
      env: {
        ...process.env,
        NODE_ENV: 'production',
        PORT: String(PORT),
        DATA_DIR: dataDir,
        LOG_LEVEL: process.env.PROF_LOG_LEVEL ?? 'warn',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const port = PORT;
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  child.stdout.resume();
  const base = `http://127.0.0.1:${port}/api/v1`;
  const admin = new Api(base);
  const a = await admin.register('profadmin');
  admin.token = a.token;
  const mine = await admin.ok('GET', '/folder', { parentType: 'user', parentId: a.id });
  const pub = mine.find((f: any) => f.name === 'Public')._id;
  for (let i = 0; i < 60; i++)
    await admin.ok('POST', '/folder', { parentType: 'folder', parentId: pub, name: `c${i}` });
  const headers = { 'Girder-Token': a.token };
  let n = 0;
  if (mode === 'seq') {
    const t: number[] = [];
    const end = Date.now() + seconds * 1000;
    while (Date.now() < end) {
      const s = performance.now();
      await admin.ok('POST', '/folder', { parentType: 'folder', parentId: pub, name: `s${n++}` });
      t.push(performance.now() - s);
    }
    t.sort((x, y) => x - y);
    console.log(
      'seq creates',
      t.length,
      'mean',
      (t.reduce((x, y) => x + y) / t.length).toFixed(2),
      'p50',
      t[t.length >> 1].toFixed(2),
    );
  } else {
    const r = await autocannon({
      url:
        mode === 'post'
          ? `${base}/folder`
          : mode === 'get'
            ? `${base}/folder/${pub}`
            : `${base}/folder?parentType=folder&parentId=${pub}&limit=50`,
      method: mode === 'post' ? 'POST' : 'GET',
      connections: 10,
      duration: seconds,
      headers,
      ...(mode === 'post'
        ? {
            requests: [
              {
                setupRequest: (req: any) => ({
                  ...req,
                  method: 'POST',
                  path: `/api/v1/folder?parentType=folder&parentId=${pub}&name=load%20${n++}`,
                }),
              },
            ],
          }
        : {}),
    });
    console.log(mode, 'rps', result(r));
  }
  child.kill('SIGUSR2'); await new Promise((r) => setTimeout(r, 1500)); child.kill('SIGINT');
  await new Promise((r) => child.once('exit', r));
  fs.rmSync(dataDir, { recursive: true, force: true });
}
function result(r: any) {
  return `${r.requests.average} p50 ${r.latency.p50} p99 ${r.latency.p99} non2xx ${r.non2xx} errors ${r.errors}`;
}
void main();
