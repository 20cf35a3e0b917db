import { route } from '../routeTable';
import { param } from '../params';
import type { Paging } from '../../domain/paging';
import type { Services } from '../../services';
import { hasAccess, type Level, type Viewer } from '../../domain/access';
import type { UserDoc } from '../../ports/readModel';
import { RestError } from '../../domain/errors';
import { OwnMap } from '../../domain/ownMap';
import { collectionView, folderView, userView } from '../../queries/views';
import { itemView } from '../../queries/itemQueries';
import { groupView, visibleGroupIds } from '../../queries/groupQueries';

type View = Record<string, unknown>;
type Searcher = (
  services: Services,
  q: string,
  user: UserDoc | null,
  viewer: Viewer | null,
  level: Level,
  paging: Paging,
) => Promise<View[]>;

const userSearch =
  (prefix: boolean): Searcher =>
  async (services, q, _user, viewer, level, paging) => {
    const page = await services.readModel.users.list({ text: q, prefix, paging: { ...paging, sort: 'lastName' } });
    return page.rows.filter((u) => hasAccess(u, viewer, level)).map((u) => userView(u, viewer));
  };
const groupSearch =
  (prefix: boolean): Searcher =>
  async (services, q, user, viewer, _level, paging) => {
    const page = await services.readModel.groups.list({
      text: q,
      prefix,
      visibleTo: visibleGroupIds(user),
      paging: { ...paging, sort: 'name' },
    });
    return page.rows.map((g) => groupView(g, viewer));
  };

/**
 * The `text` mode: one search per resource type, each filtered inside the read-model query by the `level` asked
 * (items by their folder's, as Girder checks an item's access). Users, groups and collections match by name
 * (substring, any case), folders and items by the full-text index.
 */
const TEXT_SEARCHES = new OwnMap<string, Searcher>({
  user: userSearch(false),
  group: groupSearch(false),
  async collection(services, q, _user, viewer, level, paging) {
    const page = await services.readModel.collections.list({ viewer, text: q, level, paging });
    return page.rows.map((c) => collectionView(c, viewer));
  },
  async folder(services, q, _user, viewer, level, paging) {
    const page = await services.readModel.folders.search({ text: q, viewer, level, paging });
    return page.rows.map(({ _textScore, ...f }) => folderView(f, viewer, { _textScore }));
  },
  async item(services, q, _user, viewer, level, paging) {
    const page = await services.readModel.items.search({ text: q, viewer, level, paging });
    return page.rows.map(itemView);
  },
});

/**
 * The `prefix` mode (the quick search and the access dialog's pickers): users by login, first or last name, groups
 * by name, starting with the query in any case; collections, folders and items by Girder's name prefix rule
 * (`PrefixSearch` in the read-model port), filtered by `level` inside the query like the text mode.
 */
const PREFIX_SEARCHES = new OwnMap<string, Searcher>({
  user: userSearch(true),
  group: groupSearch(true),
  async collection(services, prefix, _user, viewer, level, paging) {
    const page = await services.readModel.collections.prefixSearch({ prefix, viewer, level, paging });
    return page.rows.map((c) => collectionView(c, viewer));
  },
  async folder(services, prefix, _user, viewer, level, paging) {
    const page = await services.readModel.folders.prefixSearch({ prefix, viewer, level, paging });
    return page.rows.map((f) => folderView(f, viewer));
  },
  async item(services, prefix, _user, viewer, level, paging) {
    const page = await services.readModel.items.prefixSearch({ prefix, viewer, level, paging });
    return page.rows.map(itemView);
  },
});
const MODES = new OwnMap({ text: TEXT_SEARCHES, prefix: PREFIX_SEARCHES });

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
    const searches = MODES.get(params.mode ?? 'text');
    if (!searches) throw new RestError(`Search mode handler '${params.mode}' not found.`);
    const paging: Paging = { limit: params.limit ?? 10, offset: params.offset ?? 0, sort: 'name', sortdir: 1 };
    const results = new Map<string, View[]>();
    for (const type of params.types as unknown[]) {
      const search = typeof type === 'string' ? searches.get(type) : undefined;
      if (search)
        results.set(type as string, await search(services, params.q, principal.user, principal.viewer, level, paging));
    }
    return Object.fromEntries(results);
  },
});
