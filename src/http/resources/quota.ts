import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { param } from '../params';
import { AccessLevel, type Viewer } from '../../domain/access';
import type { CollectionDoc, UserDoc } from '../../ports/readModel';
import { model } from '../modelParams';
import { collectionView, userView } from '../../queries/views';
import { setQuotaPolicy } from '../../commands/quotaCommands';
import { quotaInForce, quotaPolicyOf } from '../../queries/quotaQueries';

/**
 * Girder's user_quota plugin routes, added to `user` and `collection` (src/http/resources.ts): the resource as its
 * caller sees it plus its `quota` policy; reading needs ADMIN on the resource, setting needs a site administrator.
 */
function quotaRoutes(kind: 'user' | 'collection'): RouteDef[] {
  const viewOf = (doc: UserDoc | CollectionDoc, viewer: Viewer | null): Record<string, unknown> =>
    kind === 'user' ? userView(doc as UserDoc, viewer) : collectionView(doc as CollectionDoc, viewer);
  return [
    route({
      method: 'GET',
      path: ':id/quota',
      summary: `Get quota and assetstore policies for the ${kind}.`,
      access: 'user',
      params: [],
      models: { root: model.path(kind, AccessLevel.ADMIN) },
      async handler({ path, models: { root }, services, principal }) {
        const shown = viewOf(root, principal.viewer);
        const policy = await quotaPolicyOf(services, path.id);
        const current = await quotaInForce(services, { type: kind, id: path.id }, policy);
        return { ...shown, quota: { ...policy, _currentFileSizeQuota: current } };
      },
    }),
    route({
      method: 'PUT',
      path: ':id/quota',
      summary: `Set quota and assetstore policies for the ${kind}.`,
      access: 'admin',
      params: [
        param.json('policy', {
          shape: 'object',
          required: true,
          description:
            'A JSON object containing the policies. This is a dictionary of keys and values. Any key that is not ' +
            'specified does not change.',
        }),
      ],
      models: { root: model.path(kind, AccessLevel.ADMIN) },
      async handler({ path, params, models: { root }, services, principal, meta }) {
        const shown = viewOf(root, principal.viewer);
        await setQuotaPolicy(services, path.id, params.policy as Record<string, unknown>, meta);
        return { ...shown, quota: await quotaPolicyOf(services, path.id) };
      },
    }),
  ];
}

export const userQuotaRoutes = quotaRoutes('user');
export const collectionQuotaRoutes = quotaRoutes('collection');
