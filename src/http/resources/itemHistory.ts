import type { RouteDef } from '../routeTable';
import { route } from '../routeTable';
import { itemHistory } from '../../queries/history';
import { historyParams } from './folderHistory';
import { Scope } from '../../domain/scopes';
import { model } from '../modelParams';
import { AccessLevel } from '../../domain/access';

/** An item's audit history (docs/events.md). */
export const itemHistoryRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: ':id/history',
    summary: "List an item's events (and its files'), oldest first, with what operations on its folders did to it.",
    access: 'user',
    scope: [Scope.DATA_OWN],
    params: historyParams(),
    models: {
      item: model.checkedByRead(
        'item',
        AccessLevel.ADMIN,
        "ADMIN on the item's folder now; a removed item: on its last folder; site administrators always",
      ),
    },
    async handler({ path, params, services, principal, setTotalCount }) {
      const page = await itemHistory(services, principal.viewer, path.id, {
        limit: params.limit ?? 50,
        offset: params.offset ?? 0,
        ...(params.after !== undefined ? { after: params.after } : {}),
      });
      setTotalCount(page.total);
      return page.rows;
    },
  }),
];
