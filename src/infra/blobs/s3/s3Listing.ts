import { ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { ImportListingPage } from '../../../ports/blobStore';
import type { Bucket } from './s3Client';

/**
 * Girder's S3 importData listing: the objects directly under `prefix` and the prefixes below it, page by page. Keys
 * in `ownAreas` (the store's blobs, temporary and upload objects) are left out: files imported from there would
 * reference bytes the sweep may remove.
 */
export async function* importListing(
  { client, bucket }: Bucket,
  prefix: string,
  ownAreas: string[],
): AsyncGenerator<ImportListingPage> {
  let ContinuationToken: string | undefined;
  const foreign = (key: string) => !ownAreas.some((area) => key.startsWith(area));
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, Delimiter: '/', ContinuationToken }),
    );
    yield {
      objects: (page.Contents ?? []).flatMap((o) =>
        o.Key && foreign(o.Key) ? [{ key: o.Key, size: o.Size ?? 0 }] : [],
      ),
      prefixes: (page.CommonPrefixes ?? []).flatMap((p) => (p.Prefix && foreign(p.Prefix) ? [p.Prefix] : [])),
    };
    ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (ContinuationToken);
}

/** Every key under `prefix`, with its last modification time. */
export async function* keysUnder(
  { client, bucket }: Bucket,
  prefix: string,
): AsyncGenerator<{ key: string; modified: number }> {
  let ContinuationToken: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken }));
    for (const object of page.Contents ?? [])
      if (object.Key) yield { key: object.Key, modified: object.LastModified?.getTime() ?? 0 };
    ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (ContinuationToken);
}

/**
 * Every multipart upload in progress under `prefix` (ListMultipartUploads, page by page: S3 answers at most 1,000 and
 * goes on from the last key and upload id it gave), with when it was initiated (epoch ms).
 */
export async function* multipartUploadsUnder(
  { client, bucket }: Bucket,
  prefix: string,
): AsyncGenerator<{ key: string; uploadId: string; initiated: number }> {
  let KeyMarker: string | undefined;
  let UploadIdMarker: string | undefined;
  for (;;) {
    const page = await client.send(
      new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix, KeyMarker, UploadIdMarker }),
    );
    for (const upload of page.Uploads ?? [])
      if (upload.Key && upload.UploadId)
        yield { key: upload.Key, uploadId: upload.UploadId, initiated: upload.Initiated?.getTime() ?? 0 };
    // A truncated page always names where the next begins; a server that does not would repeat this page forever.
    if (!page.IsTruncated || !page.NextKeyMarker) return;
    KeyMarker = page.NextKeyMarker;
    UploadIdMarker = page.NextUploadIdMarker;
  }
}
