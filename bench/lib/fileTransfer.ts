/**
 * What the file-bytes benchmarks (fileBytes.bench.ts, s3Upload.bench.ts) share: a file of random bytes on disk, a
 * chunked upload of it through the HTTP API as girder_client sends one (`POST /file`, then `POST /file/chunk` per
 * chunk, each chunk streamed from the file), a download read and discarded, and the pairing of every measurement with
 * its baseline (alternating, medians and spread: the machine is shared, one reading means little).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';

export const MiB = 1024 * 1024;
export const GiB = 1024 * MiB;

/** Writes `size` random bytes to `file`, a MiB at a time. */
export function writeRandomFile(file: string, size: number): void {
  const fd = fs.openSync(file, 'w');
  try {
    for (let left = size; left > 0; left -= MiB) fs.writeSync(fd, crypto.randomBytes(Math.min(left, MiB)));
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Makes the file's bytes new (its first 8 bytes become `round`), so that every round stores bytes the store has not
 * seen: a repeated upload would otherwise find its blob already stored.
 */
export function freshen(file: string, round: number): void {
  const fd = fs.openSync(file, 'r+');
  try {
    const stamp = Buffer.alloc(8);
    stamp.writeDoubleBE(round + Math.random());
    fs.writeSync(fd, stamp, 0, 8, 0);
  } finally {
    fs.closeSync(fd);
  }
}

interface Target {
  /** `http://127.0.0.1:<port>/api/v1` */
  api: string;
  token: string;
}

/** One API call with form parameters in the query string and an optional body streamed from a file range. */
function call(
  target: Target,
  method: string,
  route: string,
  params: Record<string, string | number>,
  body?: { file: string; start: number; length: number },
): Promise<any> {
  const query = new URLSearchParams(
    Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]),
  ).toString();
  const url = new URL(`${target.api}/${route}?${query}`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, headers: { 'Girder-Token': target.token, 'Content-Length': String(body?.length ?? 0) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) reject(new Error(`${method} ${route}: ${res.statusCode} ${text}`));
          else resolve(JSON.parse(text));
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (!body) return void req.end();
    fs.createReadStream(body.file, {
      start: body.start,
      end: body.start + body.length - 1,
      highWaterMark: MiB,
    }).pipe(req);
  });
}

/** Uploads `file` into a folder in chunks of `chunkSize` (girder_client's way); resolves with the new file's id. */
export async function uploadInChunks(
  target: Target,
  folderId: string,
  file: string,
  name: string,
  chunkSize: number,
): Promise<string> {
  const size = fs.statSync(file).size;
  const upload = await call(target, 'POST', 'file', { parentType: 'folder', parentId: folderId, name, size });
  let answer: any = upload;
  for (let offset = 0; offset < size; offset += chunkSize) {
    const length = Math.min(chunkSize, size - offset);
    answer = await call(
      target,
      'POST',
      'file/chunk',
      { uploadId: upload._id, offset },
      { file, start: offset, length },
    );
  }
  if (answer._modelType !== 'file') throw new Error(`the last chunk answered ${JSON.stringify(answer)}`);
  return answer._id as string;
}

/** GETs `url` and discards the body; resolves with the number of bytes read. */
export function download(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`GET ${url}: ${res.statusCode}`));
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => resolve(bytes));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** Seconds that `run` takes. */
export async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return (performance.now() - started) / 1000;
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Rates (MiB/s) of a measure and its baseline, taken in alternating pairs. */
export interface Pairs {
  baseline: number[];
  subject: number[];
}

/**
 * Runs `rounds` pairs, the baseline first in each, after `warmUp` untimed pairs; each run returns its seconds for
 * `bytes` bytes. The rates are MiB/s.
 */
export async function alternate(
  rounds: number,
  bytes: number,
  baseline: (round: number) => Promise<number>,
  subject: (round: number) => Promise<number>,
  warmUp = 1,
): Promise<Pairs> {
  const pairs: Pairs = { baseline: [], subject: [] };
  for (let round = 0; round < warmUp + rounds; round++) {
    const b = await baseline(round);
    const s = await subject(round);
    if (round < warmUp) continue;
    pairs.baseline.push(bytes / MiB / b);
    pairs.subject.push(bytes / MiB / s);
  }
  return pairs;
}

/** The median rates, and the median and range of the per-pair ratios. */
export function summarize(pairs: Pairs): { value: number; baseline: number; ratio: number; ratios: number[] } {
  const ratios = pairs.subject.map((s, i) => s / pairs.baseline[i]);
  return { value: median(pairs.subject), baseline: median(pairs.baseline), ratio: median(ratios), ratios };
}
