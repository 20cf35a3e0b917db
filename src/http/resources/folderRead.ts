import type { RouteDef, AnyParams } from '../routeTable';

export const folderReadRoutes: RouteDef<AnyParams>[] = [];
