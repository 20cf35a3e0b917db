import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { param } from '../params';
import { model } from '../modelParams';
import { resourceSetZipLayout } from '../../queries/zipLayout';
import { RestError } from '../../domain/errors';
import { Scope } from '../../domain/scopes';
import { AccessLevel } from '../../domain/access';
import { sendZipArchive } from './folderDownload';

/** The kinds of resource Girder can download (the models with a `fileList`). */
const DOWNLOADABLE = ['folder', 'item', 'collection', 'user'];

/**
 * Girder's checks of a download's resource set, in its order: some id is named (`No resources specified.`), then
 * each type is one that holds files and each list is a list of ids (`Invalid resources format.`).
 */
function downloadableSet(value: unknown): Partial<Record<string, string[]>> {
  const set = value as Record<string, unknown>;
  const lists = Object.values(set);
  const count = lists.reduce<number>((n, ids) => n + (Array.isArray(ids) ? ids.length : 0), 0);
  if (count === 0) throw new RestError('No resources specified.');
  for (const [kind, ids] of Object.entries(set)) {
    if (!DOWNLOADABLE.includes(kind) || !Array.isArray(ids) || ids.some((id) => typeof id !== 'string'))
      throw new RestError('Invalid resources format.');
  }
  return set as Partial<Record<string, string[]>>;
}

const downloadRoute = (method: 'GET' | 'POST') =>
  route({
    method,
    path: 'download',
    summary:
      method === 'GET'
        ? 'Download a set of items, folders, collections, and users as a zip archive.'
        : 'Download a set of items, folders, collections, and users as a zip archive (the parameters in the body, for long sets).',
    access: 'public',
    scope: [Scope.DATA_READ],
    cookie: true,
    produces: 'application/zip',
    params: [
      param.json('resources', {
        required: true,
        shape: 'object',
        validate: downloadableSet,
        description:
          'A JSON-encoded set of resources to download. Each type is a list of ids. For example: {"item": [(item id 1), (item id 2)], "folder": [(folder id 1)]}.',
      }),
      param.flag('includeMetadata', false, { description: 'Include any metadata in JSON files in the archive.' }),
    ],
    // Every resource is checked before the archive starts, so that a refusal is an error and not a broken zip.
    models: { resources: model.resources('resources', AccessLevel.READ, { missing: 'resource-not-found' }) },
    handler: ({ params, models: { resources }, services, principal, req, res }) =>
      sendZipArchive(services, req, res, 'Resources.zip', () =>
        resourceSetZipLayout(services, resources, principal.viewer, {
          includeMetadata: params.includeMetadata,
        }),
      ),
  });

/**
 * `GET` and `POST /resource/download` (Girder's resource download; the web client's "Download checked resources"
 * posts a form): each resource of the set, in the order the set names them, under its own name in one streamed zip;
 * `includeMetadata` adds the items' and folders' metadata as JSON files (src/queries/zipLayout.ts).
 */
export const resourceDownloadRoutes: RouteDef[] = [downloadRoute('GET'), downloadRoute('POST')];
