import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { DEFAULT_S3_REGION, type S3Settings } from '../../src/domain/assetstore';

/**
 * An S3-protocol server for tests: a real S3 or MinIO when S3_TEST_URL is set
 * (`http://<accessKeyId>:<secret>@<host>:<port>/<bucket>`, the bucket existing), else s3rver started here on a free
 * port (it implements multipart uploads, ranged GETs, CopyObject, ListObjectsV2 and presigned requests, which the S3
 * store uses; AbortMultipartUpload and ListParts are added here, as S3 has them: s3rver lacks them and ListMultipartUploads).
 * `settings(prefix)` are an S3 assetstore's settings on it.
 */
export interface TestS3 {
  settings(prefix: string): S3Settings;
  /** The keys of multipart uploads in progress under `prefix` (S3's ListMultipartUploads, or s3rver's directory). */
  openMultipartUploads(prefix: string): Promise<string[]>;
  objectExists(key: string): Promise<boolean>;
  /** The bytes of an object, read straight from the bucket. */
  getObject(key: string): Promise<Buffer>;
  /** An object put straight into the bucket (data that exists before the service: an import's source). */
  putObject(key: string, body: Buffer): Promise<void>;
  close(): Promise<void>;
}

function clientOf(settings: S3Settings): S3Client {
  return new S3Client({
    region: settings.region,
    endpoint: settings.service,
    forcePathStyle: true,
    credentials: { accessKeyId: settings.accessKeyId ?? '', secretAccessKey: settings.secret ?? '' },
  });
}

async function objectExists(settings: S3Settings, key: string): Promise<boolean> {
  const client = clientOf(settings);
  try {
    await client.send(new HeadObjectCommand({ Bucket: settings.bucket, Key: key }));
    return true;
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
    throw error;
  } finally {
    client.destroy();
  }
}

async function getObject(settings: S3Settings, key: string): Promise<Buffer> {
  const client = clientOf(settings);
  try {
    const got = await client.send(new GetObjectCommand({ Bucket: settings.bucket, Key: key }));
    return Buffer.from(await got.Body!.transformToByteArray());
  } finally {
    client.destroy();
  }
}

async function putObject(settings: S3Settings, key: string, body: Buffer): Promise<void> {
  const client = clientOf(settings);
  try {
    await client.send(new PutObjectCommand({ Bucket: settings.bucket, Key: key, Body: body }));
  } finally {
    client.destroy();
  }
}

/** s3rver's own record of its multipart uploads in progress: one directory each, holding the key. */
interface S3rverInternals {
  store: { getResourcePath(bucket: string, key: string | undefined, resource: string): string };
  middleware: ((ctx: S3rverContext, next: () => Promise<void>) => Promise<void>)[];
}
interface S3rverContext {
  method: string;
  query: Record<string, unknown>;
  status: number;
  body: unknown;
  type?: string;
}

const BUCKET = 'folder-service-test';

export interface TestS3Options {
  /**
   * A web origin the bucket lets browsers send requests from (S3's bucket CORS configuration: the methods and headers
   * of the web client's direct uploads, and ETag readable). On S3_TEST_URL the bucket's own configuration applies.
   */
  corsOrigin?: string;
}

/** A bucket CORS configuration (PutBucketCors's XML) for the web client's direct uploads from `origin`. */
function corsConfiguration(origin: string): string {
  return `<CORSConfiguration><CORSRule><AllowedOrigin>${origin}</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedMethod>PUT</AllowedMethod><AllowedMethod>POST</AllowedMethod><AllowedHeader>*</AllowedHeader><ExposeHeader>ETag</ExposeHeader></CORSRule></CORSConfiguration>`;
}

