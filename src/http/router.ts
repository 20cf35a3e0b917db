import type { HttpMethod, Resource, RouteDef } from './routeTable';

export interface RouteMatch {
  resource: Resource;
  route: RouteDef;
  path: Record<string, string>;
}

interface CompiledRoute {
  resource: Resource;
  route: RouteDef;
  segments: string[];
}

/**
 * Matches `/<resource>/<segments…>` against the route table. Routes are ordered so that, position by position,
 * literal segments are tried before wildcards (`folder/:id/details` before `folder/:id/:x`).
 */
export class Router {
  private readonly byResource = new Map<string, CompiledRoute[]>();

  constructor(resources: Resource[]) {
    for (const resource of resources) {
      const compiled = resource.routes.map((route) => ({
        resource,
        route,
        segments: route.path ? route.path.split('/') : [],
      }));
      compiled.sort((a, b) => specificity(a.segments, b.segments));
      this.byResource.set(resource.name, compiled);
    }
  }

  hasResource(name: string): boolean {
    return this.byResource.has(name);
  }

  match(method: HttpMethod, resourceName: string, segments: string[]): RouteMatch | null {
    for (const candidate of this.byResource.get(resourceName) ?? []) {
      if (candidate.route.method !== method || candidate.segments.length !== segments.length) continue;
      const ok = candidate.segments.every((pattern, i) => pattern.startsWith(':') || pattern === segments[i]);
      if (!ok) continue;
      // Path parameter names come from the route table; the values (user text) are only ever values.
      const path = Object.fromEntries(
        candidate.segments.flatMap((pattern, i) => (pattern.startsWith(':') ? [[pattern.slice(1), segments[i]]] : [])),
      ) as Record<string, string>;
      return { resource: candidate.resource, route: candidate.route, path };
    }
    return null;
  }
}

/**
 * Orders routes of equal length so that, at the first position where one has a literal and the other a wildcard,
 * the literal comes first (a total order, so the sort is well defined; only equal lengths ever compete).
 */
function specificity(a: string[], b: string[]): number {
  if (a.length !== b.length) return a.length - b.length;
  for (let i = 0; i < a.length; i++) {
    const wa = a[i].startsWith(':');
    const wb = b[i].startsWith(':');
    if (wa !== wb) return wa ? 1 : -1;
  }
  return 0;
}
