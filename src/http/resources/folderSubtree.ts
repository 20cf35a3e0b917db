import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { param } from '../params';
import { clearFolderContents, copyFolder, deleteFolder } from '../../commands/folderSubtreeCommands';
import { model } from '../modelParams';
import { folderView } from '../../queries/views';
import { currentFolder, subtreeSize } from '../../queries/folderQueries';
import { withProgress } from '../../bus/progress';
import { Scope } from '../../domain/scopes';
import { AccessLevel } from '../../domain/access';
import { signedInUser, signedInViewer } from '../principal';

const PARENT_TYPES = ['folder', 'user', 'collection'] as const;
const PUBLIC_VALUES = ['true', 'false', 'original'] as const;

/**
 * The subtree routes: delete a folder, empty it, copy it. Each runs one command (src/commands/folderSubtreeCommands.ts)
 * whose single event the projection applies to the whole subtree in one transaction; progress (when asked for) counts
 * the subtree first, moves while a large event is applied by the bulk worker (what it reports, capped at the total),
 * is set to the total when that transaction has committed, and ends with `Done`.
 */
export const folderSubtreeRoutes: RouteDef[] = [
  route({
    method: 'DELETE',
    path: ':id',
    summary: 'Delete a folder by ID.',
    access: 'user',
    scope: [Scope.DATA_OWN],
    params: [param.flag('progress', false, { description: 'Whether to record progress on this task.' })],
    models: { folder: model.path('folder', AccessLevel.ADMIN) },
    async handler({ params, models: { folder }, services, principal, meta }) {
      await withProgress(
        services,
        {
          on: params.progress,
          userId: signedInUser(principal)._id,
          title: `Deleting folder ${folder.name}`,
          message: 'Calculating folder size...',
        },
        async (progress) => {
          const total = progress.on ? await subtreeSize(services, folder._id) : 0;
          await progress.update({ total });
          await progress.following(meta.requestId, () => deleteFolder(services, folder._id, meta));
          await progress.update({ current: total, force: true });
        },
      );
      return { message: `Deleted folder ${folder.name}.` };
    },
  }),
  route({
    method: 'DELETE',
    path: ':id/contents',
    summary: 'Remove all contents from a folder.',
    access: 'user',
    scope: [Scope.DATA_WRITE],
    params: [param.flag('progress', false, { description: 'Whether to record progress on this task.' })],
    models: { folder: model.path('folder', AccessLevel.WRITE) },
    async handler({ params, models: { folder }, services, principal, meta }) {
      await withProgress(
        services,
        {
          on: params.progress,
          userId: signedInUser(principal)._id,
          title: `Clearing folder ${folder.name}`,
          message: 'Calculating folder size...',
        },
        async (progress) => {
          const total = progress.on ? (await subtreeSize(services, folder._id)) - 1 : 0;
          await progress.update({ total });
          await progress.following(meta.requestId, () => clearFolderContents(services, folder._id, meta));
          await progress.update({ current: total, force: true });
        },
      );
      return { message: `Cleaned folder ${folder.name}.` };
    },
  }),
  route({
    method: 'POST',
    path: ':id/copy',
    summary: 'Copy a folder.',
    access: 'user',
    scope: [Scope.DATA_WRITE],
    params: [
      param.enum('parentType', PARENT_TYPES, { description: "Type of the new folder's parent" }),
      param.string('parentId', { description: 'The ID of the parent document.' }),
      param.string('name', { description: 'Name for the new folder.' }),
      param.string('description', { description: 'Description for the new folder.' }),
      param.enum('public', PUBLIC_VALUES, {
        description:
          "Whether the folder should be publicly visible. By default, inherits the value from parent folder, or in the case of user or collection parentType, defaults to False. If 'original', use the value of the original folder.",
      }),
      param.flag('progress', false, { description: 'Whether to record progress on this task.' }),
    ],
    // Without parentId the copy lands in the source's parent: WRITE is needed there as on any destination (stricter
    // than Girder 3.x, which loads that parent with force).
    models: {
      source: model.path('folder', AccessLevel.READ),
      parent: model.parent(AccessLevel.WRITE, { orParentOf: 'source', emptyMeansAbsent: true }),
    },
    async handler({ params, models: { source, parent }, services, principal, meta }) {
      const viewer = signedInViewer(principal);
      const id = await withProgress(
        services,
        {
          on: params.progress,
          userId: signedInUser(principal)._id,
          title: `Copying folder ${source.name}`,
          message: 'Calculating folder size...',
        },
        async (progress) => {
          const total = progress.on ? await subtreeSize(services, source._id) : 0;
          await progress.update({ total });
          const copied = await progress.following(meta.requestId, () =>
            copyFolder(
              services,
              {
                sourceId: source._id,
                parent,
                copier: viewer,
                ...(params.name !== undefined ? { name: params.name } : {}),
                ...(params.description !== undefined ? { description: params.description } : {}),
                ...(params.public !== undefined ? { public: params.public } : {}),
              },
              meta,
            ),
          );
          await progress.update({ current: total, force: true });
          return copied;
        },
      );
      return folderView(await currentFolder(services, id), viewer);
    },
  }),
];
