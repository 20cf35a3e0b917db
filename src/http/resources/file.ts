import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import type { Resource, RouteContext } from '../routeTable';
import { RESPONSE_SENT, route } from '../routeTable';
import { SAFE_INTEGER, param } from '../params';
import type { Services } from '../../services';
import type { FileDoc } from '../../ports/readModel';
import { RestError, ValidationError } from '../../domain/errors';
import { deleteFile, type UploadParent } from '../../commands/fileCommands';
import { cancelUpload, receiveChunk, startContentsUpload, startUpload } from '../../commands/uploadCommands';
import { fileView } from '../../queries/itemQueries';
import { directStart, outcomeView, uploadAnswer } from '../uploadOutcome';
import { signDirectPart } from '../../commands/directUploadCommands';
import { loadModelAt } from '../../queries/models';
import { model } from '../modelParams';
import { downloadHeaders, setDownloadHeaders } from '../downloadHeaders';
import { fileOfSignedLink, fileOriginOf, onFileOrigin, signedDownloadUrl, type DownloadRequest } from '../fileOrigin';
import { refuseContentEncoding } from '../bodyDecoding';
import { Scope } from '../../domain/scopes';
import { AccessLevel } from '../../domain/access';
import { signedInUser, type Principal } from '../principal';
import { bodyStream } from '../bodyRemainder';
import { checkChunkMinimum, checkFirstChunkMinimum } from '../chunkMinimum';
import { fileRecordRoutes } from './fileRecord';
import { fileStoreRoutes } from './fileStore';
import { uploadNow } from '../../queries/uploadQueries';

const FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data'];

/**
 * The request body as upload bytes (Girder's RequestBodyStream): present when the request announces a body
 * (Content-Length > 0, or chunked transfer without a length) that is not a form (forms carry parameters). A body
 * with a Content-Encoding other than identity is a 415.
 */
function rawBody(req: Request): { stream: Readable; length: number | undefined } | undefined {
  const header = req.headers['content-length'];
  const length = header !== undefined ? Number(header) : undefined;
  const announced = length !== undefined ? length > 0 : req.headers['transfer-encoding'] !== undefined;
  if (!announced) return undefined;
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (FORM_TYPES.includes(type)) return undefined;
  // Stored as it arrives: a compressed chunk would be stored compressed (see bodyDecoding.ts).
  refuseContentEncoding(req);
  // A view, not the request itself: a failing destination must not take the connection down (bodyRemainder.ts).
  return { stream: bodyStream(req), length };
}

/**
 * cherrypy's get_ranges: the byte ranges of a `Range: bytes=…` header as [start, end) pairs. `null` when the header
 * is to be ignored (not bytes, malformed), `[]` when no range is satisfiable.
 */
function parseRange(header: string, size: number): [number, number][] | null {
  const match = /^\s*bytes\s*=\s*(.*)$/i.exec(header);
  if (!match) return null;
  const ranges: [number, number][] = [];
  for (const spec of match[1].split(',')) {
    const part = /^\s*(\d*)\s*-\s*(\d*)\s*$/.exec(spec);
    if (!part) return null;
    const [, first, last] = part;
    if (first) {
      const start = Number(first);
      const stop = last ? Number(last) : size - 1;
      if (start >= size) continue;
      if (stop < start) return null;
      ranges.push([start, Math.min(stop + 1, size)]);
    } else {
      if (!last) return null;
      const suffix = Number(last);
      if (suffix === 0) continue;
      ranges.push([Math.max(size - suffix, 0), size]);
    }
  }
  return ranges;
}

// 416 with `Content-Range: bytes */<size>`, as RFC 9110 asks of a range that selects no byte of the file.
function unsatisfiable(res: Response, size: number, why = ''): RestError {
  res.setHeader('Content-Range', `bytes */${size}`);
  return new RestError(`Requested range not satisfiable.${why}`, 416);
}

/**
 * Streams a file (Girder's File.download with the filesystem adapter's headers): `offset`/`endByte` (exclusive) or a
 * `Range` header (which wins; first range only) select bytes; a partial answer is 206 with Content-Range. With a file
 * origin configured, a request on any other host is sent there instead (src/http/fileOrigin.ts). `principal` is the
 * caller the access check let through.
 */
