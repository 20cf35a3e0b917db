import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { param } from '../params';
import { RestError } from '../../domain/errors';
import { folderHistory } from '../../queries/history';
import { folderView } from '../../queries/views';
import { restoreFolder } from '../../commands/restoreCommands';
import { Scope } from '../../domain/scopes';
import { signedInViewer } from '../principal';

const PARENT_TYPES = ['folder', 'user', 'collection'] as const;

/** `limit`, `offset` and `after` of the history routes. */
export const historyParams = () =>
  [
    param.int('limit', { default: 50, description: 'Result set size limit (0 for no limit).' }),
    param.int('offset', { default: 0, description: 'Offset into result set.' }),
    param.int('after', { description: 'Only what happened after the event at this revision of its own stream.' }),
  ] as const;

/** A folder's audit history and its restore (docs/events.md). */
export const folderHistoryRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: ':id/history',
    summary: "List a folder's events, oldest first, with what operations on its ancestors did to it.",
    access: 'user',
    scope: [Scope.DATA_OWN],
    params: historyParams(),
    async handler({ path, params, services, principal, setTotalCount }) {
      const page = await folderHistory(services, principal.viewer, path.id, {
        limit: params.limit ?? 50,
        offset: params.offset ?? 0,
        ...(params.after !== undefined ? { after: params.after } : {}),
      });
      setTotalCount(page.total);
      return page.rows;
    },
  }),
  route({
    method: 'POST',
    path: ':id/restore',
    summary: 'Restore a deleted folder with its subfolders, items and files.',
    access: 'user',
    scope: [Scope.DATA_WRITE],
    params: [
      param.enum('parentType', PARENT_TYPES, {
        description: 'Type of the parent to restore it under (default folder, with parentId).',
      }),
      param.string('parentId', {
        description: 'Where to restore it when its original parent no longer exists (or elsewhere).',
      }),
    ],
    async handler({ path, params, services, principal, meta }) {
      if (params.parentType !== undefined && !params.parentId)
        throw new RestError('Pass parentId together with parentType.');
      const id = await restoreFolder(
        services,
        {
          folderId: path.id,
          viewer: signedInViewer(principal),
          ...(params.parentId ? { parent: { type: params.parentType ?? 'folder', id: params.parentId } } : {}),
        },
        meta,
      );
      const doc = await services.readModel.folders.get(id);
      if (!doc) throw new RestError(`Invalid folder id (${id}).`);
      return folderView(doc, principal.viewer);
    },
  }),
];
