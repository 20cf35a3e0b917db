import type { HttpMethod, Resource } from '../../src/http/routeTable';
import { route } from '../../src/http/routeTable';
import { SAFE_INTEGER, pagingParams, param } from '../../src/http/params';
import { FOLDER_SORT } from '../../src/queries/sortableFields';
import { RestError, ValidationError } from '../../src/domain/errors';
import { Scope } from '../../src/domain/scopes';

/**
 * A test-only resource mounted at /api/v1/probe: routes that exercise the HTTP conventions (params, method override,
 * routing order, errors, rendering, hooks) where no real route shows them. Handlers echo what they received.
 */
const echoParams = [
  param.string('text'),
  param.flag('flag', true),
  param.bool('maybe'),
  param.int('count', { default: 7, range: SAFE_INTEGER }),
  param.enum('color', ['red', 'green'] as const),
  param.string('padded', { strip: true }),
] as const;

/** `<METHOD> /probe/params`: echoes the routed method, the coerced params and the raw ones. */
const echo = (method: HttpMethod) =>
  route({
    method,
    path: 'params',
    summary: 'Echo the coerced and raw parameters.',
    access: 'public',
    params: echoParams,
    handler: ({ params, rawParams }) => ({ route: `${method} params`, params, raw: rawParams }),
  });

export const probeResource: Resource = {
  name: 'probe',
  description: 'Test-only routes.',
  routes: [
    echo('GET'),
    echo('POST'),
    echo('PUT'),
    echo('PATCH'),
    echo('DELETE'),
    route({
      method: 'GET',
      path: 'json',
      summary: 'JSON query parameters.',
      access: 'public',
      params: [param.json('anything'), param.json('obj', { shape: 'object' }), param.json('list', { shape: 'array' })],
      handler: ({ params }) => params,
    }),
    route({
      method: 'PUT',
      path: 'body',
      summary: 'A JSON body parameter.',
      access: 'public',
      params: [param.string('before'), param.jsonBody('metadata', { shape: 'object' })],
      handler: ({ params }) => params,
    }),
    route({
      method: 'GET',
      path: 'paging',
      summary: 'Paging parameters.',
      access: 'public',
      params: pagingParams(FOLDER_SORT),
      handler: ({ params }) => params,
    }),
    route({
      method: 'GET',
      path: 'nameFirst',
      summary: 'Declaration order: name, then limit.',
      access: 'public',
      params: [param.requiredString('name'), param.int('limit')],
      handler: ({ params }) => params,
    }),
    route({
      method: 'GET',
      path: 'limitFirst',
      summary: 'Declaration order: limit, then name.',
      access: 'public',
      params: [param.int('limit'), param.requiredString('name')],
      handler: ({ params }) => params,
    }),
    route({
      method: 'GET',
      path: 'private',
      summary: 'A user route with a required parameter.',
      access: 'user',
      params: [param.requiredString('name')],
      handler: ({ params, principal }) => ({ name: params.name, login: principal.user?.login }),
    }),
    route({
      method: 'GET',
      path: 'admin',
      summary: 'An admin route.',
      access: 'admin',
      params: [],
      handler: () => ({ ok: true }),
    }),
    route({
      method: 'GET',
      path: 'scoped',
      summary: 'A token route needing DATA_READ.',
      access: 'token',
      scope: [Scope.DATA_READ],
      params: [],
      handler: () => ({ ok: true }),
    }),
    route({
      method: 'GET',
      path: 'boom',
      summary: 'Throws a plain Error.',
      access: 'public',
      params: [],
      handler: () => {
        throw new Error('boom');
      },
    }),
    route({
      method: 'GET',
      path: 'invalid',
      summary: 'Throws a ValidationError naming a field.',
      access: 'public',
      params: [],
      handler: () => {
        throw new ValidationError('Bad value.', 'field1');
      },
    }),
    route({
      method: 'GET',
      path: 'teapot',
      summary: 'Throws a RestError with a status and extra data.',
      access: 'public',
      params: [],
      handler: () => {
        throw new RestError('I am a teapot.', 418, { spout: 1 });
      },
    }),
    route({
      method: 'GET',
      path: 'doc',
      summary: 'A document for rendering.',
      access: 'public',
      params: [],
      handler: () => ({ zeta: [1, 'two words'], alpha: { b: '<a & "b">', a: null }, empty: {}, none: [] }),
    }),
    route({
      method: 'GET',
      path: 'nothing',
      summary: 'Returns undefined.',
      access: 'public',
      params: [],
      handler: () => undefined,
    }),
    // Wildcard routes declared before the literal ones on purpose: literals must still win.
    route({
      method: 'GET',
      path: ':id/:sub',
      summary: 'Two wildcards.',
      access: 'public',
      params: [],
      handler: ({ path }) => ({ route: ':id/:sub', ...path }),
    }),
    route({
      method: 'GET',
      path: ':id/details',
      summary: 'Wildcard then literal.',
      access: 'public',
      params: [],
      handler: ({ path }) => ({ route: ':id/details', ...path }),
    }),
    route({
      method: 'GET',
      path: 'fixed/:sub',
      summary: 'Literal then wildcard.',
      access: 'public',
      params: [],
      handler: ({ path }) => ({ route: 'fixed/:sub', ...path }),
    }),
    route({
      method: 'GET',
      path: ':id',
      summary: 'One wildcard.',
      access: 'public',
      params: [],
      handler: ({ path }) => ({ route: ':id', ...path }),
    }),
    route({
      method: 'GET',
      path: 'thing/:id',
      summary: 'A user route for hook tests.',
      access: 'user',
      params: [param.string('extra')],
      handler: ({ path, params }) => ({ id: path.id, extra: params.extra ?? null, from: 'handler' }),
    }),
  ],
};
