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
      // `release` is the Girder release whose API this service speaks: girder_client compares it (as a list of
      // strings) with ['2', '3'] to decide whether a file may be uploaded in one request. The service's own version
      // is `serviceVersion`.
      handler: ({ services }) => ({
        release: GIRDER_COMPATIBLE_RELEASE, apiVersion: 'v1', serverStartDate: STARTED_AT, serviceVersion: services.version,
      }),
    }),
  ],
};

const STARTED_AT = new Date().toISOString();
/** The Girder release the reference behaviour was read from (docs: shared/spec/reference-behaviour.md). */
const GIRDER_COMPATIBLE_RELEASE = '3.2.9';