export async function startTestS3(options: TestS3Options = {}): Promise<TestS3> {
  const url = process.env.S3_TEST_URL;
  if (url) {
    const parsed = new URL(url);
    const settings = (prefix: string): S3Settings => ({
      type: 2,
      bucket: parsed.pathname.replace(/^\/+|\/+$/g, ''),
      prefix,
      accessKeyId: decodeURIComponent(parsed.username),
      secret: decodeURIComponent(parsed.password),
      service: `${parsed.protocol}//${parsed.host}`,
      readOnly: false,
      region: DEFAULT_S3_REGION,
      inferCredentials: false,
      serverSideEncryption: false,
      allowS3AcceleratedTransfer: false,
    });
    return {
      settings,
      async openMultipartUploads(prefix) {
        const client = clientOf(settings(prefix));
        try {
          const listed = await client.send(
            new ListMultipartUploadsCommand({ Bucket: settings(prefix).bucket, Prefix: prefix }),
          );
          return (listed.Uploads ?? []).map((upload) => upload.Key ?? '');
        } finally {
          client.destroy();
        }
      },
      objectExists: (key) => objectExists(settings(''), key),
      getObject: (key) => getObject(settings(''), key),
      putObject: (key, body) => putObject(settings(''), key, body),
      close: () => Promise.resolve(),
    };
  }
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: BUCKET, configs: options.corsOrigin ? [corsConfiguration(options.corsOrigin)] : [] }],
  });
  const internals = server as unknown as S3rverInternals;
  const uploadsDir = () => internals.store.getResourcePath(BUCKET, undefined, 'uploads');
  // AbortMultipartUpload (DELETE <key>?uploadId=…), which s3rver lacks: the upload's parts go, as S3 drops them.
  internals.middleware.unshift(async (ctx, next) => {
    const uploadId = ctx.query.uploadId;
    if (ctx.method !== 'DELETE' || typeof uploadId !== 'string' || !/^[0-9a-f]+$/.test(uploadId)) return next();
    const dir = path.join(uploadsDir(), uploadId);
    if (!fs.existsSync(dir)) {
      ctx.status = 404;
      ctx.body = '<Error><Code>NoSuchUpload</Code></Error>';
      return;
    }
    fs.rmSync(dir, { recursive: true, force: true });
    ctx.status = 204;
    ctx.body = '';
  });
  // ListParts (GET <key>?uploadId=…), which s3rver lacks too: the parts s3rver keeps as files `<n>` with `<n>.md5`.
  internals.middleware.unshift(async (ctx, next) => {
    const uploadId = ctx.query.uploadId;
    if (ctx.method !== 'GET' || typeof uploadId !== 'string' || !/^[0-9a-f]+$/.test(uploadId)) return next();
    const dir = path.join(uploadsDir(), uploadId);
    if (!fs.existsSync(dir)) {
      ctx.status = 404;
      ctx.body = '<Error><Code>NoSuchUpload</Code></Error>';
      return;
    }
    const numbers = fs
      .readdirSync(dir)
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .sort((a, b) => a - b);
    const parts = numbers.map((n) => {
      const md5 = fs.readFileSync(path.join(dir, `${n}.md5`), 'utf8');
      const size = fs.statSync(path.join(dir, String(n))).size;
      return `<Part><PartNumber>${n}</PartNumber><ETag>&quot;${md5}&quot;</ETag><Size>${size}</Size></Part>`;
    });
    ctx.status = 200;
    ctx.type = 'application/xml';
    ctx.body =
      '<?xml version="1.0" encoding="UTF-8"?><ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
      `<UploadId>${uploadId}</UploadId><IsTruncated>false</IsTruncated>${parts.join('')}</ListPartsResult>`;
  });
  const { port } = await server.run();
  const settingsAt = (prefix: string): S3Settings => ({
    type: 2,
    bucket: BUCKET,
    prefix,
    // s3rver's built-in credentials.
    accessKeyId: 'S3RVER',
    secret: 'S3RVER',
    service: `http://127.0.0.1:${port}`,
    readOnly: false,
    region: DEFAULT_S3_REGION,
    inferCredentials: false,
    serverSideEncryption: false,
    allowS3AcceleratedTransfer: false,
  });
  return {
    settings: settingsAt,
    async openMultipartUploads(prefix) {
      const dirs = fs.existsSync(uploadsDir()) ? fs.readdirSync(uploadsDir()) : [];
      return dirs
        .map((id) => fs.readFileSync(path.join(uploadsDir(), id, 'key'), 'utf8'))
        .filter((key) => key.startsWith(prefix));
    },
    objectExists: (key) => objectExists(settingsAt(''), key),
    getObject: (key) => getObject(settingsAt(''), key),
    putObject: (key, body) => putObject(settingsAt(''), key, body),
    async close() {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
