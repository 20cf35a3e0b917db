import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import {
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  type ListMultipartUploadsCommandOutput,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { DEFAULT_S3_REGION, type S3Settings } from '../../src/domain/assetstore';

/**
 * An S3-protocol server for tests: a real S3 or MinIO when S3_TEST_URL is set
 * (`http://<accessKeyId>:<secret>@<host>:<port>/<bucket>`, the bucket existing), else s3rver started here on a free
 * port (it implements multipart uploads, ranged GETs, CopyObject, ListObjectsV2 and presigned requests, which the S3
 * store uses; AbortMultipartUpload, ListParts and ListMultipartUploads are added here, as S3 has them: s3rver lacks
 * them). `settings(prefix)` are an S3 assetstore's settings on it.
 */
export interface TestS3 {
  settings(prefix: string): S3Settings;
  /** The keys of multipart uploads in progress under `prefix` (S3's ListMultipartUploads, every page). */
  openMultipartUploads(prefix: string): Promise<string[]>;
  /** Starts a multipart upload of `key` straight in the bucket (one a crashed process left); resolves its upload id. */
  startMultipartUpload(key: string): Promise<string>;
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

/** Runs `work` with a client of the bucket, destroyed afterwards (its sockets would keep jest waiting). */
async function withClient<T>(settings: S3Settings, work: (client: S3Client) => Promise<T>): Promise<T> {
  const client = clientOf(settings);
  try {
    return await work(client);
  } finally {
    client.destroy();
  }
}

function objectExists(settings: S3Settings, key: string): Promise<boolean> {
  return withClient(settings, async (client) => {
    try {
      await client.send(new HeadObjectCommand({ Bucket: settings.bucket, Key: key }));
      return true;
    } catch (error) {
      if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
      throw error;
    }
  });
}

function getObject(settings: S3Settings, key: string): Promise<Buffer> {
  return withClient(settings, async (client) => {
    const got = await client.send(new GetObjectCommand({ Bucket: settings.bucket, Key: key }));
    return Buffer.from(await got.Body!.transformToByteArray());
  });
}

function putObject(settings: S3Settings, key: string, body: Buffer): Promise<void> {
  return withClient(settings, async (client) => {
    await client.send(new PutObjectCommand({ Bucket: settings.bucket, Key: key, Body: body }));
  });
}

function openMultipartUploads(settings: S3Settings, prefix: string): Promise<string[]> {
  return withClient(settings, async (client) => {
    const keys: string[] = [];
    let page: ListMultipartUploadsCommandOutput | undefined;
    do {
      page = await client.send(
        new ListMultipartUploadsCommand({
          Bucket: settings.bucket,
          Prefix: prefix,
          KeyMarker: page?.NextKeyMarker,
          UploadIdMarker: page?.NextUploadIdMarker,
        }),
      );
      keys.push(...(page.Uploads ?? []).map((upload) => upload.Key ?? ''));
    } while (page.IsTruncated);
    return keys;
  });
}

function startMultipartUpload(settings: S3Settings, key: string): Promise<string> {
  return withClient(settings, async (client) => {
    const created = await client.send(new CreateMultipartUploadCommand({ Bucket: settings.bucket, Key: key }));
    return created.UploadId ?? '';
  });
}

/** S3's XML escaping of a text node. */
const xmlText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** S3's default and largest page of ListMultipartUploads. */
const MAX_UPLOADS = 1000;

/**
 * ListMultipartUploads (GET /<bucket>?uploads), answered from s3rver's directory of uploads as S3 answers it: those
 * whose key starts with `prefix`, by key, then (one key's several uploads) by upload id; after `key-marker` (and, for
 * that key itself, after `upload-id-marker` when given); at most `max-uploads` (1,000 at most), `IsTruncated` with the
 * next markers when more remain. `Initiated` is the time s3rver recorded the upload's key.
 */
function listMultipartUploads(uploadsDir: string, query: Record<string, unknown>, pageLimit: number): string {
  const text = (name: string) => (typeof query[name] === 'string' ? query[name] : '');
  const prefix = text('prefix');
  const keyMarker = text('key-marker');
  const uploadIdMarker = text('upload-id-marker');
  const max = Math.min(Number(text('max-uploads') || MAX_UPLOADS), pageLimit);
  const all = (fs.existsSync(uploadsDir) ? fs.readdirSync(uploadsDir) : []).map((uploadId) => {
    const keyFile = path.join(uploadsDir, uploadId, 'key');
    return { uploadId, key: fs.readFileSync(keyFile, 'utf8'), initiated: fs.statSync(keyFile).mtime };
  });
  const after = (u: { key: string; uploadId: string }) =>
    keyMarker === '' ||
    u.key > keyMarker ||
    (u.key === keyMarker && uploadIdMarker !== '' && u.uploadId > uploadIdMarker);
  const matching = all
    .filter((u) => u.key.startsWith(prefix) && after(u))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.uploadId < b.uploadId ? -1 : 1));
  const page = matching.slice(0, max);
  const truncated = matching.length > page.length;
  const last = page.at(-1);
  const uploads = page.map(
    (u) =>
      `<Upload><Key>${xmlText(u.key)}</Key><UploadId>${u.uploadId}</UploadId>` +
      `<Initiator><ID>S3RVER</ID><DisplayName>S3RVER</DisplayName></Initiator>` +
      `<Owner><ID>S3RVER</ID><DisplayName>S3RVER</DisplayName></Owner>` +
      `<StorageClass>STANDARD</StorageClass><Initiated>${u.initiated.toISOString()}</Initiated></Upload>`,
  );
  return (
    '<?xml version="1.0" encoding="UTF-8"?><ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
    `<Bucket>${BUCKET}</Bucket><KeyMarker>${xmlText(keyMarker)}</KeyMarker><UploadIdMarker>${xmlText(uploadIdMarker)}</UploadIdMarker>` +
    (truncated && last
      ? `<NextKeyMarker>${xmlText(last.key)}</NextKeyMarker><NextUploadIdMarker>${last.uploadId}</NextUploadIdMarker>`
      : '') +
    `<Prefix>${xmlText(prefix)}</Prefix><MaxUploads>${max}</MaxUploads><IsTruncated>${truncated}</IsTruncated>` +
    `${uploads.join('')}</ListMultipartUploadsResult>`
  );
}

