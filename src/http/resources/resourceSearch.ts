import { route } from '../routeTable';
import { param } from '../params';
import type { Paging } from '../../domain/paging';
import { RestError } from '../../domain/errors';
import { searchResources } from '../../queries/resourceSearchQueries';

/** `GET /resource/search` (Girder's `text` and `prefix` modes): `{<type>: [documents]}` for each requested type it
 * knows. */
export const resourceSearchRoute = route({
  method: 'GET',
  path: 'search',
  summary: 'Search for resources in the system.',
  access: 'public',
  params: [
    param.requiredString('q', { description: 'The search query.' }),
    param.string('mode', { default: 'text', description: 'The search mode: text, or prefix.' }),
    param.json('types', {
      required: true,
      shape: 'array',
      description: 'A JSON list of resource types to search for, e.g. ["user", "folder", "item"].',
    }),
    param.int('level', { default: 0, description: 'Minimum required access level.' }),
    param.int('limit', { default: 10, description: 'Result set size limit.' }),
    param.int('offset', { default: 0, description: 'Offset into result set.' }),
  ],
  async handler({ params, services, principal }) {
    const level = params.level ?? 0;
    if (level !== 0 && level !== 1 && level !== 2) throw new RestError(`Invalid AccessType: ${level}.`);
    const paging: Paging = { limit: params.limit ?? 10, offset: params.offset ?? 0, sort: 'name', sortdir: 1 };
    return searchResources(services, {
      mode: params.mode ?? 'text',
      q: params.q,
      types: params.types as unknown[],
      user: principal.user,
      viewer: principal.viewer,
      level,
      paging,
    });
  },
});
