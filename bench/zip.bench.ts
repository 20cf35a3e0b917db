/**
 * Folder zip download at scale (issue 11, issue 31): `GET /folder/:id/download` against archiver alone zipping the same
 * blob files from disk with the same options (STORE, local time, zip64 when the service would choose it), served by a
 * bare node:http server in a process of its own (./lib/serveZip.ts) and read over HTTP by this process like the
 * service's archive, measured in the same run; and the server's RSS growth while it streams.
 *
 *   quick: ≈34 MiB of random files in 7 folders (`npm run bench -- --quick`)
 *   full:  ≈320 MiB of random files plus 6 files of 1 GiB each sharing one *sparse* blob (a 6.3 GiB archive, zip64,
 *          from 0.3 GiB of disk): an archive larger than the server could hold in memory
 *   alone: npm run bench -- zip [--quick]
 *
 * The service runs as a child process (`src/cli/main.ts serve`, production mode) on a throwaway DATA_DIR, listening on
 * 127.0.0.1 with a port of its choosing, so that its RSS is its own; RSS is sampled from /proc every 20 ms. Downloads
 * are read and discarded by the client. The two are measured in alternating pairs after one untimed pair (the first
 * zips pay the JIT compilation of the zip path): seven pairs at the quick size, three at the full size; the row is
 * the median of the pairs' ratios, with their spread. Archiver alone in this process, into a discarding sink (the
 * yardstick until issue 31), is timed in each pair too and reported on a row of its own: with no second process and no
 * HTTP it ran on one core while the service's download used two, so its ratio followed the machine's load (0.61× on a
 * busy machine, 1.05× on a quiet one; docs/performance.md). A last zip download is checked with yauzl (every entry,
 * its size). The benchmark stops the servers and removes its data itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import archiver from 'archiver';
import yauzl from 'yauzl';
import { MAX_ZIP32_ENTRIES, MAX_ZIP32_OFFSET } from '../src/queries/zipLayout';
import type { BenchRow, Benchmark } from './lib/benchRow';
import { download, median, timed } from './lib/fileTransfer';
import { startServer as startBareServer } from './lib/serverProcess';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

interface Sizes {
  largeFiles: number;
  largeFile: number;
  smallFiles: number;
  smallFile: number;
  subfolders: number;
  /** Files of `zeroFile` bytes sharing one sparse blob (0: none). */
  zeroFiles: number;
  zeroFile: number;
}

const QUICK: Sizes = {
  largeFiles: 4,
  largeFile: 8 * MiB,
  smallFiles: 100,
  smallFile: 16 * 1024,
  subfolders: 3,
  zeroFiles: 0,
  zeroFile: 0,
};
const FULL: Sizes = {
  largeFiles: 39,
  largeFile: 8 * MiB,
  smallFiles: 400,
  smallFile: 16 * 1024,
  subfolders: 4,
  zeroFiles: 6,
  zeroFile: GiB,
};

let port = 0;
let token = '';

/** A JSON API call with form parameters in the query string and an optional raw body. */
function call(
  method: string,
  route: string,
  params: Record<string, string> = {},
  body?: { stream: Readable; length: number },
): Promise<any> {
  const query = new URLSearchParams(params).toString();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'Service-Token': token, 'Content-Length': String(body?.length ?? 0) };
    const req = http.request(
      { host: '127.0.0.1', port, method, path: `/api/v1/${route}${query ? `?${query}` : ''}`, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) reject(new Error(`${method} ${route}: ${res.statusCode} ${text}`));
          else resolve(JSON.parse(text));
        });
      },
    );
    req.on('error', reject);
    if (body) body.stream.pipe(req);
    else req.end();
  });
}

/** `length` bytes (random, or zeros), produced a MiB at a time (never held whole), hashed as they go. */
function byteStream(length: number, zeros: boolean): { stream: Readable; length: number; sha256: () => string } {
  let left = length;
  const hash = crypto.createHash('sha256');
  const zero = Buffer.alloc(MiB);
  const stream = new Readable({
    read() {
      if (left === 0) return void this.push(null);
      const n = Math.min(left, MiB);
      left -= n;
      const chunk = zeros ? zero.subarray(0, n) : crypto.randomBytes(n);
      hash.update(chunk);
      this.push(chunk);
    },
  });
  return { stream, length, sha256: () => hash.digest('hex') };
}

