/**
 * Production start: `npm start` runs the bundled JavaScript (`node --enable-source-maps dist/cli/main.js serve`, built
 * by `prestart`).
 * Measures the time from spawning the process to its first answer (`GET /healthz`) on a fresh DATA_DIR, and its
 * resident memory once idle, against a bare express process started and measured the same way in this run.
 *
 *   npm run build && npm run bench -- startup
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Benchmark, BenchRow } from './lib/benchRow';
import { rssOf } from './lib/serverProcess';

const ROOT = path.join(__dirname, '..');
const MAIN = path.join(ROOT, 'dist', 'cli', 'main.js');
const IDLE_MS = 2000;

const BARE = `
const app = require('express')();
app.get('/healthz', (_req, res) => res.json({ status: 'ok' }));
const server = app.listen(0, '127.0.0.1', () => console.log('listening on http://localhost:' + server.address().port + '/'));
`;

const bench: Benchmark = async ({ quick }) => {
  if (!fs.existsSync(MAIN)) throw new Error(`${path.relative(ROOT, MAIN)} is missing: run "npm run build" first`);
  const runs = quick ? 1 : 5;
  const bare = await measure(
    runs,
    () => spawn(process.execPath, ['-e', BARE], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] }),
    (port) => `http://127.0.0.1:${port}/healthz`,
  );
  const service = await measure(
    runs,
    () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-start-'));
      const child = spawn(process.execPath, ['--enable-source-maps', MAIN, 'serve'], {
        cwd: ROOT,
        env: { ...process.env, NODE_ENV: 'production', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      child.once('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));
      return child;
    },
    (port) => `http://127.0.0.1:${port}/healthz`,
  );
  const rows: BenchRow[] = [
    {
      measure: 'cold start to first answer (node dist/cli/main.js serve, fresh DATA_DIR)',
      value: service.startMs,
      unit: 'ms',
      baselineName: 'bare express process',
      baseline: bare.startMs,
      ratio: service.startMs / bare.startMs,
      goal: '< 500 ms',
      met: service.startMs < 500,
    },
    {
      measure: `idle RSS ${IDLE_MS / 1000} s after start`,
      value: service.rssMB,
      unit: 'MB',
      baselineName: 'bare express process',
      baseline: bare.rssMB,
      ratio: service.rssMB / bare.rssMB,
      goal: '≤ 100 MB',
      met: service.rssMB <= 100,
    },
  ];
  return rows;
};

/** Median over `runs` of spawn → first 200 answer, and the RSS after idling. */
async function measure(
  runs: number,
  start: () => ChildProcess,
  url: (port: number) => string,
): Promise<{ startMs: number; rssMB: number }> {
  const starts: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const child = start();
    try {
      const port = await portFromLog(child);
      for (;;) {
        const ok = await fetch(url(port)).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      starts.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
      rss.push(rssOf(child.pid!));
    } finally {
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      });
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { startMs: median(starts), rssMB: median(rss) };
}

/** The port from the process's "listening on http://localhost:<port>" line (the service logs it at start). */
function portFromLog(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error('the process did not report its port within 60 s')), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const match = /listening on http:\/\/localhost:(\d+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`the process exited with ${code} before listening`)));
  });
}

export default bench;
