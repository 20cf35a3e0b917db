import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  UploadPartCopyCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import type { StoreUpload } from '../../../ports/blobStore';
import type { Bucket } from './s3Client';

/** The largest object CopyObject copies in one request; larger ones are copied part by part (UploadPartCopy). */
const SINGLE_COPY_MAX = 5 * 1024 ** 3;
const COPY_PART_BYTES = 512 * 1024 * 1024;

/**
 * A copy inside the bucket: one request up to 5 GiB, else part by part (UploadPartCopy); a failed part copy aborts its
 * multipart upload through `abort`.
 */
export async function copyInBucket(
  { client, bucket }: Bucket,
  from: string,
  to: string,
  size: number,
  abort: (upload: StoreUpload) => Promise<void>,
): Promise<void> {
  const CopySource = encodeURI(`${bucket}/${from}`);
  if (size <= SINGLE_COPY_MAX) {
    await client.send(new CopyObjectCommand({ Bucket: bucket, Key: to, CopySource }));
    return;
  }
  const created = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: to }));
  const UploadId = created.UploadId ?? '';
  const parts: CompletedPart[] = [];
  try {
    for (let start = 0; start < size; start += COPY_PART_BYTES) {
      const PartNumber = parts.length + 1;
      const end = Math.min(start + COPY_PART_BYTES, size) - 1;
      const copied = await client.send(
        new UploadPartCopyCommand({
          Bucket: bucket,
          Key: to,
          UploadId,
          PartNumber,
          CopySource,
          CopySourceRange: `bytes=${start}-${end}`,
        }),
      );
      parts.push({ PartNumber, ETag: copied.CopyPartResult?.ETag ?? '' });
    }
    await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: to,
        UploadId,
        MultipartUpload: { Parts: parts },
      }),
    );
  } catch (error) {
    await abort({ key: to, uploadId: UploadId });
    throw error;
  }
}
