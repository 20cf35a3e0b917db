import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { DEFAULT_S3_REGION, type S3Settings } from '../../src/domain/assetstore';

/**
 * An S3-protocol server for tests: a real S3 or MinIO when S3_TEST_URL is set
 * (`http://<accessKeyId>:<secret>@<host>:<port>/<bucket>`, the bucket existing), else s3rver started here on a free
 * port (it implements multipart uploads, ranged GETs, CopyObject and ListObjectsV2, which the S3 store uses; not
 * AbortMultipartUpload, which the store tolerates). `settings(prefix)` are an S3 assetstore's settings on it.
 */
export interface TestS3 {
  settings(prefix: string): S3Settings;
  close(): Promise<void>;
}

const BUCKET = 'folder-service-test';

export async function startTestS3(): Promise<TestS3> {
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
    return { settings, close: () => Promise.resolve() };
  }
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  const { port } = await server.run();
  return {
    settings: (prefix) => ({
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
    }),
    async close() {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