export async function sendFile(
  services: Services,
  req: Request,
  res: Response,
  file: FileDoc,
  principal: Principal,
  opts: DownloadRequest,
): Promise<typeof RESPONSE_SENT> {
  const fileOrigin = fileOriginOf(services.config);
  if (fileOrigin && !onFileOrigin(fileOrigin, req)) {
    res.status(307);
    res.setHeader('Location', signedDownloadUrl(fileOrigin, file, principal.user?._id ?? '', opts));
    res.end();
    return RESPONSE_SENT;
  }
  const size = file.size;
  let start = Math.max(opts.offset, 0);
  let end = opts.endByte === undefined || opts.endByte > size ? size : opts.endByte;
  const rangeHeader = req.get('Range');
  // An offset at or past the end, or an `endByte` at or before `offset`, selects nothing: HTTP's answer to an
  // unsatisfiable range (the Range header wins). Girder would answer 206 with `Content-Range: bytes 0--1/10`. Only an
  // empty file read from its start is an empty 200.
  if (!rangeHeader && end <= start && (size > 0 || start > 0)) {
    const why = start < size ? ` endByte (${end}) must be greater than offset (${start}).` : '';
    throw unsatisfiable(res, size, why);
  }
  let ranged = false;
  if (rangeHeader && size > 0) {
    const ranges = parseRange(rangeHeader, size);
    if (ranges?.length === 0) throw unsatisfiable(res, size);
    if (ranges) {
      [start, end] = ranges[0];
      ranged = true;
    }
  }
  const length = Math.max(end - start, 0);
  const headers = downloadHeaders({
    filename: file.name,
    mimeType: file.mimeType || 'application/octet-stream',
    asked: opts.disposition,
  });
  // Girder's S3 download: the client fetches the bytes from the bucket itself (a Range header goes along with it).
  // Decision: only for the whole file; `offset`/`endByte` (which a redirect cannot carry) are streamed here.
  if (size > 0 && opts.offset === 0 && opts.endByte === undefined) {
    const url = await services.blobs.downloadUrl(file.blobId, {
      contentType: headers['Content-Type'],
      contentDisposition: headers['Content-Disposition'],
    });
    if (url !== null) {
      res.status(303);
      res.setHeader('Location', url);
      res.end();
      return RESPONSE_SENT;
    }
  }
  const body =
    length > 0 && req.method !== 'HEAD' ? await services.blobs.get(file.blobId, { start, end }) : Readable.from([]);
  setDownloadHeaders(res, headers);
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('Content-Length', String(length));
  if ((start > 0 || end < size || ranged) && size > 0) {
    res.setHeader('Content-Range', `bytes ${start}-${end - 1}/${size}`);
    res.status(206);
  } else {
    res.status(200);
  }
  try {
    await pipeline(body, res);
  } catch (error) {
    // The client went away mid-download: nothing to answer any more.
    if (!res.writableEnded && (res.destroyed || req.destroyed)) return RESPONSE_SENT;
    throw error;
  }
  return RESPONSE_SENT;
}

export const downloadParams = [
  param.int('offset', { default: 0, description: 'Start downloading at this offset in bytes within the file.' }),
  param.int('endByte', {
    description:
      'If you only wish to download part of the file, pass this as the index of the last byte to download. Unlike the HTTP Range header, the endByte parameter is non-inclusive.',
  }),
  param.enum('contentDisposition', ['inline', 'attachment'] as const, {
    default: 'attachment' as const,
    description: 'Specify the Content-Disposition response header disposition-type value.',
  }),
  param.string('extraParameters', { description: 'Arbitrary data to send along with the download request.' }),
  param.string('user', { description: 'Signed link on the file origin (FILE_ORIGIN): the user it was signed for.' }),
  param.int('expires', { description: 'Signed link on the file origin: when it expires (unix seconds).' }),
  param.string('signature', { secret: true, description: 'Signed link on the file origin: its signature.' }),
] as const;

/**
 * Both download routes: `:id/download` and `:id/download/:name` (the name is only for the client's benefit). On the
 * file origin, a signed link stands for the access check of the request it was signed for.
 */
const downloadModels = {
  target: model.path('file', AccessLevel.READ, {
    unless: 'signature',
    note: 'with signature, on the file origin: the signed link stands for the check of the request it was signed for',
  }),
};

