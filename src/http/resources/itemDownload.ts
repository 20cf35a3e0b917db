import type { RouteDef } from '../routeTable';
import { model } from '../modelParams';
import { route } from '../routeTable';
import { param } from '../params';
import { Scope } from '../../domain/scopes';
import { RestError } from '../../domain/errors';
import { itemZipLayout } from '../../queries/zipLayout';
import { onlyFileOf } from '../../queries/fileQueries';
import { sendZipArchive } from './folderDownload';
import { sendFile } from './file';
import { AccessLevel } from '../../domain/access';

/**
 * `GET /item/:id/download` (Girder's Item.download, which the web client links from item rows): an item with exactly
 * one file sends that file (from `offset`, with the `contentDisposition` asked for); otherwise, or with `format=zip`,
 * a zip of its files under a folder named after the item.
 */
export const itemDownloadRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: ':id/download',
    summary: 'Download the contents of an item.',
    access: 'public',
    scope: [Scope.DATA_READ],
    cookie: true,
    produces: 'application/zip',
    params: [
      param.int('offset', { default: 0, description: 'Byte offset into the file.' }),
      param.string('format', {
        description:
          "If unspecified, items with one file are downloaded as that file, and other items are downloaded as a zip archive. If 'zip', a zip archive is always sent.",
      }),
      param.enum('contentDisposition', ['inline', 'attachment'] as const, {
        default: 'attachment' as const,
        description:
          'Specify the Content-Disposition response header disposition-type value, only applied for single file items.',
      }),
      param.string('extraParameters', {
        description: 'Arbitrary data to send along with the download request, only applied for single file items.',
      }),
    ],
    validate(params) {
      if (params.format !== undefined && params.format !== '' && params.format !== 'zip')
        throw new RestError(`Unsupported format: ${params.format}.`);
    },
    models: { target: model.path('item', AccessLevel.READ) },
    async handler({ params, models: { target }, services, principal, req, res }) {
      const { item } = target;
      const only = await onlyFileOf(services, item);
      if (only && params.format !== 'zip')
        return sendFile(services, req, res, only, principal, {
          offset: params.offset ?? 0,
          disposition: params.contentDisposition ?? 'attachment',
        });
      return sendZipArchive(services, req, res, `${item.name}.zip`, () => itemZipLayout(services, item));
    },
  }),
];
