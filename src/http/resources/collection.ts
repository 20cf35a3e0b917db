import type { Resource } from '../routeTable';

export const collectionResource: Resource = {
  name: 'collection',
  description: 'Collections: top-level containers of folders.',
  routes: [],
};
