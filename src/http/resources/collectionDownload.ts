import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { param } from '../params';
import { model } from '../modelParams';
import { collectionZipLayout } from '../../queries/zipLayout';
import { Scope } from '../../domain/scopes';
import { AccessLevel } from '../../domain/access';
import { sendZipArchive } from './folderDownload';

/**
 * `GET /collection/:id/download` (Girder's downloadCollection): the collection's readable folders and everything the
 * caller may read under them as a streamed zip archive rooted at `<collection name>/`, files filtered by `mimeFilter`.
 */
export const collectionDownloadRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: ':id/download',
    summary: 'Download an entire collection as a zip archive.',
    access: 'public',
    scope: [Scope.DATA_READ],
    cookie: true,
    produces: 'application/zip',
    params: [param.json('mimeFilter', { shape: 'array', description: 'JSON list of MIME types to include.' })],
    models: { collection: model.path('collection', AccessLevel.READ) },
    handler: ({ params, models: { collection }, services, principal, req, res }) => {
      const mimeFilter = params.mimeFilter as unknown[] | undefined;
      return sendZipArchive(services, req, res, `${collection.name}.zip`, () =>
        collectionZipLayout(services, collection, principal.viewer, mimeFilter ? { mimeFilter } : {}),
      );
    },
  }),
];
