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
      const compiled = resource.routes.map((route) => ({ resource, route, segments: route.path ? route.path.split('/') : [] }));
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
      const path: Record<string, string> = {};
      const ok = candidate.segments.every((pattern, i) => {
        if (pattern.startsWith(':')) {
          path[pattern.slice(1)] = segments[i];
          return true;
        }
        return pattern === segments[i];
      });
      if (ok) return { resource: candidate.resource, route: candidate.route, path };
    }
    return null;
  }
}

function specificity(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const wa = a[i].startsWith(':');
    const wb = b[i].startsWith(':');
    if (wa !== wb) return wa ? 1 : -1;
  }
  return 0;
}
