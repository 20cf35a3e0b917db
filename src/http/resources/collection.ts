import { model } from '../modelParams';
import type { Resource } from '../routeTable';
import { route } from '../routeTable';
import { pagingOf, pagingParams, param } from '../params';
import { COLLECTION_SORT } from '../../queries/sortableFields';
import { AccessLevel } from '../../domain/access';
import { AccessDeniedError } from '../../domain/errors';
import { mayCreateCollections } from '../../queries/collectionCreationPolicy';
import { parseAccessList, parsePublicFlags } from '../../domain/accessList';
import { collectionView } from '../../queries/views';
import { fullAccessList } from '../../queries/accessListView';
import {
  collectionCount,
  collectionDetails,
  currentCollection,
  listCollections,
} from '../../queries/collectionQueries';
import {
  createCollection,
  deleteCollection,
  setCollectionAccess,
  updateCollection,
} from '../../commands/collectionCommands';
import { Scope } from '../../domain/scopes';
import { signedInUser } from '../principal';
import { collectionMetadataRoutes } from './collectionMetadata';
import { collectionDownloadRoutes } from './collectionDownload';

export const collectionResource: Resource = {
  name: 'collection',
  description: 'Collections: top-level containers of folders.',
  routes: [
    route({
      method: 'GET',
      path: '',
      summary: 'List or search for collections.',
      access: 'public',
      scope: [Scope.DATA_READ],
      params: [
        param.string('text', { description: 'Pass this to perform a text search for collections.' }),
        ...pagingParams(COLLECTION_SORT),
      ],
      async handler({ params, services, principal, setTotalCount }) {
        const page = await listCollections(services, principal.viewer, { text: params.text, paging: pagingOf(params) });
        setTotalCount(page.total);
        return page.rows;
      },
    }),
    route({
      method: 'POST',
      path: '',
      summary: 'Create a new collection.',
      access: 'user',
      scope: [Scope.DATA_WRITE],
      params: [
        param.requiredString('name', { strip: true, description: 'Name for the collection. Must be unique.' }),
        param.string('description', { default: '', strip: true, description: 'Collection description.' }),
        param.flag('public', false, { description: 'Whether the collection should be publicly visible.' }),
      ],
      async handler({ params, services, principal, meta }) {
        // Who may is the collection creation policy's (site administrators, or whom `core.collection_create_policy` names).
        if (!(await mayCreateCollections(services, signedInUser(principal))))
          throw new AccessDeniedError('You are not authorized to create collections.');
        const id = await createCollection(
          services.commands,
          {
            name: params.name,
            description: params.description ?? '',
            public: params.public,
            creatorId: signedInUser(principal)._id,
          },
          meta,
        );
        return collectionView(await currentCollection(services, id), principal.viewer);
      },
    }),
    route({
      method: 'GET',
      path: 'details',
      summary: 'Get detailed information of accessible collections.',
      access: 'public',
      scope: [Scope.DATA_READ],
      params: [],
      handler: async ({ services, principal }) => ({ nCollections: await collectionCount(services, principal.viewer) }),
    }),
    route({
      method: 'GET',
      path: ':id/details',
      summary: 'Get detailed information about a collection.',
      access: 'public',
      scope: [Scope.DATA_READ],
      params: [],
      models: { collection: model.path('collection', AccessLevel.READ) },
      handler: ({ models: { collection }, services, principal }) =>
        collectionDetails(services, collection, principal.viewer),
    }),
    route({
      method: 'GET',
      path: ':id',
      summary: 'Get a collection by ID.',
      access: 'public',
      scope: [Scope.DATA_READ],
      params: [],
      models: { collection: model.path('collection', AccessLevel.READ) },
      handler: ({ models: { collection }, principal }) => collectionView(collection, principal.viewer),
    }),
    route({
      method: 'PUT',
      path: ':id',
      summary: 'Edit a collection by ID.',
      access: 'user',
      scope: [Scope.DATA_WRITE],
      params: [
        param.string('name', { strip: true, description: 'Unique name for the collection.' }),
        param.string('description', { strip: true, description: 'Collection description.' }),
      ],
      models: { collection: model.path('collection', AccessLevel.WRITE) },
      async handler({ params, models: { collection }, services, principal, meta }) {
        await updateCollection(
          services.commands,
          collection._id,
          { name: params.name, description: params.description },
          meta,
        );
        return collectionView(await currentCollection(services, collection._id), principal.viewer);
      },
    }),
    route({
      method: 'DELETE',
      path: ':id',
      summary: 'Delete a collection by ID.',
      access: 'user',
      scope: [Scope.DATA_OWN],
      params: [],
      models: { collection: model.path('collection', AccessLevel.ADMIN) },
      async handler({ models: { collection }, services, meta }) {
        await deleteCollection(services, collection._id, meta);
        return { message: `Deleted collection ${collection.name}.` };
      },
    }),
    route({
      method: 'GET',
      path: ':id/access',
      summary: 'Get the access control list for a collection.',
      access: 'user',
      scope: [Scope.DATA_OWN],
      params: [],
      models: { collection: model.path('collection', AccessLevel.ADMIN) },
      async handler({ models: { collection }, services }) {
        return fullAccessList(services, collection.access);
      },
    }),
    route({
      method: 'PUT',
      path: ':id/access',
      summary: 'Set the access control list for a collection.',
      access: 'user',
      scope: [Scope.DATA_OWN],
      params: [
        param.json('access', { shape: 'object', required: true, description: 'The access control list as JSON.' }),
        param.json('publicFlags', {
          shape: 'array',
          description: 'List of public access flags to set on the collection.',
        }),
        param.bool('public', { description: 'Whether the collection should be publicly visible.' }),
      ],
      models: { collection: model.path('collection', AccessLevel.ADMIN) },
      async handler({ params, models: { collection }, services, principal, meta }) {
        const access = parseAccessList(params.access);
        const publicFlags = params.publicFlags !== undefined ? parsePublicFlags(params.publicFlags) : undefined;
        await setCollectionAccess(
          services.commands,
          collection._id,
          { access, public: params.public, publicFlags },
          meta,
        );
        const updated = await currentCollection(services, collection._id);
        return { ...collectionView(updated, principal.viewer), access: updated.access };
      },
    }),
    ...collectionMetadataRoutes,
    ...collectionDownloadRoutes,
  ],
};
