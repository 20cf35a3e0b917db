import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { param } from '../params';
import { AccessLevel, type Viewer } from '../../domain/access';
import type { Services } from '../../services';
import { loadModel } from '../../queries/loaders';
import { collectionView, userView } from '../../queries/views';
import { quotaInForce, quotaPolicyOf, setQuotaPolicy } from '../../commands/quotaCommands';

/**
 * Girder's user_quota plugin routes, added to `user` and `collection` (src/http/resources.ts): the resource as its
 * caller sees it plus its `quota` policy; reading needs ADMIN on the resource, setting needs a site administrator.
 */
/** The user or collection as its caller sees it, loaded at ADMIN (Girder's modelParam level). */
async function shownRoot(
  services: Services,
  model: 'user' | 'collection',
  id: string,
  viewer: Viewer | null,
): Promise<Record<string, unknown>> {
  if (model === 'user') return userView(await loadModel(services, 'user', id, viewer, AccessLevel.ADMIN), viewer);
  return collectionView(await loadModel(services, 'collection', id, viewer, AccessLevel.ADMIN), viewer);
}

function quotaRoutes(model: 'user' | 'collection'): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: ':id/quota',
      summary: `Get quota and assetstore policies for the ${model}.`,
      access: 'user',
      params: [],
      async handler({ path, services, principal }) {
        const shown = await shownRoot(services, model, path.id, principal.viewer);
        const policy = await quotaPolicyOf(services, path.id);
        const current = await quotaInForce(services, { type: model, id: path.id }, policy);
        return { ...shown, quota: { ...policy, _currentFileSizeQuota: current } };
      },
    }),
    route({
      method: 'PUT',
      path: ':id/quota',
      summary: `Set quota and assetstore policies for the ${model}.`,
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
      async handler({ path, params, services, principal, meta }) {
        const shown = await shownRoot(services, model, path.id, principal.viewer);
        await setQuotaPolicy(services, path.id, params.policy as Record<string, unknown>, meta);
        return { ...shown, quota: await quotaPolicyOf(services, path.id) };
      },
    }),
  ];
}

export const userQuotaRoutes = quotaRoutes('user');
export const collectionQuotaRoutes = quotaRoutes('collection');
