import { apiResources } from '../../src/http/resources';
import { declaredIdSources } from '../../src/http/modelParams';
import type { RouteDef } from '../../src/http/routeTable';

/**
 * Every id a route takes is declared in the route table with its model and level (src/http/modelParams.ts), so that
 * the rule is read where the route is and shown in the OpenAPI document. An id is a path token (`:id`) or a
 * parameter named `id`, `…Id` or `resources` (other tokens, such as `:name` or `:algo`, are no ids). Ids that name no access-controlled model are listed here with why.
 */
const NOT_A_MODEL = new Map<string, string>([
  // Upload ids name an upload in progress, which belongs to the user who started it (checked by the command).
  ['DELETE file/upload/:id path:id', 'upload'],
  ['POST file/chunk param:uploadId', 'upload'],
  ['GET file/offset param:uploadId', 'upload'],
  ['POST file/completion param:uploadId', 'upload'],
  // Assetstores are configuration with no access list: every assetstore route is for site administrators only, and
  // loads the store from the log itself (src/commands/assetstoreCommands.ts).
  ['GET assetstore/:id path:id', 'assetstore'],
  ['PUT assetstore/:id path:id', 'assetstore'],
  ['DELETE assetstore/:id path:id', 'assetstore'],
  ['GET assetstore/:id/files path:id', 'assetstore'],
  ['POST assetstore/:id/import path:id', 'assetstore'],
  ['PUT file/:id/move param:assetstoreId', 'assetstore'],
  // An S3 access key id names credentials, not a model.
  ['POST assetstore param:accessKeyId', 'S3 credentials'],
  ['PUT assetstore/:id param:accessKeyId', 'S3 credentials'],
  // Filters of an administrator's listing and cleanup of uploads in progress: an id that names nothing matches none.
  ...['GET', 'DELETE'].flatMap((method) =>
    ['uploadId', 'userId', 'parentId', 'assetstoreId'].map((name): [string, string] => [
      `${method} system/uploads param:${name}`,
      'upload filter',
    ]),
  ),
]);

const ID_PARAM = /^(id|\w+Id|resources)$/;

function undeclaredIds(resource: string, route: RouteDef): string[] {
  const declared = new Set(
    Object.values(route.models ?? {})
      .flatMap(declaredIdSources)
      .map((s) => `${s.in}:${s.name}`),
  );
  const tokens = [...route.path.matchAll(/:(\w+)/g)].filter((m) => ID_PARAM.test(m[1])).map((m) => `path:${m[1]}`);
  const params = route.params.filter((p) => ID_PARAM.test(p.name)).map((p) => `param:${p.name}`);
  return [...tokens, ...params]
    .filter((source) => !declared.has(source))
    .map((source) => `${route.method} ${resource}${route.path ? '/' + route.path : ''} ${source}`)
    .filter((key) => !NOT_A_MODEL.has(key));
}

describe('route table: model parameters', () => {
  it('declares the model and level of every id a route takes', () => {
    const missing = apiResources.flatMap((resource) =>
      resource.routes.flatMap((route) => undeclaredIds(resource.name, route)),
    );
    expect(missing).toEqual([]);
  });

  it('lists no exemption that no longer matches a route', () => {
    const all = new Set(
      apiResources.flatMap((resource) =>
        resource.routes.flatMap((route) => {
          const tokens = [...route.path.matchAll(/:(\w+)/g)].map((m) => `path:${m[1]}`);
          const params = route.params.map((p) => `param:${p.name}`);
          return [...tokens, ...params].map(
            (source) => `${route.method} ${resource.name}${route.path ? '/' + route.path : ''} ${source}`,
          );
        }),
      ),
    );
    expect([...NOT_A_MODEL.keys()].filter((key) => !all.has(key))).toEqual([]);
  });
});
