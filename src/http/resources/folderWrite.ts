import type { RouteDef, AnyParams } from '../routeTable';

export const folderWriteRoutes: RouteDef<AnyParams>[] = [];
