/**
 * Folder zip download at scale: builds a folder tree holding a few hundred MB of files through the HTTP API, then
 * downloads it with `GET /folder/:id/download` and reports the throughput and the peak RSS of the server process,
 * against a baseline measured in the same run: downloading one file of the same total size with
 * `GET /file/:id/download` (the same bytes, streamed without the zip writer and the tree walk).
 *
 *   npx tsx bench/zip.bench.ts            (ZIP_BENCH_MB=<n> to change the total size, default 320)
 *
 * The service runs as a child process (`src/cli/main.ts serve`, production mode) on a throwaway DATA_DIR, listening
 * on 127.0.0.1 with a port of its choosing, so that its RSS is its own; RSS is sampled from /proc every 20 ms during
 * each download. Downloads are read and discarded by the client; a last, untimed zip download is written to disk and
 * checked with yauzl (every entry, its size). The script stops the server and removes its data by itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';

const TOTAL_MB = Number(process.env.ZIP_BENCH_MB ?? 320);
const LARGE_FILE = 8 * 1024 * 1024;
const SMALL_FILES = 400;
const SMALL_FILE = 16 * 1024;
const SUBFOLDERS = 4;
const ROUNDS = 2;
const MiB = 1024 * 1024;

let port = 0;
let token = '';

/** A JSON API call with form parameters in the query string and an optional raw body. */
function call(method: string, route: string, params: Record<string, string> = {}, body?: { stream: Readable; length: number }): Promise<any> {
  const query = new URLSearchParams(params).toString();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'Service-Token': token, 'Content-Length': String(body?.length ?? 0) };
    const req = http.request({ host: '127.0.0.1', port, method, path: `/api/v1/${route}${query ? `?${query}` : ''}`, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) reject(new Error(`${method} ${route}: ${res.statusCode} ${text}`));
        else resolve(JSON.parse(text));
      });
    });
    req.on('error', reject);
    if (body) body.stream.pipe(req);
    else req.end();
  });
}

/** `length` random bytes, produced a MiB at a time (never held whole). */
function randomStream(length: number): { stream: Readable; length: number } {
  let left = length;
  const stream = new Readable({
    read() {
      if (left === 0) return void this.push(null);
      const n = Math.min(left, MiB);
      left -= n;
      this.push(crypto.randomBytes(n));
    },
  });
  return { stream, length };
}

const uploadFile = (folderId: string, name: string, size: number) =>
  call('POST', 'file', { parentType: 'folder', parentId: folderId, name, size: String(size) }, randomStream(size));

const createFolder = async (parentId: string, name: string): Promise<string> =>
  (await call('POST', 'folder', { parentType: 'folder', parentId, name }))._id;

/** Resident set size of a process in bytes (Linux /proc), or null where there is none. */
function rssOf(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

interface Measurement {
  bytes: number;
  seconds: number;
  peakRss: number | null;
  rssBefore: number | null;
}

/** Streams a download to `sink` (discarded when absent) while sampling the server's RSS. */
async function measureDownload(route: string, pid: number, sink?: fs.WriteStream): Promise<Measurement> {
  const rssBefore = rssOf(pid);
  let peakRss = rssBefore;
  const sampler = setInterval(() => {
    const rss = rssOf(pid);
    if (rss !== null && (peakRss === null || rss > peakRss)) peakRss = rss;
  }, 20);
  const started = performance.now();
  let bytes = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: `/api/v1/${route}`, headers: { 'Service-Token': token } }, (res) => {
          if (res.statusCode !== 200) return reject(new Error(`GET ${route}: ${res.statusCode}`));
          res.on('data', (c: Buffer) => {
            bytes += c.length;
          });
          if (sink) pipeline(res, sink).then(resolve, reject);
          else {
            res.on('end', resolve);
            res.on('error', reject);
            res.resume();
          }
        })
        .on('error', reject);
    });
  } finally {
    clearInterval(sampler);
  }
  return { bytes, seconds: (performance.now() - started) / 1000, peakRss, rssBefore };
}

/** Every entry of a zip on disk: count and total uncompressed size (yauzl reads the central directory). */
function zipSummary(file: string): Promise<{ entries: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (error, zip) => {
      if (error || !zip) return reject(error ?? new Error('no zip'));
      const summary = { entries: 0, bytes: 0 };
      zip.on('entry', (entry: yauzl.Entry) => {
        summary.entries += 1;
        summary.bytes += entry.uncompressedSize;
        zip.readEntry();
      });
      zip.on('end', () => resolve(summary));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

/** Starts `src/cli/main.ts serve` on a free port and resolves once it listens. */
function startServer(dataDir: string): Promise<{ child: ChildProcess; port: number }> {
  const root = path.resolve(__dirname, '..');
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/cli/main.ts'), 'serve'], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', NODE_ENV: 'production', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${output}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /listening on http:\/\/localhost:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        output = '';
        resolve({ child, port: Number(match[1]) });
      }
      if (output.length > 1_000_000) output = output.slice(-10_000);
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('exit', (code) => reject(new Error(`the server exited (${code}):\n${output}`)));
  });
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(force);
}