/** Uploads a file; resolves with its id and its blob id (the SHA-256 of its bytes, as the fs blob store names it). */
async function uploadFile(parentType: 'folder' | 'item', parentId: string, name: string, size: number, zeros = false) {
  const body = byteStream(size, zeros);
  const file = await call('POST', 'file', { parentType, parentId, name, size: String(size) }, body);
  return { id: file._id as string, itemId: file.itemId as string, blobId: body.sha256() };
}

/** SHA-256 of `size` zero bytes. */
function zerosSha256(size: number): string {
  const hash = crypto.createHash('sha256');
  const zero = Buffer.alloc(MiB);
  for (let left = size; left > 0; left -= MiB) hash.update(zero.subarray(0, Math.min(left, MiB)));
  return hash.digest('hex');
}

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
      if (error) return reject(error);
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
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /listening on http:\/\/localhost:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        output = '';
        resolve({ child, port: Number(match[1]) });
      }
      if (output.length > 1_000_000) output = output.slice(-10_000);
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
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

/** A sink that takes bytes as fast as they come and counts them. */
function discard(): Writable & { bytes: number } {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      sink.bytes += chunk.length;
      callback();
    },
  }) as Writable & { bytes: number };
  sink.bytes = 0;
  return sink;
}

/** Archiver alone: the same blob files, in the same order, with the service's options, into a discarding sink. */
async function archiverAlone(blobPaths: string[], forceZip64: boolean): Promise<{ bytes: number; seconds: number }> {
  const started = performance.now();
  const archive = archiver('zip', { store: true, forceZip64, forceLocalTime: true });
  const sink = discard();
  const done = pipeline(archive, sink);
  blobPaths.forEach((file, i) => archive.append(fs.createReadStream(file), { name: `entry-${i}` }));
  await archive.finalize();
  await done;
  return { bytes: sink.bytes, seconds: (performance.now() - started) / 1000 };
}

