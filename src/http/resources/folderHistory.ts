import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { param } from '../params';
import { RestError } from '../../domain/errors';
import { folderHistory } from '../../queries/history';
import { folderView } from '../../queries/views';
import { currentFolder } from '../../queries/folderQueries';
import { restoreFolder } from '../../commands/restoreCommands';
import { Scope } from '../../domain/scopes';
import { signedInViewer } from '../principal';
import { model } from '../modelParams';
import { AccessLevel } from '../../domain/access';

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
    models: {
      folder: model.checkedByRead(
        'folder',
        AccessLevel.ADMIN,
        'ADMIN on the folder now; a removed folder: ADMIN on it as it was removed; site administrators always',
      ),
    },
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
    validate(params) {
      if (params.parentType !== undefined && !params.parentId)
        throw new RestError('Pass parentId together with parentType.');
    },
    models: {
      folder: model.checkedByRead(
        'folder',
        AccessLevel.ADMIN,
        'a removed folder: ADMIN on it as it was removed; site administrators always',
      ),
      parent: model.optionalParent(AccessLevel.WRITE, {
        defaultType: 'folder',
        note: 'where to restore it instead of its original parent',
      }),
    },
    async handler({ path, models: { parent }, services, principal, meta }) {
      const id = await restoreFolder(
        services,
        { folderId: path.id, viewer: signedInViewer(principal), ...(parent ? { parent } : {}) },
        meta,
      );
      return folderView(await currentFolder(services, id), principal.viewer);
    },
  }),
];
