import { startApi, type ApiClient } from '../support/apiClient';
import { probeResource } from '../support/probeResource';
import { apiResources } from '../../src/http/resources';

type Json = Record<string, any>;

/** Keywords an OpenAPI 3.0 Schema Object may use (3.0 is not full JSON Schema: no const, no type arrays, …). */
const SCHEMA_KEYWORDS = new Set([
  'title',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxProperties',
  'minProperties',
  'required',
  'enum',
  'type',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'items',
  'properties',
  'additionalProperties',
  'description',
  'format',
  'default',
  'nullable',
  'discriminator',
  'readOnly',
  'writeOnly',
  'xml',
  'externalDocs',
  'example',
  'deprecated',
  '$ref',
]);
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object']);

function checkSchema(schema: Json, where: string, errors: string[]): void {
  for (const [key, value] of Object.entries(schema)) {
    if (!SCHEMA_KEYWORDS.has(key) && !key.startsWith('x-')) errors.push(`${where}: keyword ${key} is not OpenAPI 3.0`);
    if (key === 'type' && !TYPES.has(value as string)) errors.push(`${where}: type ${JSON.stringify(value)}`);
    if (['items', 'not'].includes(key) || (key === 'additionalProperties' && typeof value === 'object'))
      checkSchema(value as Json, `${where}.${key}`, errors);
    if (['allOf', 'anyOf', 'oneOf'].includes(key))
      (value as Json[]).forEach((s, i) => checkSchema(s, `${where}.${key}[${i}]`, errors));
    if (key === 'properties')
      for (const [p, s] of Object.entries(value as Json)) checkSchema(s as Json, `${where}.properties.${p}`, errors);
  }
}

/** Structural validation of an OpenAPI 3.0 document: the rules a validator would apply to what we generate. */
function validateOpenApi(doc: Json): string[] {
  const errors: string[] = [];
  if (!/^3\.0\.\d+$/.test(doc.openapi)) errors.push(`openapi: ${doc.openapi}`);
  if (typeof doc.info?.title !== 'string' || typeof doc.info?.version !== 'string')
    errors.push('info needs title and version');
  const operationIds = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    if (!path.startsWith('/')) errors.push(`${path}: must start with /`);
    const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    for (const [method, op] of Object.entries(item as Json)) {
      const where = `${method.toUpperCase()} ${path}`;
      if (!['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'].includes(method))
        errors.push(`${where}: method`);
      if (operationIds.has(op.operationId)) errors.push(`${where}: duplicate operationId ${op.operationId}`);
      operationIds.add(op.operationId);
      if (!op.responses || Object.keys(op.responses).length === 0) errors.push(`${where}: no responses`);
      for (const [code, response] of Object.entries(op.responses as Json)) {
        if (!/^[1-5]\d\d$|^default$/.test(code)) errors.push(`${where}: response code ${code}`);
        if (typeof (response as Json).description !== 'string')
          errors.push(`${where} ${code}: response needs a description`);
      }
      const seen = new Set<string>();
      for (const param of op.parameters as Json[]) {
        const key = `${param.in}:${param.name}`;
        if (seen.has(key)) errors.push(`${where}: duplicate parameter ${key}`);
        seen.add(key);
        if (!['query', 'header', 'path', 'cookie'].includes(param.in))
          errors.push(`${where}: parameter ${param.name} in ${param.in}`);
        if (param.in === 'path' && param.required !== true)
          errors.push(`${where}: path parameter ${param.name} must be required`);
        if (typeof param.required !== 'boolean') errors.push(`${where}: ${param.name}.required`);
        if (!param.schema) errors.push(`${where}: ${param.name} has no schema`);
        else checkSchema(param.schema, `${where} ${param.name}`, errors);
      }
      const declaredPath = (op.parameters as Json[]).filter((p) => p.in === 'path').map((p) => p.name);
      if (JSON.stringify(declaredPath.sort()) !== JSON.stringify([...templated].sort()))
        errors.push(`${where}: path params ${declaredPath.join(',')} vs ${templated.join(',')}`);
      for (const media of Object.values((op.requestBody?.content ?? {}) as Json)) {
        if ((media as Json).schema) checkSchema((media as Json).schema, `${where} body`, errors);
      }
    }
  }
  const refs = new Set(JSON.stringify(doc).match(/"\$ref":"[^"]*"/g) ?? []);
  for (const ref of refs) {
    const target = ref.slice('"$ref":"'.length, -1);
    const resolved = target
      .replace(/^#\//, '')
      .split('/')
      .reduce<any>((node, part) => node?.[part], doc);
    if (resolved === undefined) errors.push(`unresolved ${target}`);
  }
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {}))
    checkSchema(schema as Json, `components.schemas.${name}`, errors);
  return errors;
}