/** s3rver's own record of its multipart uploads in progress: one directory each, holding the key. */
interface S3rverInternals {
  store: { getResourcePath(bucket: string, key: string | undefined, resource: string): string };
  middleware: ((ctx: S3rverContext, next: () => Promise<void>) => Promise<void>)[];
}
interface S3rverContext {
  method: string;
  path: string;
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
  /**
   * The most uploads one ListMultipartUploads page holds (S3: 1,000), so that a few uploads span pages and a client's
   * paging is exercised. s3rver only: a real S3 pages at 1,000.
   */
  uploadsPerPage?: number;
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
      openMultipartUploads: (prefix) => openMultipartUploads(settings(''), prefix),
      startMultipartUpload: (key) => startMultipartUpload(settings(''), key),
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
  // ListMultipartUploads (GET /<bucket>?uploads), which s3rver refuses as not implemented.
  internals.middleware.unshift(async (ctx, next) => {
    if (ctx.method !== 'GET' || !('uploads' in ctx.query) || ctx.path.replace(/\/$/, '') !== `/${BUCKET}`)
      return next();
    ctx.type = 'application/xml';
    const maxUploads = ctx.query['max-uploads'];
    if (maxUploads !== undefined && (typeof maxUploads !== 'string' || !/^\d+$/.test(maxUploads))) {
      ctx.status = 400;
      ctx.body =
        '<Error><Code>InvalidArgument</Code><Message>Provided max-uploads not an integer or within integer range</Message></Error>';
      return;
    }
    ctx.status = 200;
    ctx.body = listMultipartUploads(uploadsDir(), ctx.query, options.uploadsPerPage ?? MAX_UPLOADS);
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
    openMultipartUploads: (prefix) => openMultipartUploads(settingsAt(''), prefix),
    startMultipartUpload: (key) => startMultipartUpload(settingsAt(''), key),
    objectExists: (key) => objectExists(settingsAt(''), key),
    getObject: (key) => getObject(settingsAt(''), key),
    putObject: (key, body) => putObject(settingsAt(''), key, body),
    async close() {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
