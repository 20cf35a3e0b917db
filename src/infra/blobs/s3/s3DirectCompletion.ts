import { CompleteMultipartUploadCommand, HeadObjectCommand, ListPartsCommand } from '@aws-sdk/client-s3';
import { RestError } from '../../../domain/errors';
import { isNotFound, type Bucket } from './s3Client';

/**
 * Completes a client's direct multipart upload from the parts the bucket holds (ListParts, then
 * CompleteMultipartUpload, as Girder 5's finalizeUpload), after checking they add up to `size`.
 */
export async function completeDirectUpload(
  { client, bucket }: Bucket,
  key: string,
  s3UploadId: string,
  size: number,
): Promise<void> {
  const parts: { PartNumber: number; ETag: string }[] = [];
  let received = 0;
  let marker: string | undefined;
  do {
    const page = await client
      .send(new ListPartsCommand({ Bucket: bucket, Key: key, UploadId: s3UploadId, PartNumberMarker: marker }))
      .catch((error: unknown) => {
        if (isNotFound(error)) return null;
        throw error;
      });
    // No such upload: completed by an earlier call whose answer was lost (its object is there), or never begun.
    if (page === null) return checkDirectObject({ client, bucket }, key, size);
    for (const part of page.Parts ?? []) {
      parts.push({ PartNumber: part.PartNumber ?? 0, ETag: part.ETag ?? '' });
      received += part.Size ?? 0;
    }
    marker = page.IsTruncated ? page.NextPartNumberMarker : undefined;
  } while (marker !== undefined);
  // Checked before completing: the client may still send a missing part and ask again.
  if (received !== size)
    throw new RestError(`Server has only received ${received} bytes, but the file should be ${size} bytes.`);
  await client.send(
    new CompleteMultipartUploadCommand({
      Bucket: bucket,
      Key: key,
      UploadId: s3UploadId,
      MultipartUpload: { Parts: parts },
    }),
  );
}

/** A direct upload's object must be there with `size` bytes (Girder's completion message otherwise). */
export async function checkDirectObject({ client, bucket }: Bucket, key: string, size: number): Promise<void> {
  let received = 0;
  try {
    const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    received = head.ContentLength ?? 0;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  if (received !== size)
    throw new RestError(`Server has only received ${received} bytes, but the file should be ${size} bytes.`);
}
