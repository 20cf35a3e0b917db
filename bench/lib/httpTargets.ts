import { folderWithChildren, scenario, type Scenario } from './scenario';
import { startBare, type ServerProcess } from './serverProcess';

/** One autocannon request of a POST /folder load: each creates a folder of its own name in the admin's folder. */
type SetupRequest = (request: { path: string; method?: string }) => { path: string; method?: string };

/**
 * What the request-path benchmark loads (bench/http.bench.ts) and its CPU-per-request profile measures
 * (bench/prof/cpuPerRequest.ts): the scenario on `service`, a folder of 1k children, and a bare express process
 * answering the same JSON bytes as the service's `GET /folder/:id` and first page of 50. The caller stops `bare`.
 */
export interface HttpTargets {
  s: Scenario;
  bare: ServerProcess;
  /** The site admin's token header. */
  auth: Record<string, string>;
  urls: { bareGet: string; bareList: string; get: string; list: string; post: string };
  nextPost: SetupRequest;
}

export async function httpTargets(service: ServerProcess & { dataDir: string }): Promise<HttpTargets> {
  const s = await scenario(service);
  const one = await s.admin.call('GET', `/folder/${s.publicFolderId}`);
  const listed = await folderWithChildren(s, service.dataDir, 'listing 1k', 1000);
  const page = await s.admin.call('GET', '/folder', { parentType: 'folder', parentId: listed, limit: 50 });
  const bare = await startBare({
    one: { json: one.body },
    list: { json: page.body, headers: { 'Girder-Total-Count': page.headers.get('girder-total-count')! } },
  });
  const listQuery = `/folder?parentType=folder&parentId=${listed}&limit=50`;
  let n = 0;
  return {
    s,
    bare,
    auth: { 'Girder-Token': s.admin.token },
    urls: {
      bareGet: `${bare.api}/folder/${s.publicFolderId}`,
      bareList: `${bare.api}${listQuery}`,
      get: `${service.api}/folder/${s.publicFolderId}`,
      list: `${service.api}${listQuery}`,
      post: `${service.api}/folder`,
    },
    nextPost: (request) => ({
      ...request,
      method: 'POST',
      path: `/api/v1/folder?parentType=folder&parentId=${s.publicFolderId}&name=load%20${n++}`,
    }),
  };
}