const mb = (bytes: number) => bytes / MiB;
const fmtMb = (bytes: number | null) => (bytes === null ? 'n/a' : `${mb(bytes).toFixed(1)} MiB`);

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zip-bench-'));
  const { child, port: listening } = await startServer(dataDir);
  port = listening;
  const pid = child.pid!;
  try {
    const user = await call('POST', 'user', { login: 'bench', email: 'bench@example.com', firstName: 'B', lastName: 'B', password: 'password1' });
    token = user.authToken.token;
    const defaults = await call('GET', 'folder', { parentType: 'user', parentId: user._id });
    const publicFolder = defaults.find((f: { name: string }) => f.name === 'Public')._id as string;

    // The tree: SUBFOLDERS folders, each with an inner folder; large files spread over all of them, small files too.
    const started = performance.now();
    const root = await createFolder(publicFolder, 'bench');
    const folders = [root];
    for (let i = 0; i < SUBFOLDERS; i++) {
      const sub = await createFolder(root, `part-${i}`);
      folders.push(sub, await createFolder(sub, 'inner'));
    }
    const smallTotal = SMALL_FILES * SMALL_FILE;
    const largeCount = Math.max(1, Math.round((TOTAL_MB * MiB - smallTotal) / LARGE_FILE));
    let total = 0;
    let entries = 0;
    for (let i = 0; i < largeCount; i++) {
      await uploadFile(folders[i % folders.length], `large-${i}.bin`, LARGE_FILE);
      total += LARGE_FILE;
      entries += 1;
    }
    for (let i = 0; i < SMALL_FILES; i++) {
      await uploadFile(folders[i % folders.length], `small-${i}.dat`, SMALL_FILE);
      total += SMALL_FILE;
      entries += 1;
    }
    const baselineFolder = await createFolder(publicFolder, 'baseline');
    const baselineFile = (await uploadFile(baselineFolder, 'one-file.bin', total))._id as string;
    console.log(
      `built ${entries} files (${largeCount} × ${mb(LARGE_FILE)} MiB, ${SMALL_FILES} × ${SMALL_FILE / 1024} KiB) in ${folders.length} folders, ` +
        `${mb(total).toFixed(1)} MiB, plus a ${mb(total).toFixed(1)} MiB baseline file, in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );

    const results: Record<'baseline' | 'zip', Measurement[]> = { baseline: [], zip: [] };
    for (let round = 0; round < ROUNDS; round++) {
      results.baseline.push(await measureDownload(`file/${baselineFile}/download`, pid));
      results.zip.push(await measureDownload(`folder/${root}/download`, pid));
    }

    const rows = (['baseline', 'zip'] as const).map((kind) => {
      const runs = results[kind];
      const best = runs.reduce((a, b) => (a.seconds <= b.seconds ? a : b));
      const peak = runs.reduce<number | null>((max, r) => (r.peakRss !== null && (max === null || r.peakRss > max) ? r.peakRss : max), null);
      return { kind, best, peak, rssBefore: runs[0].rssBefore };
    });
    console.log('');
    console.log('download                               bytes        best time   throughput    server RSS before   server peak RSS');
    for (const { kind, best, peak, rssBefore } of rows) {
      const label = kind === 'baseline' ? 'GET /file/:id/download (baseline)' : 'GET /folder/:id/download (zip)';
      console.log(
        `${label.padEnd(38)} ${fmtMb(best.bytes).padStart(12)} ${`${best.seconds.toFixed(2)} s`.padStart(10)} ` +
          `${`${(mb(best.bytes) / best.seconds).toFixed(0)} MiB/s`.padStart(12)} ${fmtMb(rssBefore).padStart(19)} ${fmtMb(peak).padStart(17)}`,
      );
    }
    const [baseline, zip] = rows;
    const ratio = mb(zip.best.bytes) / zip.best.seconds / (mb(baseline.best.bytes) / baseline.best.seconds);
    console.log('');
    console.log(`zip throughput is ${(ratio * 100).toFixed(0)}% of the baseline's (${ROUNDS} rounds each, best of each shown)`);
    if (zip.peak !== null && baseline.peak !== null) {
      console.log(`server peak RSS: zip ${fmtMb(zip.peak)} vs baseline ${fmtMb(baseline.peak)} (${fmtMb(zip.peak - baseline.peak)} more) for a ${fmtMb(zip.best.bytes)} archive`);
    }
    console.log(`zip overhead: ${zip.best.bytes - total} bytes of headers for ${entries} entries`);

    // An untimed download to disk, checked entry by entry.
    const zipFile = path.join(dataDir, 'check.zip');
    await measureDownload(`folder/${root}/download`, pid, fs.createWriteStream(zipFile));
    const summary = await zipSummary(zipFile);
    if (summary.entries !== entries || summary.bytes !== total) {
      throw new Error(`the archive holds ${summary.entries} entries and ${summary.bytes} bytes, expected ${entries} and ${total}`);
    }
    console.log(`archive checked with yauzl: ${summary.entries} entries, ${fmtMb(summary.bytes)} of file data`);
  } finally {
    await stopServer(child);
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
