import type { RouteDef } from '../routeTable';
import { model } from '../modelParams';
import { RESPONSE_SENT, route } from '../routeTable';
import { param } from '../params';
import { RestError } from '../../domain/errors';
import { Scope } from '../../domain/scopes';
import { AccessLevel } from '../../domain/access';
import { HASHSUM_ALGORITHMS, type HashsumAlgorithm } from '../../domain/contentHashes';
import { fileView } from '../../queries/itemQueries';
import { readableWithSha512 } from '../../queries/fileQueries';
import { computeFileHashes } from '../../commands/fileHashCommands';
import { withProgress } from '../../bus/progress';
import { contentDisposition } from '../contentDisposition';
import { downloadParams, sendFile } from './file';
import { signedInUser } from '../principal';

/**
 * Girder's `hashsum_download` plugin (3.2.15): files by the SHA-512 of their bytes. Every upload records it (taken
 * while the bytes stream in: src/infra/blobs/hashingTap.ts); `POST /file/:id/hashsum` adds it to files recorded before
 * hashes were kept.
 * `:algo` and `:hash` are case-insensitive (lower-cased, as the plugin declares them).
 */

// The plugin's `.param('algo', …, lower=True, enum=SUPPORTED_ALGORITHMS)`: its message is the enum's.
const algoParam = param.enum('algo', HASHSUM_ALGORITHMS, { required: true });
const algorithmOf = (raw: string | undefined): HashsumAlgorithm => algoParam.parse((raw ?? '').toLowerCase());

export const fileHashsumRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: 'hashsum/:algo/:hash',
    summary: 'Return a list of files matching a hashsum (those the caller may read).',
    access: 'public',
    scope: [Scope.DATA_READ],
    cookie: true,
    params: [],
    async handler({ path, services, principal }) {
      algorithmOf(path.algo);
      return (await readableWithSha512(services, path.hash, principal.viewer)).map((file) =>
        fileView(file, principal.viewer),
      );
    },
  }),
  route({
    method: 'GET',
    path: 'hashsum/:algo/:hash/download',
    summary: 'Download a file by its hashsum (the first by id among those the caller may read).',
    access: 'public',
    scope: [Scope.DATA_READ],
    cookie: true,
    produces: 'application/octet-stream',
    params: downloadParams,
    async handler({ path, params, services, principal, req, res }) {
      algorithmOf(path.algo);
      const file = (await readableWithSha512(services, path.hash, principal.viewer, 1)).at(0);
      if (!file) throw new RestError('File not found.', 404);
      return sendFile(services, req, res, file, principal, {
        offset: params.offset ?? 0,
        endByte: params.endByte,
        disposition: params.contentDisposition ?? 'attachment',
      });
    },
  }),
  route({
    method: 'GET',
    path: ':id/hashsum_file/:algo',
    summary: "Download the hashsum key file for a given file (for CMake's ExternalData module).",
    access: 'public',
    scope: [Scope.DATA_READ],
    cookie: true,
    produces: 'text/plain',
    params: [],
    // The plugin loads the file (READ) before it looks at the algorithm.
    models: { target: model.path('file', AccessLevel.READ) },
    handler({ path, models: { target }, res }) {
      const { file } = target;
      const algo = algorithmOf(path.algo);
      const hash = file[algo];
      if (hash === undefined) throw new RestError(`This file does not have the ${algo} hash computed.`);
      const body = `${hash}\n`;
      res.status(200);
      res.setHeader('Content-Type', 'text/plain');
      res.setHeader('Content-Length', String(Buffer.byteLength(body)));
      res.setHeader('Content-Disposition', contentDisposition(`${file.name}.${algo}`, 'attachment'));
      res.end(body);
      return RESPONSE_SENT;
    },
  }),
  route({
    method: 'POST',
    path: ':id/hashsum',
    summary:
      'Manually compute the checksum values for a given file: answers those it computed, null when the file has them.',
    access: 'user',
    scope: [Scope.DATA_WRITE],
    params: [param.flag('progress', false, { description: 'Whether to track progress of the operation' })],
    models: { target: model.path('file', AccessLevel.WRITE) },
    async handler({ params, models: { target }, services, principal, meta }) {
      const { file } = target;
      return withProgress(
        services,
        {
          on: params.progress,
          userId: signedInUser(principal)._id,
          title: `Computing hash: ${file.name}`,
          total: file.size,
        },
        (progress) => computeFileHashes(services, file, progress, meta),
      );
    },
  }),
];
