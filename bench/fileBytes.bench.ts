/**
 * File bytes at disk speed on the embedded default (issue 31, build item 6), each measure in alternating pairs with
 * its baseline in the same run (medians, and the spread of the pairs' ratios):
 *
 *  - upload: one file sent as girder_client sends it (`POST /file`, then `POST /file/chunk` per 64 MiB chunk, each
 *    streamed from the file) against `dd bs=64M conv=fsync` of the same bytes into the same filesystem plus one
 *    SHA-256 of them (node:crypto over the file): what storing the bytes durably and naming them costs at the least;
 *  - download: `GET /file/:id/download` of that file against a bare node:http server streaming the blob file.
 *
 *   full:  1 GiB in 64 MiB chunks, 5 pairs      quick: 32 MiB in 8 MiB chunks, 3 pairs
 *   npm run bench -- fileBytes [--quick]
 *
 * Every round's file is new bytes (freshen()), so no upload finds its blob already stored.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Api } from './lib/api';
import type { Benchmark, BenchRow } from './lib/benchRow';
import {
  GiB,
  MiB,
  alternate,
  download,
  freshen,
  summarize,
  timed,
  uploadInChunks,
  writeRandomFile,
  type Pairs,
} from './lib/fileTransfer';
import { startServer, startService } from './lib/serverProcess';

const FULL = { size: GiB, chunk: 64 * MiB, rounds: 5 };
const QUICK = { size: 32 * MiB, chunk: 8 * MiB, rounds: 3 };

/** `dd` of `source` into `target` with one fsync at the end, as the upload makes its bytes durable. */
function ddFsync(source: string, target: string, blockSize: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const dd = spawn('dd', [`if=${source}`, `of=${target}`, `bs=${blockSize}`, 'conv=fsync', 'status=none'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    dd.on('error', reject);
    dd.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`dd exited with ${code}`))));
  });
}

async function sha256Of(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  await pipeline(fs.createReadStream(file, { highWaterMark: MiB }), hash);
  return hash.digest('hex');
}

function row(measure: string, baselineName: string, goal: number, pairs: Pairs): BenchRow {
  const { value, baseline, ratio, ratios } = summarize(pairs);
  return {
    measure,
    value,
    unit: 'MiB/s',
    baselineName,
    baseline,
    ratio,
    goal: `≥ ${goal}× ${baselineName.split(' (')[0]}`,
    met: ratio >= goal,
    spread: { min: Math.min(...ratios), max: Math.max(...ratios), pairs: ratios.length },
  };
}

const bench: Benchmark = async ({ quick }) => {
  const sizes = quick ? QUICK : FULL;
  const service = await startService();
  const bare = await startServer(path.join(__dirname, 'lib', 'serveFile.ts'), {});
  const source = path.join(service.dataDir, 'bench-source.bin');
  const ddTarget = path.join(service.dataDir, 'bench-dd.bin');
  try {
    const api = new Api(service.api);
    const admin = await api.registerAsOwner('bench');
    const folderId = admin.publicFolderId;
    const target = { api: service.api, token: admin.token };
    writeRandomFile(source, sizes.size);
    const mib = `${sizes.size / MiB} MiB`;

    let lastFileId = '';
    let lastSha256 = '';
    const upload = await alternate(
      sizes.rounds,
      sizes.size,
      async (round) => {
        freshen(source, round);
        const seconds = await timed(async () => {
          await ddFsync(source, ddTarget, 64 * MiB);
          lastSha256 = await sha256Of(source);
        });
        fs.rmSync(ddTarget);
        return seconds;
      },
      (round) =>
        timed(async () => {
          lastFileId = await uploadInChunks(target, folderId, source, `upload-${round}.bin`, sizes.chunk);
        }),
    );

    // The last upload's blob, where the filesystem store keeps it (DATA_DIR/blobs/<sha[0:2]>/<sha>).
    const blob = path.join(service.dataDir, 'blobs', lastSha256.slice(0, 2), lastSha256);
    if (fs.statSync(blob).size !== sizes.size) throw new Error(`the blob ${blob} is not the uploaded file`);
    const get = async (url: string, headers?: Record<string, string>) => {
      const bytes = await download(url, headers);
      if (bytes !== sizes.size) throw new Error(`GET ${url}: ${bytes} bytes, expected ${sizes.size}`);
    };
    const bareUrl = `${bare.api.replace(/\/api\/v1$/, '')}/?path=${encodeURIComponent(blob)}`;
    const downloads = await alternate(
      sizes.rounds,
      sizes.size,
      () => timed(() => get(bareUrl)),
      () => timed(() => get(`${service.api}/file/${lastFileId}/download`, { 'Girder-Token': admin.token })),
    );
    return [
      row(
        `POST /file + /file/chunk (${mib} in ${sizes.chunk / MiB} MiB chunks, fs store)`,
        'dd conv=fsync + one sha256 (same bytes, same disk)',
        0.9,
        upload,
      ),
      row(`GET /file/:id/download (${mib}, fs store)`, 'bare node:http streaming the blob file', 0.9, downloads),
    ];
  } finally {
    await bare.stop();
    await service.remove();
  }
};

export default bench;
