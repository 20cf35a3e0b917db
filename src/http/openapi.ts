import { z } from 'zod';
import type { Resource } from './routeTable';
import type { ParamSpec } from './params';
import { declaredIdSources, describeModelDecl, type ModelDecl, type ModelDecls } from './modelParams';

const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** The OpenAPI 3 document, generated from the same route table that drives routing and validation. */
export function openApiDocument(resources: Resource[], version: string): Record<string, unknown> {
  // Maps while building: path and method names are keys, never properties of an object's prototype.
  const paths = new Map<string, Map<string, unknown>>();
  for (const resource of resources) {
    for (const route of resource.routes) {
      const openPath = `/${resource.name}${route.path ? '/' + route.path : ''}`.replace(/:(\w+)/g, '{$1}');
      const modelOf = modelsByIdSource(route.models);
      const pathParams = [...route.path.matchAll(/:(\w+)/g)].map((m) => ({
        name: m[1],
        in: 'path',
        required: true,
        schema: { type: 'string' },
        ...modelExtension(modelOf.get(`path:${m[1]}`)),
      }));
      const queryParams = route.params
        .filter((p) => p.in === 'query')
        .map((p) => ({
          name: p.name,
          in: 'query',
          required: p.required,
          description: p.description,
          schema: paramSchema(p),
          ...modelExtension(modelOf.get(`param:${p.name}`)),
        }));
      const bodyParam = route.params.find((p) => p.in === 'body');
      const operation: Record<string, unknown> = {
        tags: [resource.name],
        summary: route.summary,
        operationId: `${route.method.toLowerCase()}_${resource.name}${route.path ? '_' + route.path.replace(/[/:]+/g, '_') : ''}`,
        parameters: [...pathParams, ...queryParams],
        'x-access': route.access,
        'x-scope': route.scope ?? ['core.user_auth'],
        ...(route.cookie ? { 'x-cookie-auth': true } : {}),
        responses: {
          '200': { description: 'Success', content: { [route.produces ?? 'application/json']: {} } },
          '400': { description: 'Invalid request', content: { 'application/json': { schema: ERROR_REF } } },
          '401': {
            description: 'Access denied to an anonymous caller',
            content: { 'application/json': { schema: ERROR_REF } },
          },
          '403': {
            description: 'Access denied to a logged-in caller',
            content: { 'application/json': { schema: ERROR_REF } },
          },
          '500': { description: 'Unexpected failure', content: { 'application/json': { schema: ERROR_REF } } },
        },
      };
      if (bodyParam) {
        operation.requestBody = {
          required: true,
          description: bodyParam.description,
          content: { 'application/json': { schema: paramSchema(bodyParam) } },
        };
      } else if (route.rawBody) {
        operation.requestBody = {
          required: false,
          content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
        };
      }
      const operations = paths.get(openPath) ?? new Map<string, unknown>();
      paths.set(openPath, operations.set(route.method.toLowerCase(), operation));
    }
  }
  return {
    openapi: '3.0.3',
    info: {
      title: 'Folder Service',
      version,
      description: 'Event-sourced data-management REST API (Girder-compatible folder interface).',
    },
    servers: [{ url: '/api/v1' }],
    tags: resources.map((r) => ({ name: r.name, description: r.description })),
    paths: Object.fromEntries([...paths].map(([path, operations]) => [path, Object.fromEntries(operations)])),
    components: {
      securitySchemes: {
        serviceToken: { type: 'apiKey', in: 'header', name: 'Service-Token' },
        tokenParam: { type: 'apiKey', in: 'query', name: 'token' },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['message', 'type'],
          properties: {
            message: { type: 'string' },
            type: { type: 'string', enum: ['rest', 'access', 'validation', 'internal'] },
            field: { type: 'string' },
            extra: {},
            trace: { type: 'array', items: { type: 'string' } },
          },
        },
      },
    },
    security: [{ serviceToken: [] }, { tokenParam: [] }, {}],
  };
}

/** Each declared model by the path token or parameter carrying its id (`path:id`, `param:parentId`). */
function modelsByIdSource(models: ModelDecls | undefined): Map<string, ModelDecl[]> {
  const bySource = new Map<string, ModelDecl[]>();
  for (const decl of Object.values(models ?? {}))
    for (const source of declaredIdSources(decl)) {
      const key = `${source.in}:${source.name}`;
      bySource.set(key, [...(bySource.get(key) ?? []), decl]);
    }
  return bySource;
}

/**
 * `x-model`: the model a parameter names and the level the caller needs on it (Girder's modelParam), one rule per
 * declaration (a parameter may be read at one level normally and another in a mode, e.g. with `at`).
 */
function modelExtension(decls: ModelDecl[] | undefined): Record<string, unknown> {
  return decls ? { 'x-model': decls.map(describeModelDecl) } : {};
}

function paramSchema(spec: ParamSpec): Record<string, unknown> {
  const schema = spec.openApiSchema ? { ...spec.openApiSchema } : jsonSchema(spec.schema);
  if (spec.default !== undefined) schema.default = spec.default;
  if (spec.secret) schema.format = 'password';
  return schema;
}

const SAFE_INTEGER_BOUNDS = { minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  try {
    const { $schema, ...rest } = z.toJSONSchema(schema, { target: 'openapi-3.0', unrepresentable: 'any' }) as Record<
      string,
      unknown
    >;
    // zod bounds every integer by the safe-integer range; that says nothing to a client.
    if (
      rest.type === 'integer' &&
      rest.minimum === SAFE_INTEGER_BOUNDS.minimum &&
      rest.maximum === SAFE_INTEGER_BOUNDS.maximum
    ) {
      delete rest.minimum;
      delete rest.maximum;
    }
    return rest;
  } catch {
    return {};
  }
}
