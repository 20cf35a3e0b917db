/**
 * A chunked upload into an S3 assetstore (issue 31, build item 6) against the AWS SDK's own multipart upload of the
 * same file to the same server, in alternating pairs in the same run (medians, and the spread of the pairs' ratios).
 *
 * The server is s3rver (multipart uploads implemented) in a process of its own, on 127.0.0.1. The service, made to
 * use an S3 assetstore on it through the API (`POST /assetstore`, then current), receives the file as girder_client
 * sends it (`POST /file`, then `POST /file/chunk` per chunk); each chunk goes on as one part of a multipart upload
 * and the last completes it. The baseline is `@aws-sdk/client-s3` in this process doing CreateMultipartUpload,
 * UploadPart per chunk (streamed from the file) and CompleteMultipartUpload, with the client options the service
 * uses (path-style, checksums only where required).
 *
 *   full:  1 GiB in 64 MiB chunks, 3 pairs      quick: 24 MiB in 8 MiB chunks, 3 pairs
 *   npm run bench -- s3Upload [--quick]
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Api } from './lib/api';
import type { Benchmark } from './lib/benchRow';
import { GiB, MiB, alternate, freshen, summarize, timed, uploadInChunks, writeRandomFile } from './lib/fileTransfer';
import { startServer, startService } from './lib/serverProcess';

const FULL = { size: GiB, chunk: 64 * MiB, rounds: 3 };
const QUICK = { size: 24 * MiB, chunk: 8 * MiB, rounds: 3 };
const BUCKET = 'bench';
const GOAL = 0.8;

/** The SDK's multipart upload of `file` under `key`, one part per chunk, each streamed from the file. */
async function sdkMultipartUpload(client: S3Client, file: string, key: string, chunk: number): Promise<void> {
  const size = fs.statSync(file).size;
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: key }));
  const parts: { PartNumber: number; ETag: string }[] = [];
  for (let offset = 0; offset < size; offset += chunk) {
    const length = Math.min(chunk, size - offset);
    const PartNumber = parts.length + 1;
    const sent = await client.send(
      new UploadPartCommand({
        Bucket: BUCKET,
        Key: key,
        UploadId,
        PartNumber,
        ContentLength: length,
        Body: fs.createReadStream(file, { start: offset, end: offset + length - 1, highWaterMark: MiB }),
      }),
    );
    parts.push({ PartNumber, ETag: sent.ETag ?? '' });
  }
  await client.send(
    new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key: key, UploadId, MultipartUpload: { Parts: parts } }),
  );
}

const bench: Benchmark = async ({ quick }) => {
  const sizes = quick ? QUICK : FULL;
  const service = await startService();
  const s3Dir = fs.mkdtempSync(path.join(service.dataDir, 's3rver-'));
  const s3 = await startServer(path.join(__dirname, 'lib', 'serveS3.ts'), { S3_DIR: s3Dir });
  const endpoint = new URL(s3.api).origin;
  const client = new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  try {
    const api = new Api(service.api);
    const admin = await api.registerAsOwner('bench');
    const store = { name: 'S3', bucket: BUCKET, prefix: 'service', accessKeyId: 'S3RVER', service: endpoint };
    const created = await api.ok<{ _id: string }>('POST', '/assetstore', { ...store, type: 2, secret: 'S3RVER' });
    await api.ok('PUT', `/assetstore/${created._id}`, { ...store, current: 'true' });
    const folderId = admin.publicFolderId;
    const source = path.join(service.dataDir, 'bench-source.bin');
    writeRandomFile(source, sizes.size);
    const target = { api: service.api, token: admin.token };
    const pairs = await alternate(
      sizes.rounds,
      sizes.size,
      (round) => {
        freshen(source, round);
        return timed(() => sdkMultipartUpload(client, source, `sdk/upload-${round}.bin`, sizes.chunk));
      },
      (round) => timed(() => uploadInChunks(target, folderId, source, `upload-${round}.bin`, sizes.chunk)),
    );
    const { value, baseline, ratio, ratios } = summarize(pairs);
    return [
      {
        measure: `POST /file + /file/chunk into an S3 assetstore (${sizes.size / MiB} MiB in ${sizes.chunk / MiB} MiB chunks, s3rver)`,
        value,
        unit: 'MiB/s',
        baselineName: 'AWS SDK multipart upload (client-s3, same parts, same server)',
        baseline,
        ratio,
        goal: `≥ ${GOAL}× AWS SDK multipart upload`,
        met: ratio >= GOAL,
        spread: { min: Math.min(...ratios), max: Math.max(...ratios), pairs: ratios.length },
      },
    ];
  } finally {
    client.destroy();
    await s3.stop();
    await service.remove();
  }
};

export default bench;
