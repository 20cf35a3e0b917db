import {
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ClientRequest, DirectUploadStart } from '../../../ports/blobStore';

/**
 * Presigned requests (SigV4 in the query string) that let a client talk to the bucket itself, as Girder's S3 adapter
 * hands them out: the web client's direct upload (`s3` in the upload answer) and a download's redirect.
 *
 * Only `host` and the headers listed in a request's `headers` are signed as headers: the client sends exactly those.
 * The uploader's id goes as object metadata hoisted into the query string (signed there), so the client sends no
 * `x-amz-*` header that the signature would not cover.
 */

/** How long a presigned request stays valid (boto's default, which Girder keeps). */
const EXPIRES_IN_S = 3600;

export interface PresignTarget {
  client: S3Client;
  bucket: string;
  key: string;
}

/** The first request of a direct upload: one PUT of the whole object, or the start of a multipart upload. */
export async function presignUploadStart(
  target: PresignTarget,
  upload: { chunked: boolean; mimeType: string; contentDisposition: string; userId: string },
): Promise<DirectUploadStart['request']> {
  const { client, bucket, key } = target;
  const common = {
    Bucket: bucket,
    Key: key,
    ContentType: upload.mimeType,
    ContentDisposition: upload.contentDisposition,
    Metadata: { 'uploader-id': upload.userId },
  };
  const command = upload.chunked ? new CreateMultipartUploadCommand(common) : new PutObjectCommand(common);
  return {
    method: upload.chunked ? 'POST' : 'PUT',
    url: await getSignedUrl(client, command, { expiresIn: EXPIRES_IN_S }),
    headers: { 'Content-Type': upload.mimeType, 'Content-Disposition': upload.contentDisposition },
  };
}

/** One part of a direct multipart upload (Girder's `_clientUploadChunk`). */
export async function presignPart(
  target: PresignTarget,
  part: { s3UploadId: string; partNumber: number; length: number },
): Promise<ClientRequest> {
  const command = new UploadPartCommand({
    Bucket: target.bucket,
    Key: target.key,
    UploadId: part.s3UploadId,
    PartNumber: part.partNumber,
    ContentLength: part.length,
  });
  return { method: 'PUT', url: await getSignedUrl(target.client, command, { expiresIn: EXPIRES_IN_S }) };
}

/**
 * A download's redirect: the object with the answer's Content-Type and Content-Disposition (blobs are shared by
 * files of any name, so the object's own headers say nothing about this file).
 */
export async function presignDownload(
  target: PresignTarget,
  headers: { contentType: string; contentDisposition: string },
): Promise<string> {
  const command = new GetObjectCommand({
    Bucket: target.bucket,
    Key: target.key,
    ResponseContentType: headers.contentType,
    ResponseContentDisposition: headers.contentDisposition,
  });
  return getSignedUrl(target.client, command, { expiresIn: EXPIRES_IN_S });
}
