import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { param } from '../params';
import { model } from '../modelParams';
import { Scope } from '../../domain/scopes';
import { AccessLevel } from '../../domain/access';
import { withProgress } from '../../bus/progress';
import { moveFile } from '../../commands/fileMoveCommands';
import { completeDirectUpload } from '../../commands/directUploadCommands';
import { outcomeView } from '../uploadOutcome';
import { fileView } from '../../queries/itemQueries';
import { assetstoreById } from '../../queries/assetstoreViews';
import { currentFile } from '../../queries/fileQueries';
import { signedInUser } from '../principal';

/**
 * Girder's routes about where a file's bytes live: `POST /file/completion`, which finishes a direct upload to S3
 * (src/commands/directUploadCommands.ts), and `PUT /file/:id/move` (site administrators).
 */
export const fileStoreRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: 'completion',
    summary: 'Finalize an upload explicitly if necessary.',
    access: 'user',
    scope: [Scope.DATA_WRITE],
    params: [param.requiredString('uploadId', { description: 'The ID of the upload record.' })],
    async handler(ctx) {
      const { params, services, principal, meta } = ctx;
      const done = await completeDirectUpload(
        services,
        { uploadId: params.uploadId, userId: signedInUser(principal)._id },
        meta,
      );
      return outcomeView(services, done.outcome, ctx, done.reference);
    },
  }),
  route({
    method: 'PUT',
    path: ':id/move',
    summary: 'Move a file to a different assetstore.',
    access: 'admin',
    scope: [Scope.DATA_WRITE],
    params: [
      param.requiredString('assetstoreId', { description: 'The destination assetstore.' }),
      param.flag('progress', false, { description: 'Controls whether progress notifications will be sent.' }),
    ],
    models: { target: model.path('file', AccessLevel.WRITE) },
    async handler({ params, models: { target }, services, principal, meta }) {
      const { file } = target;
      const store = await assetstoreById(services, params.assetstoreId);
      await withProgress(
        services,
        {
          on: params.progress,
          userId: signedInUser(principal)._id,
          title: `Moving file "${file.name}" to assetstore "${store.name}"`,
          total: file.size,
        },
        (progress) => moveFile(services, { file, assetstoreId: store.assetstoreId }, progress, meta),
      );
      return fileView(await currentFile(services, file._id), principal.viewer);
    },
  }),
];
