import type { Resource } from '../routeTable';
import { route } from '../routeTable';
import { param } from '../params';
import { lookUpPath, resourcePath } from '../../queries/resourcePaths';
import { resourceSearchRoute } from './resourceSearch';
import { resourceBulkRoutes } from './resourceBulk';
import { resourceDownloadRoutes } from './resourceDownload';
import { resourceDocumentRoutes } from './resourceDocument';
import { Scope } from '../../domain/scopes';
import { model } from '../modelParams';
import { AccessLevel } from '../../domain/access';

/**
 * Routes across resource types (Girder's api/v1/resource.py) that girder_client uses: look a resource up by its path
 * (uploads to `/user/<login>/…` parents) and the path of a resource (`--parent-type auto` probing).
 */
export const resourceResource: Resource = {
  name: 'resource',
  description:
    'Operations across resource types: search, paths in the data hierarchy, moving, copying and deleting sets of resources.',
  routes: [
    resourceSearchRoute,
    ...resourceBulkRoutes,
    ...resourceDownloadRoutes,
    route({
      method: 'GET',
      path: 'lookup',
      summary: 'Look up a resource in the data hierarchy by path.',
      access: 'public',
      scope: [Scope.DATA_READ],
      params: [
        param.requiredString('path', {
          description:
            'The path of the resource. The path must be an absolute Unix path starting with either "/user/[user name]", for a ' +
            'user\'s resources or "/collection/[collection name]", for resources under a collection.',
        }),
        param.flag('test', false, {
          description: "Specify whether to return None instead of throwing an exception when path doesn't exist.",
        }),
      ],
      handler: ({ params, services, principal }) => lookUpPath(services, params.path, principal.viewer, params.test),
    }),
    route({
      method: 'GET',
      path: ':id/path',
      summary: 'Get path of a resource.',
      access: 'public',
      scope: [Scope.DATA_READ],
      params: [
        param.requiredString('type', {
          description: 'The type of the resource (folder, collection, user, item or file).',
        }),
      ],
      models: {
        resource: model.checkedByRead(
          'named by the type parameter',
          AccessLevel.READ,
          'READ on the resource and on each ancestor; a miss is `Invalid resource id.`',
        ),
      },
      handler: ({ path, params, services, principal }) =>
        resourcePath(services, params.type, path.id, principal.viewer),
    }),
    ...resourceDocumentRoutes,
  ],
};
