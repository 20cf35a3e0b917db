import type { Paging } from '../domain/paging';
import { hasAccess, type Level, type Viewer } from '../domain/access';
import type { UserDoc } from '../ports/readModel';
import { RestError } from '../domain/errors';
import { OwnMap } from '../domain/ownMap';
import { collectionView, folderView, userView } from './views';
import { itemView } from './itemQueries';
import { groupView, visibleGroupIds } from './groupQueries';
import type { ReadModelDeps } from './readDeps';

/** `GET /resource/search` (src/http/resources/resourceSearch.ts): one search of the read model per resource type. */
type Deps = ReadModelDeps<'users' | 'groups' | 'collections' | 'folders' | 'items'>;

type View = Record<string, unknown>;
type Searcher = (
  deps: Deps,
  q: string,
  user: UserDoc | null,
  viewer: Viewer | null,
  level: Level,
  paging: Paging,
) => Promise<View[]>;

const userSearch =
  (prefix: boolean): Searcher =>
  async (deps, q, _user, viewer, level, paging) => {
    const page = await deps.readModel.users.list({ text: q, prefix, paging: { ...paging, sort: 'lastName' } });
    return page.rows.filter((u) => hasAccess(u, viewer, level)).map((u) => userView(u, viewer));
  };
const groupSearch =
  (prefix: boolean): Searcher =>
  async (deps, q, user, viewer, _level, paging) => {
    const page = await deps.readModel.groups.list({
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
  async collection(deps, q, _user, viewer, level, paging) {
    const page = await deps.readModel.collections.list({ viewer, text: q, level, paging });
    return page.rows.map((c) => collectionView(c, viewer));
  },
  async folder(deps, q, _user, viewer, level, paging) {
    const page = await deps.readModel.folders.search({ text: q, viewer, level, paging });
    return page.rows.map(({ _textScore, ...f }) => folderView(f, viewer, { _textScore }));
  },
  async item(deps, q, _user, viewer, level, paging) {
    const page = await deps.readModel.items.search({ text: q, viewer, level, paging });
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
  async collection(deps, prefix, _user, viewer, level, paging) {
    const page = await deps.readModel.collections.prefixSearch({ prefix, viewer, level, paging });
    return page.rows.map((c) => collectionView(c, viewer));
  },
  async folder(deps, prefix, _user, viewer, level, paging) {
    const page = await deps.readModel.folders.prefixSearch({ prefix, viewer, level, paging });
    return page.rows.map((f) => folderView(f, viewer));
  },
  async item(deps, prefix, _user, viewer, level, paging) {
    const page = await deps.readModel.items.prefixSearch({ prefix, viewer, level, paging });
    return page.rows.map(itemView);
  },
});
const MODES = new OwnMap({ text: TEXT_SEARCHES, prefix: PREFIX_SEARCHES });

export interface ResourceSearch {
  /** `text` or `prefix` (anything else: `Search mode handler '<mode>' not found.`). */
  mode: string;
  q: string;
  /** The requested types; one this service does not search is left out of the answer. */
  types: unknown[];
  user: UserDoc | null;
  viewer: Viewer | null;
  level: Level;
  paging: Paging;
}

/** `{<type>: [documents]}` for each requested type the mode knows, in the order asked. */
export async function searchResources(deps: Deps, input: ResourceSearch): Promise<Record<string, View[]>> {
  const searches = MODES.get(input.mode);
  if (!searches) throw new RestError(`Search mode handler '${input.mode}' not found.`);
  const results = new Map<string, View[]>();
  for (const type of input.types) {
    const search = typeof type === 'string' ? searches.get(type) : undefined;
    if (search)
      results.set(type as string, await search(deps, input.q, input.user, input.viewer, input.level, input.paging));
  }
  return Object.fromEntries(results);
}