describe('OpenAPI document and Swagger UI', () => {
  let api: ApiClient;
  let doc: Json;
  const resources = [...apiResources, probeResource];

  beforeAll(async () => {
    api = await startApi({}, { resources: [probeResource] });
    const res = await api.anonymous().get('/describe');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    doc = JSON.parse(res.text);
  });
  afterAll(() => api.close());

  it('is a valid OpenAPI 3 document', () => {
    expect(validateOpenApi(doc)).toEqual([]);
    expect(doc.info).toEqual(
      expect.objectContaining({ title: 'Folder Service', version: api.runtime.services.version }),
    );
    expect(doc.servers).toEqual([{ url: '/api/v1' }]);
    expect(doc.tags.map((t: Json) => t.name)).toEqual(resources.map((r) => r.name));
  });

  it('describes every route of the route table, and nothing else', () => {
    const expected = resources.flatMap((r) =>
      r.routes.map((route) =>
        `${route.method.toLowerCase()} /${r.name}${route.path ? `/${route.path}` : ''}`.replace(/:(\w+)/g, '{$1}'),
      ),
    );
    const described = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
      Object.keys(item as Json).map((m) => `${m} ${path}`),
    );
    expect(described.sort()).toEqual(expected.sort());
  });

  it('gives each parameter its place, required flag and schema, in declaration order', () => {
    const params = doc.paths['/probe/params'].get.parameters;
    expect(params).toEqual([
      { name: 'text', in: 'query', required: false, description: '', schema: { type: 'string' } },
      { name: 'flag', in: 'query', required: false, description: '', schema: { type: 'boolean', default: true } },
      { name: 'maybe', in: 'query', required: false, description: '', schema: { type: 'boolean' } },
      { name: 'count', in: 'query', required: false, description: '', schema: { type: 'integer', default: 7 } },
      {
        name: 'color',
        in: 'query',
        required: false,
        description: '',
        schema: { type: 'string', enum: ['red', 'green'] },
      },
      { name: 'padded', in: 'query', required: false, description: '', schema: { type: 'string' } },
    ]);
    expect(doc.paths['/probe/nameFirst'].get.parameters.map((p: Json) => [p.name, p.required])).toEqual([
      ['name', true],
      ['limit', false],
    ]);
    const paging = doc.paths['/probe/paging'].get.parameters;
    expect(paging.map((p: Json) => [p.name, p.schema])).toEqual([
      ['limit', { type: 'integer', default: 50 }],
      ['offset', { type: 'integer', default: 0 }],
      ['sort', { type: 'string', default: 'lowerName' }],
      ['sortdir', { type: 'integer', enum: [1, -1], default: 1 }],
    ]);
    expect(doc.paths['/probe/json'].get.parameters.map((p: Json) => p.schema)).toEqual([
      {},
      { type: 'object', additionalProperties: {} },
      { type: 'array', items: {} },
    ]);
    const body = doc.paths['/probe/body'].put;
    expect(body.parameters).toEqual([
      { name: 'before', in: 'query', required: false, description: '', schema: { type: 'string' } },
    ]);
    expect(body.requestBody).toEqual({
      required: true,
      description: '',
      content: { 'application/json': { schema: { type: 'object', additionalProperties: {} } } },
    });
    expect(doc.paths['/probe/{id}/{sub}'].get.parameters).toEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
      { name: 'sub', in: 'path', required: true, schema: { type: 'string' } },
    ]);
  });

  it('states each route’s access mode and scopes as extensions', () => {
    expect(doc.paths['/probe/admin'].get['x-access']).toBe('admin');
    expect(doc.paths['/probe/private'].get['x-access']).toBe('user');
    expect(doc.paths['/probe/scoped'].get).toEqual(
      expect.objectContaining({ 'x-access': 'token', 'x-scope': ['core.data.read'] }),
    );
    expect(doc.paths['/user'].get).toEqual(
      expect.objectContaining({ 'x-access': 'public', 'x-scope': ['core.user_info.read'] }),
    );
    for (const item of Object.values(doc.paths as Json)) {
      for (const op of Object.values(item as Json)) {
        expect(['public', 'user', 'admin', 'token']).toContain((op as Json)['x-access']);
        expect(Array.isArray((op as Json)['x-scope'])).toBe(true);
      }
    }
    expect(doc.components.securitySchemes.serviceToken).toEqual({
      type: 'apiKey',
      in: 'header',
      name: 'Service-Token',
    });
  });

  it('states the model and level of each model parameter (x-model), as the route table declares them', () => {
    const xModel = (path: string, method: string, name: string) =>
      (doc.paths[path][method].parameters as Json[]).find((p) => p.name === name)?.['x-model'];
    expect(xModel('/folder/{id}', 'put', 'id')).toEqual([{ model: 'folder', level: 'WRITE' }]);
    expect(xModel('/folder/{id}', 'put', 'parentId')).toEqual([
      { model: 'parent named by parentType', level: 'WRITE', note: 'a move: both parentType and parentId' },
    ]);
    expect(xModel('/folder/{id}', 'get', 'id')).toEqual([
      {
        model: 'folder',
        level: 'READ',
        unless: 'at',
        note: 'with at: ADMIN on the folder now (a deleted folder: site administrators), checked by the read',
      },
    ]);
    expect(xModel('/folder', 'get', 'parentId')).toEqual([
      { model: 'parent named by parentType', level: 'READ', unless: 'at' },
      { model: 'parent named by parentType', level: 'ADMIN', onlyWith: 'at' },
    ]);
    expect(xModel('/folder/{id}/copy', 'post', 'parentId')).toEqual([
      { model: 'parent named by parentType', level: 'WRITE', default: 'the parent of source' },
    ]);
    expect(xModel('/item/{id}/copy', 'post', 'folderId')).toEqual([
      { model: 'folder', level: 'WRITE', default: 'the folder of source' },
    ]);
    expect(xModel('/resource', 'delete', 'resources')).toEqual([{ model: 'resource set', level: 'ADMIN' }]);
    expect(xModel('/api_key', 'get', 'userId')).toEqual([{ model: 'user', level: 'READ', othersSiteAdmin: true }]);
    // Every `{id}` of every path carries its rule (an upload in progress is no model: test/unit/routeModels.test.ts).
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      if (!path.includes('{id}') || path.startsWith('/probe') || path === '/file/upload/{id}') continue;
      for (const op of Object.values(item as Json)) {
        const id = ((op as Json).parameters as Json[]).find((p) => p.name === 'id' && p.in === 'path');
        expect({ path, rule: id?.['x-model'] }).toEqual({ path, rule: expect.any(Array) });
      }
    }
  });

  it('serves Swagger UI at /api/v1, loading its assets and the document', async () => {
    for (const url of ['/api/v1', '/api/v1/']) {
      const page = await api.site().get(url);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.text).toContain('<div id="swagger-ui"></div>');
      expect(page.text).toContain('<title>Folder Service API</title>');
      for (const asset of [
        '/api/v1/swagger-ui.css',
        '/api/v1/swagger-ui-bundle.js',
        '/api/v1/swagger-ui-standalone-preset.js',
        '/api/v1/swagger-ui-init.js',
      ]) {
        expect(page.text).toContain(`"${asset}"`);
      }
    }
    const bundle = await api.anonymous().get('/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect(bundle.headers['content-type']).toMatch(/javascript/);
    expect(bundle.text).toContain('SwaggerUIBundle');
    const css = await api.anonymous().get('/swagger-ui.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toMatch(/^text\/css/);
    const init = await api.anonymous().get('/swagger-ui-init.js');
    expect(init.status).toBe(200);
    expect(init.text).toContain('"swaggerUrl": "/api/v1/describe"');
  });
});
