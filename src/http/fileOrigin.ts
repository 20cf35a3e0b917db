import crypto from 'node:crypto';
import type { Request } from 'express';
import type { Config } from '../config';
import type { Services } from '../services';
import type { FileDoc } from '../ports/readModel';
import { AccessDeniedError } from '../domain/errors';
import { AccessLevel } from '../domain/access';
import { loadModelAt } from '../queries/models';
import { userById } from '../queries/userQueries';
import { viewerOf } from './auth';
import { API_ROOT } from './apiRequests';

/**
 * The separate origin for file bytes (FILE_ORIGIN; docs/security.md, "The file origin"), as cloud drives serve files
 * from a "usercontent" host: whatever a file does in a browser, it does on an origin that holds no session.
 *
 * - On the service's own host, a file download is checked as always, then answered `307` to the same download on
 *   the file origin, with a signed link instead of the caller's token: `expires` (unix seconds) and `signature`, an
 *   HMAC of the file, the user and the expiry under FILE_URL_SECRET. A link a file's script could read from its own
 *   address opens that file, for that user, for an hour; never a session.
 * - On the file origin only `GET|HEAD /api/v1/file/:id/download[/:name]` is answered (everything else is 404), and a
 *   signed link is checked again at each use: the user must still exist, be enabled and read the file.
 */

/** How long a signed link opens its file (a video player re-requests ranges with the same link while it plays). */
const SIGNED_LINK_LIFETIME_SECONDS = 3600;

export interface FileOrigin {
  /** `https://files.example.org` */
  origin: string;
  /** `files.example.org` (with the port when it is not the scheme's), as `req.host` reads a request to it. */
  host: string;
  secret: string;
}

const fileOrigins = new WeakMap<Config, FileOrigin | null>();

/** The configured file origin, or undefined (read once per configuration). */
export function fileOriginOf(config: Config): FileOrigin | undefined {
  let known = fileOrigins.get(config);
  if (known === undefined) {
    known =
      config.fileOrigin && config.fileUrlSecret
        ? { origin: config.fileOrigin, host: new URL(config.fileOrigin).host, secret: config.fileUrlSecret }
        : null;
    fileOrigins.set(config, known);
  }
  return known ?? undefined;
}

/** Whether a request was made to the file origin (its Host, or X-Forwarded-Host from a proxy TRUST_PROXY trusts). */
export function onFileOrigin(fileOrigin: FileOrigin, req: Request): boolean {
  return (req.host as string | undefined)?.toLowerCase() === fileOrigin.host;
}

const FILE_DOWNLOAD = new RegExp(`^${API_ROOT}/file/[^/?#]+/download(?:/[^/?#]*)?(?:\\?|$)`);

/** What the file origin answers: a file download, read with GET or HEAD; nothing else. */
export function servedOnFileOrigin(req: Request): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && FILE_DOWNLOAD.test(req.url);
}

function signatureOf(secret: string, fileId: string, userId: string, expires: number): string {
  return crypto.createHmac('sha256', secret).update(`download\n${fileId}\n${userId}\n${expires}`).digest('base64url');
}

/** The part of a download request that travels to the file origin: which bytes, and how the caller asked for them. */
export interface DownloadRequest {
  offset: number;
  endByte?: number;
  disposition: 'attachment' | 'inline';
}

/** The signed link on the file origin to `file`'s bytes for `userId` (empty for an anonymous caller). */
export function signedDownloadUrl(
  fileOrigin: FileOrigin,
  file: FileDoc,
  userId: string,
  download: DownloadRequest,
  nowMs = Date.now(),
): string {
  const expires = Math.floor(nowMs / 1000) + SIGNED_LINK_LIFETIME_SECONDS;
  const query = new URLSearchParams();
  if (userId) query.set('user', userId);
  query.set('expires', String(expires));
  query.set('signature', signatureOf(fileOrigin.secret, file._id, userId, expires));
  if (download.disposition !== 'attachment') query.set('contentDisposition', download.disposition);
  if (download.offset) query.set('offset', String(download.offset));
  if (download.endByte !== undefined) query.set('endByte', String(download.endByte));
  return `${fileOrigin.origin}${API_ROOT}/file/${encodeURIComponent(file._id)}/download?${query.toString()}`;
}

export interface SignedLink {
  user?: string;
  expires?: number;
  signature?: string;
}

const INVALID_LINK = 'Invalid or expired download link.';

/**
 * The file a signed link opens, checked as at signing: the signature matches, it has not expired, and its user
 * (still there, not disabled) may read the file now. Throws `403 Invalid or expired download link.` otherwise.
 */
export async function fileOfSignedLink(
  services: Services,
  fileOrigin: FileOrigin,
  fileId: string,
  link: SignedLink,
  nowMs = Date.now(),
): Promise<FileDoc> {
  const userId = link.user ?? '';
  if (link.expires === undefined || link.signature === undefined) throw new AccessDeniedError(INVALID_LINK);
  const expected = Buffer.from(signatureOf(fileOrigin.secret, fileId, userId, link.expires));
  const given = Buffer.from(link.signature);
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected))
    throw new AccessDeniedError(INVALID_LINK);
  if (link.expires * 1000 < nowMs) throw new AccessDeniedError(INVALID_LINK);
  const user = userId ? await userById(services, userId) : null;
  if (userId && (!user || user.status === 'disabled')) throw new AccessDeniedError(INVALID_LINK);
  return (await loadModelAt(services, 'file', fileId, viewerOf(user), AccessLevel.READ)).file;
}
