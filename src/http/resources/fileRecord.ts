import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { param } from '../params';
import { model } from '../modelParams';
import type { Services } from '../../services';
import { Scope } from '../../domain/scopes';
import { AccessLevel, type Viewer } from '../../domain/access';
import { copyFile, updateFile } from '../../commands/fileRecordCommands';
import { fileView } from '../../queries/itemQueries';
import { currentFile } from '../../queries/fileQueries';
import { signedInUser } from '../principal';

/** The file as the read model now shows it (the command waited for the projection). */
async function currentView(services: Services, id: string, viewer: Viewer | null) {
  return fileView(await currentFile(services, id), viewer);
}

/**
 * Girder's file record routes (api/v1/file.py `updateFile`, `copy`): the name and MIME type of a file, and a copy of
 * it into an item. Moving a file's bytes to another assetstore is in fileStore.ts.
 */
export const fileRecordRoutes: RouteDef[] = [
  route({
    method: 'PUT',
    path: ':id',
    summary: 'Change file metadata such as name or MIME type.',
    access: 'user',
    scope: [Scope.DATA_WRITE],
    params: [
      param.string('name', { strip: true, description: 'The name to set on the file.' }),
      param.string('mimeType', {
        strip: true,
        headerSafe: true,
        description: 'The MIME type of the file (no control characters).',
      }),
    ],
    models: { target: model.path('file', AccessLevel.WRITE) },
    async handler({ params, models: { target }, services, principal, meta }) {
      const { file } = target;
      await updateFile(
        services,
        file,
        {
          ...(params.name !== undefined ? { name: params.name } : {}),
          ...(params.mimeType !== undefined ? { mimeType: params.mimeType } : {}),
        },
        meta,
      );
      return currentView(services, file._id, principal.viewer);
    },
  }),
  route({
    method: 'POST',
    path: ':id/copy',
    summary: 'Copy a file.',
    access: 'user',
    scope: [Scope.DATA_WRITE],
    params: [param.requiredString('itemId', { description: 'The ID of the item to copy the file to.' })],
    models: {
      source: model.path('file', AccessLevel.READ),
      item: model.param('item', 'itemId', AccessLevel.WRITE),
    },
    async handler({ models: { source, item }, services, principal, meta }) {
      const id = await copyFile(
        services,
        { file: source.file, item: item.item, copierId: signedInUser(principal)._id },
        meta,
      );
      return currentView(services, id, principal.viewer);
    },
  }),
];