async function downloadHandler(ctx: RouteContext<typeof downloadParams, typeof downloadModels>) {
  const { path, params, models, services, principal, req, res } = ctx;
  const fileOrigin = fileOriginOf(services.config);
  const signed = fileOrigin && params.signature !== undefined && onFileOrigin(fileOrigin, req);
  const file = signed
    ? await fileOfSignedLink(services, fileOrigin, path.id, params)
    : // A signature anywhere else is no signed link: the declared READ applies.
      (models.target ?? (await loadModelAt(services, 'file', path.id, principal.viewer, AccessLevel.READ))).file;
  return sendFile(services, req, res, file, principal, {
    offset: params.offset ?? 0,
    endByte: params.endByte,
    disposition: params.contentDisposition ?? 'attachment',
  });
}

/**
 * Files (Girder's api/v1/file.py): the upload protocol girder_client speaks (`POST /file`, `POST /file/chunk`,
 * `PUT /file/:id/contents`, `DELETE /file/upload/:id`), file records and downloads. Access is the folder's of the
 * file's item. A chunk that does not end its upload must be at least `core.upload_minimum_chunk_size` (5 MiB by
 * default, as Girder's filesystem assetstore; src/http/chunkMinimum.ts): girder_client sends 64 MiB chunks.
 */
