import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DEFAULT_S3_REGION, type S3Settings } from '../../../domain/assetstore';
import { ValidationError } from '../../../domain/errors';

/** A bucket as the store's helpers reach it. */
export interface Bucket {
  client: S3Client;
  bucket: string;
}

/** An S3 client for an assetstore's settings (Girder's makeBotoConnectParams). */
export function s3ClientFor(settings: S3Settings): S3Client {
  const service = settings.service;
  const endpoint = service === '' ? undefined : /^https?:\/\//.test(service) ? service : `https://${service}`;
  return new S3Client({
    // An empty region (what the web client's form sends when left blank) is stored as given and means the default.
    region: settings.region || DEFAULT_S3_REGION,
    // Checksums only where S3 requires them: a streamed part then goes as plain bytes, not in the aws-chunked
    // encoding with a trailing checksum that many S3-compatible servers do not decode (they would store the framing).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    ...(!settings.inferCredentials && settings.accessKeyId !== null && settings.secret !== null
      ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secret } }
      : {}),
  });
}

export const isNotFound = (error: unknown) => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  return e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
};

/** `prefix` as the start of keys: empty, or ending in one `/`. */
export const keyPrefix = (prefix: string) => (prefix === '' ? '' : `${prefix}/`);

/**
 * @lazyLoaded required by assetstoreAdapters.ts only when an S3 assetstore is made or changed
 *
 * Girder's S3 validateInfo: a read-only store's bucket (and prefix) can be listed, any other can be written (an empty
 * `girder_test` object is put and deleted), with Girder's messages.
 */
export async function probeS3(settings: S3Settings): Promise<void> {
  const client = s3ClientFor(settings);
  try {
    if (settings.readOnly) {
      try {
        await client.send(
          new ListObjectsV2Command({ Bucket: settings.bucket, Prefix: settings.prefix, Delimiter: '/', MaxKeys: 1 }),
        );
      } catch {
        throw new ValidationError(`Unable to connect to bucket "${settings.bucket}".`, 'bucket');
      }
      return;
    }
    try {
      const Key = [settings.prefix, 'girder_test'].filter(Boolean).join('/');
      await client.send(new PutObjectCommand({ Bucket: settings.bucket, Key, Body: Buffer.alloc(0) }));
      await client.send(new DeleteObjectCommand({ Bucket: settings.bucket, Key }));
    } catch {
      throw new ValidationError(`Unable to write into bucket "${settings.bucket}".`, 'bucket');
    }
  } finally {
    client.destroy();
  }
}
