import type { Resource } from '../routeTable';
import { route } from '../routeTable';

export const systemResource: Resource = {
  name: 'system',
  description: 'Server information.',
  routes: [
    route({
      method: 'GET',
      path: 'version',
      summary: 'Get the version information for this server.',
      access: 'public',
      params: [],
      handler: ({ services }) => ({ release: services.version, apiVersion: 'v1', serverStartDate: STARTED_AT }),
    }),
  ],
};

const STARTED_AT = new Date().toISOString();