export const fileResource: Resource = {
  name: 'file',
  description: 'Files: the bytes of items, their uploads and downloads.',
  routes: [
    route({
      method: 'POST',
      path: '',
      summary: 'Start a new upload or create an empty file.',
      access: 'user',
      scope: [Scope.DATA_WRITE],
      rawBody: true,
      params: [
        param.enum('parentType', ['folder', 'item'] as const, {
          required: true,
          description: 'Type being uploaded into.',
        }),
        param.requiredString('parentId', { description: 'The ID of the parent.' }),
        param.requiredString('name', { description: 'Name of the file being created.' }),
        param.int('size', {
          required: true,
          range: SAFE_INTEGER,
          description: 'Size in bytes of the file (a negative size is refused by the upload).',
        }),
        param.string('mimeType', {
          default: 'application/octet-stream',
          headerSafe: true,
          description: 'The MIME type of the file (no control characters).',
        }),
        param.string('reference', {
          description: 'If included, this information is passed to the data.process event when the upload is complete.',
        }),
      ],
      models: { into: model.parent<'folder' | 'item'>(AccessLevel.WRITE) },
      async handler(ctx) {
        const { params, models, services, principal, meta, req } = ctx;
        const { into } = models;
        const parent: UploadParent =
          into.type === 'item' ? { type: 'item', item: into.doc.item } : { type: 'folder', folder: into.doc };
        const body = rawBody(req);
        await checkFirstChunkMinimum(services, params.size, body?.length);
        const outcome = await startUpload(
          services,
          {
            parent,
            name: params.name,
            size: params.size,
            mimeType: params.mimeType ?? 'application/octet-stream',
            userId: signedInUser(principal)._id,
            ...(params.reference !== undefined ? { reference: params.reference } : {}),
          },
          body,
          meta,
        );
        return outcomeView(services, outcome, ctx, params.reference);
      },
    }),
    route({
      method: 'POST',
      path: 'chunk',
      summary: 'Upload a chunk of a file (the raw request body).',
      access: 'user',
      scope: [Scope.DATA_WRITE],
      rawBody: true,
      params: [
        param.requiredString('uploadId', { description: 'The ID of the upload record.' }),
        param.int('offset', { required: true, description: 'Offset of the chunk in the file.' }),
        param.string('chunk', {
          description:
            'A direct upload to S3 (the upload answered `behavior: "s3"`): instead of bytes, JSON ' +
            '{"s3UploadId", "partNumber", "contentLength"} asking for the presigned upload of that part.',
        }),
      ],
      async handler(ctx) {
        const { params, services, principal, meta, req } = ctx;
        if (req.is('multipart/form-data'))
          throw new RestError('Send the chunk as the raw request body, not as multipart form data.');
        if (params.chunk !== undefined) {
          const signed = await signDirectPart(
            services,
            {
              uploadId: params.uploadId,
              userId: signedInUser(principal)._id,
              offset: params.offset,
              chunk: params.chunk,
            },
            meta,
          );
          return uploadAnswer(services, signed.state, { ...signed.part, request: signed.request });
        }
        const body = rawBody(req) ?? { stream: Readable.from([]), length: 0 };
        const chunk = { uploadId: params.uploadId, offset: params.offset, userId: signedInUser(principal)._id };
        await checkChunkMinimum(services, chunk, body.length);
        const outcome = await receiveChunk(services, chunk, body, meta);
        const reference =
          outcome.kind === 'file' ? (await uploadNow(services, params.uploadId)).started?.reference : undefined;
        return outcomeView(services, outcome, ctx, reference);
      },
    }),
    route({
      method: 'GET',
      path: 'offset',
      summary: 'Request the offset at which to resume an interrupted upload.',
      access: 'user',
      scope: [Scope.DATA_WRITE],
      params: [param.requiredString('uploadId', { description: 'The ID of the upload record.' })],
      async handler({ params, services }) {
        const state = await uploadNow(services, params.uploadId);
        if (state.status !== 'active') throw new RestError(`Invalid upload id (${params.uploadId}).`);
        // A direct upload (Girder's S3 requestOffset): nothing went through here; a single PUT is signed again.
        const direct = state.received === 0 ? state.started?.direct : undefined;
        if (direct?.chunked)
          throw new ValidationError('You should not call requestOffset on a chunked direct-to-S3 upload.');
        const start = direct ? await directStart(services, state) : null;
        if (start) return { ...start.request, offset: 0 };
        return { offset: state.received };
      },
    }),
    route({
      method: 'DELETE',
      path: 'upload/:id',
      summary: 'Cancel a partially completed upload.',
      access: 'user',
      scope: [Scope.DATA_WRITE],
      params: [],
      async handler({ path, services, principal, meta }) {
        await cancelUpload(
          services,
          { uploadId: path.id, userId: signedInUser(principal)._id, admin: signedInUser(principal).admin },
          meta,
        );
        return { message: 'Upload canceled.' };
      },
    }),
    route({
      method: 'GET',
      path: ':id',
      summary: 'Get a file by ID.',
      access: 'public',
      scope: [Scope.DATA_READ],
      params: [],
      models: { target: model.path('file', AccessLevel.READ) },
      handler: ({ models: { target }, principal }) => fileView(target.file, principal.viewer),
    }),
    route({
      method: 'GET',
      path: ':id/download',
      summary: 'Download a file (accepts the HTTP Range header).',
      access: 'public',
      scope: [Scope.DATA_READ],
      cookie: true,
      produces: 'application/octet-stream',
      params: downloadParams,
      models: downloadModels,
      handler: downloadHandler,
    }),
    route({
      method: 'GET',
      path: ':id/download/:name',
      summary: 'Download a file; the name in the path is ignored (for clients that name downloads after the URL).',
      access: 'public',
      scope: [Scope.DATA_READ],
      cookie: true,
      produces: 'application/octet-stream',
      params: downloadParams,
      models: downloadModels,
      handler: downloadHandler,
    }),
    route({
      method: 'PUT',
      path: ':id/contents',
      summary: 'Change the contents of an existing file (send the chunks as for a new upload).',
      access: 'user',
      scope: [Scope.DATA_WRITE],
      params: [
        param.int('size', {
          required: true,
          range: SAFE_INTEGER,
          description: 'Size in bytes of the new file (a negative size is refused by the upload).',
        }),
        param.string('reference', {
          description: 'If included, this information is passed to the data.process event when the upload is complete.',
        }),
      ],
      models: { target: model.path('file', AccessLevel.WRITE) },
      async handler(ctx) {
        const { params, models, services, principal, meta } = ctx;
        const { file } = models.target;
        const outcome = await startContentsUpload(
          services,
          {
            file,
            size: params.size,
            userId: signedInUser(principal)._id,
            ...(params.reference !== undefined ? { reference: params.reference } : {}),
          },
          meta,
        );
        return outcomeView(services, outcome, ctx, params.reference);
      },
    }),
    route({
      method: 'DELETE',
      path: ':id',
      summary: 'Delete a file by ID.',
      access: 'user',
      scope: [Scope.DATA_WRITE],
      params: [],
      models: { target: model.path('file', AccessLevel.WRITE) },
      async handler({ models: { target }, services, meta }) {
        const { file } = target;
        await deleteFile(services, file, meta);
        return null;
      },
    }),
    ...fileRecordRoutes,
    ...fileStoreRoutes,
  ],
};