const zipBench: Benchmark = async ({ quick }) => {
  const sizes = quick ? QUICK : FULL;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'zip-bench-'));
  const { child, port: listening } = await startServer(dataDir);
  const bare = await startBareServer(path.join(__dirname, 'lib', 'serveZip.ts'), {});
  port = listening;
  const pid = child.pid!;
  try {
    const user = await call('POST', 'user', {
      login: 'bench',
      email: 'bench@example.com',
      firstName: 'B',
      lastName: 'B',
      password: 'password1',
    });
    token = user.authToken.token;
    const defaults = await call('GET', 'folder', { parentType: 'user', parentId: user._id });
    const publicFolder = defaults.find((f: { name: string }) => f.name === 'Public')._id as string;

    // The tree: `subfolders` folders, each with an inner folder; files spread over all of them.
    const root = await createFolder(publicFolder, 'bench');
    const folders = [root];
    for (let i = 0; i < sizes.subfolders; i++) {
      const sub = await createFolder(root, `part-${i}`);
      folders.push(sub, await createFolder(sub, 'inner'));
    }
    const blobPaths: string[] = [];
    const blobPath = (blobId: string) => path.join(dataDir, 'blobs', blobId.slice(0, 2), blobId);
    for (let i = 0; i < sizes.largeFiles; i++) {
      blobPaths.push(
        blobPath((await uploadFile('folder', folders[i % folders.length], `large-${i}.bin`, sizes.largeFile)).blobId),
      );
    }
    for (let i = 0; i < sizes.smallFiles; i++) {
      blobPaths.push(
        blobPath((await uploadFile('folder', folders[i % folders.length], `small-${i}.dat`, sizes.smallFile)).blobId),
      );
    }
    if (sizes.zeroFiles > 0) {
      // One sparse blob of zeros, placed where the blob store keeps those bytes before they are uploaded (the upload
      // then finds them stored and keeps the sparse file); the other files are copies of that item (no bytes copied).
      const zeroBlob = blobPath(zerosSha256(sizes.zeroFile));
      fs.mkdirSync(path.dirname(zeroBlob), { recursive: true });
      fs.closeSync(fs.openSync(zeroBlob, 'w'));
      fs.truncateSync(zeroBlob, sizes.zeroFile);
      const first = await uploadFile('folder', root, 'zeros-0.bin', sizes.zeroFile, true);
      blobPaths.push(zeroBlob);
      for (let i = 1; i < sizes.zeroFiles; i++) {
        await call('POST', `item/${first.itemId}/copy`, {
          folderId: folders[i % folders.length],
          name: `zeros-${i}.bin`,
        });
        blobPaths.push(zeroBlob);
      }
    }
    const total = blobPaths.reduce((sum, file) => sum + fs.statSync(file).size, 0);
    const forceZip64 = blobPaths.length > MAX_ZIP32_ENTRIES || total > MAX_ZIP32_OFFSET;

    // The yardstick: archiver alone in a bare node:http server of its own, read over HTTP by this process like the
    // service's archive (./lib/serveZip.ts). Also timed, for comparison: archiver alone in this process into a
    // discarding sink, the yardstick until now, which the machine's load moved (see docs/performance.md).
    const list = path.join(dataDir, 'zip-list.json');
    fs.writeFileSync(list, JSON.stringify(blobPaths));
    const bareUrl = `${new URL(bare.api).origin}/?list=${encodeURIComponent(list)}&zip64=${forceZip64 ? 1 : 0}`;
    const pairs = quick ? 7 : 3;
    const rates = { served: [] as number[], zip: [] as number[], inProcess: [] as number[] };
    const zip: Measurement[] = [];
    // One untimed round first: the first zips pay the JIT compilation of the zip path, on both sides.
    for (let round = 0; round <= pairs; round++) {
      const servedSeconds = await timed(() => download(bareUrl));
      const served = await measureDownload(`folder/${root}/download`, pid);
      const inProcess = await archiverAlone(blobPaths, forceZip64);
      if (round === 0) continue;
      zip.push(served);
      rates.served.push(mb(served.bytes) / servedSeconds);
      rates.zip.push(mb(served.bytes) / served.seconds);
      rates.inProcess.push(mb(inProcess.bytes) / inProcess.seconds);
    }
    const ratios = rates.zip.map((r, i) => r / rates.served[i]);
    const inProcessRatios = rates.zip.map((r, i) => r / rates.inProcess[i]);
    const spread = (values: number[]) => ({ min: Math.min(...values), max: Math.max(...values), pairs: values.length });
    const zipBytes = zip[0].bytes;
    const rssGrowth = Math.max(...zip.map((r) => (r.peakRss ?? 0) - (r.rssBefore ?? 0)));

    // An untimed download to disk, checked entry by entry with yauzl (skipped above 2 GiB, to spare the disk).
    const check = await new Promise<{ entries: number; bytes: number }>((resolve, reject) => {
      const zipFile = path.join(dataDir, 'check.zip');
      if (total > 2 * GiB) return resolve({ entries: blobPaths.length, bytes: total });
      measureDownload(`folder/${root}/download`, pid, fs.createWriteStream(zipFile))
        .then(() => zipSummary(zipFile))
        .then(resolve, reject);
    });
    if (check.entries !== blobPaths.length || check.bytes !== total) {
      throw new Error(
        `the archive holds ${check.entries} entries and ${check.bytes} bytes, expected ${blobPaths.length} and ${total}`,
      );
    }
    const what = `${blobPaths.length} files, ${mb(total).toFixed(0)} MiB${forceZip64 ? ', zip64' : ''}`;
    return [
      {
        measure: `GET /folder/:id/download (${what})`,
        value: median(rates.zip),
        unit: 'MiB/s',
        baselineName: 'archiver alone served by bare node:http, same files, same options',
        baseline: median(rates.served),
        ratio: median(ratios),
        goal: '≥ 0.8× archiver alone',
        met: median(ratios) >= 0.8,
        spread: spread(ratios),
      },
      {
        measure: `GET /folder/:id/download (${what}), against the former yardstick`,
        value: median(rates.zip),
        unit: 'MiB/s',
        baselineName: 'archiver alone in the bench process, no HTTP',
        baseline: median(rates.inProcess),
        ratio: median(inProcessRatios),
        goal: 'none: shows how far a one-process yardstick moves',
        met: true,
        spread: spread(inProcessRatios),
      },
      {
        measure: `server RSS growth during the zip download (${what})`,
        value: mb(rssGrowth),
        unit: 'MiB',
        baselineName: 'archive size',
        baseline: mb(zipBytes),
        baselineUnit: 'MiB',
        ratio: rssGrowth / zipBytes,
        goal: 'flat: < 64 MiB whatever the size',
        met: rssGrowth < 64 * MiB,
      },
    ] satisfies BenchRow[];
  } finally {
    await bare.stop();
    await stopServer(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
};

export default zipBench;
