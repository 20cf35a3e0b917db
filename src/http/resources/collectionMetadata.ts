import type { RouteDef } from '../routeTable';
import { deleteMetadataParams, setMetadataParams } from '../metadataParams';
import { route } from '../routeTable';
import { model } from '../modelParams';
import { AccessLevel } from '../../domain/access';
import { type Metadata } from '../../domain/metadata';
import { Scope } from '../../domain/scopes';
import { changeCollectionMetadata } from '../../commands/collectionCommands';
import { collectionView } from '../../queries/views';
import { currentCollection } from '../../queries/collectionQueries';
import type { Services } from '../../services';
import type { Viewer } from '../../domain/access';

/** The collection as the read model now shows it (the command waited for the projection), filtered for the caller. */
async function currentView(services: Services, id: string, viewer: Viewer | null) {
  return collectionView(await currentCollection(services, id), viewer);
}

/**
 * Girder's collection metadata routes (api/v1/collection.py `setMetadata`, `deleteMetadata`), with the folder and
 * item metadata rules (src/domain/metadata.ts): merge, nulls delete keys unless `allowNull`, every key validated.
 */
export const collectionMetadataRoutes: RouteDef[] = [
  route({
    method: 'PUT',
    path: ':id/metadata',
    summary: 'Set metadata fields on a collection.',
    access: 'user',
    scope: [Scope.DATA_WRITE],
    params: setMetadataParams(),
    models: { collection: model.path('collection', AccessLevel.WRITE) },
    async handler({ params, models: { collection }, services, principal, meta }) {
      const change = { set: params.metadata as Metadata, allowNull: params.allowNull };
      await changeCollectionMetadata(services.commands, collection._id, change, meta);
      return currentView(services, collection._id, principal.viewer);
    },
  }),
  route({
    method: 'DELETE',
    path: ':id/metadata',
    summary: 'Delete metadata fields on a collection.',
    access: 'user',
    scope: [Scope.DATA_WRITE],
    params: deleteMetadataParams(),
    models: { collection: model.path('collection', AccessLevel.WRITE) },
    async handler({ params, models: { collection }, services, principal, meta }) {
      await changeCollectionMetadata(services.commands, collection._id, { remove: params.fields }, meta);
      return currentView(services, collection._id, principal.viewer);
    },
  }),
];
