import type { Resource } from '../routeTable';

export const apiKeyResource: Resource = {
  name: 'api_key',
  description: 'API keys for scoped, long-lived access.',
  routes: [],
};
