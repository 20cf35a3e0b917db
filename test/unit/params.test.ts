import type { Request } from 'express';
import { RestError } from '../../src/domain/errors';
import { pagingOf, pagingParams, param, parseInteger, parseJsonBody, toBool } from '../../src/http/params';
import { FOLDER_SORT } from '../../src/queries/sortableFields';
import { collectParams, hasProcessableBody } from '../../src/http/requestParams';
import { routingMethod } from '../../src/http/apiRequests';
import { htmlOf, sortedJson, wantsHtml } from '../../src/http/render';
import { errorResponse } from '../../src/http/errorMapping';
import { AccessDeniedError, ValidationError } from '../../src/domain/errors';

const failure = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(RestError);
    expect((error as RestError).status).toBe(400);
    return (error as Error).message;
  }
  throw new Error('expected a RestError');
};

/** The parts of an express Request the param collection reads. */
function fakeRequest(options: {
  method?: string;
  url?: string;
  headers?: Record<string, string>;
  form?: boolean;
}): Request {
  const headers = Object.fromEntries(Object.entries(options.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    method: options.method ?? 'GET',
    originalUrl: options.url ?? '/api/v1/x',
    headers,
    get: (name: string) => headers[name.toLowerCase()],
    is: (type: string) => (options.form && type === 'application/x-www-form-urlencoded' ? type : false),
  } as unknown as Request;
}

describe('parameter coercion', () => {
  it('toBool: true|on|1|yes, any case, trimmed; anything else false', () => {
    for (const raw of ['true', 'True', 'TRUE', 'on', 'ON', '1', 'yes', 'Yes', '  yes  ', '\ttrue\n'])
      expect(toBool(raw)).toBe(true);
    for (const raw of ['False', 'false', '0', '', 'banana', 'no', 'off', '2', 'y', 't'])
      expect(toBool(raw)).toBe(false);
  });

  it('bool params default when absent; flags have a default, bools may stay undefined', () => {
    expect(param.flag('f', true).parse(undefined)).toBe(true);
    expect(param.flag('f', false).parse('yes')).toBe(true);
    expect(param.bool('b').parse(undefined)).toBeUndefined();
    expect(param.bool('b', { default: false }).parse(undefined)).toBe(false);
  });

  it('integers as Python int(): whitespace, sign, underscores; the raw value in the message', () => {
    expect(parseInteger('limit', ' 42 ')).toBe(42);
    expect(parseInteger('limit', '+3')).toBe(3);
    expect(parseInteger('limit', '-0')).toBe(-0);
    expect(parseInteger('limit', '1_000')).toBe(1000);
    for (const raw of ['abc', '1.0', '1e3', '', ' ', '_1', '1__0', '0x1f']) {
      expect(failure(() => parseInteger('limit', raw))).toBe(`Invalid value for integer parameter limit: ${raw}.`);
    }
    expect(param.int('n', { default: 5 }).parse(undefined)).toBe(5);
  });

  it('enums list their allowed values', () => {
    const color = param.enum('color', ['red', 'green'] as const, { default: 'red' });
    expect(color.parse(undefined)).toBe('red');
    expect(color.parse('green')).toBe('green');
    expect(failure(() => color.parse('Red'))).toBe('Invalid value for color: "Red". Allowed values: red, green.');
    expect(param.enum('mode', ['a'] as const, { strip: true }).parse(' a ')).toBe('a');
  });

  it('required parameters: single-quoted message, empty string counts as given', () => {
    const name = param.requiredString('name');
    expect(failure(() => name.parse(undefined))).toBe("Parameter 'name' is required.");
    expect(name.parse('')).toBe('');
    expect(failure(() => param.int('n', { required: true }).parse(undefined))).toBe("Parameter 'n' is required.");
    expect(param.requiredString('s', { strip: true }).parse('  x ')).toBe('x');
  });

  it('JSON parameters', () => {
    expect(param.json('j').parse('{"a": [1, null]}')).toEqual({ a: [1, null] });
    expect(param.json('j').parse('3')).toBe(3);
    expect(failure(() => param.json('j').parse('{a:1}'))).toBe('Parameter j must be valid JSON.');
    expect(failure(() => param.json('j').parse(''))).toBe('Parameter j must be valid JSON.');
    expect(failure(() => param.json('o', { shape: 'object' }).parse('[]'))).toBe('Parameter o must be a JSON object.');
    expect(failure(() => param.json('o', { shape: 'object' }).parse('"s"'))).toBe('Parameter o must be a JSON object.');
    expect(failure(() => param.json('a', { shape: 'array' }).parse('{}'))).toBe('Parameter a must be a JSON array.');
    expect(param.json('v', { validate: (value) => ({ wrapped: value }) }).parse('1')).toEqual({ wrapped: 1 });
  });

  it('JSON body parameters', () => {
    expect(failure(() => parseJsonBody('metadata', undefined))).toBe(
      'JSON parameter metadata must be passed in request body.',
    );
    expect(failure(() => parseJsonBody('metadata', Buffer.from('')))).toBe(
      'JSON parameter metadata must be passed in request body.',
    );
    expect(failure(() => parseJsonBody('metadata', Buffer.from('{')))).toBe('Invalid JSON passed in request body.');
    expect(failure(() => parseJsonBody('metadata', Buffer.from('{"a": Infinity}')))).toBe(
      'Error: "Infinity" is not valid JSON.',
    );
    expect(failure(() => parseJsonBody('metadata', Buffer.from('[NaN, -Infinity]')))).toBe(
      'Error: "NaN" is not valid JSON.',
    );
    expect(failure(() => parseJsonBody('metadata', Buffer.from('{"NaN": 1,}')))).toBe(
      'Invalid JSON passed in request body.',
    );
    expect(parseJsonBody('metadata', Buffer.from('{"k": "NaN \\" Infinity"}'))).toBe('{"k": "NaN \\" Infinity"}');
    expect(failure(() => parseJsonBody('metadata', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])))).toBe(
      'JSON parameter metadata: the request body is not valid UTF-8.',
    );
    const spec = param.jsonBody('metadata', { shape: 'object' });
    expect(spec.in).toBe('body');
    expect(spec.required).toBe(true);
  });

  it('paging parameters', () => {
    const [limit, offset, sort, sortdir] = pagingParams(FOLDER_SORT);
    expect([limit.parse(undefined), offset.parse(undefined), sort.parse(undefined), sortdir.parse(undefined)]).toEqual([
      50,
      0,
      'lowerName',
      1,
    ]);
    expect(sortdir.parse(' -1')).toBe(-1);
    expect(failure(() => sortdir.parse('2'))).toBe('Invalid value for sortdir: "2". Allowed values: 1, -1.');
    expect(failure(() => sortdir.parse('up'))).toBe('Invalid value for integer parameter sortdir: up.');
    expect(pagingOf({})).toEqual({ limit: 50, offset: 0, sort: 'lowerName', sortdir: 1 });
  });

  it('records defaults for the OpenAPI document', () => {
    expect(param.int('n', { default: 5 }).default).toBe(5);
    expect(param.flag('f', false).default).toBe(false);
    expect('default' in param.string('s')).toBe(false);
    expect('default' in param.requiredString('s')).toBe(false);
  });
});

describe('request parameter collection', () => {
  it('merges query and form, decoding + and %XX, keeping empty values', () => {
    const req = fakeRequest({ method: 'POST', url: '/api/v1/x?a=1+2&b=%C3%A9&c=&d', form: true });
    expect(collectParams(req, Buffer.from('e=f%26g&h=')).raw).toEqual({
      a: '1 2',
      b: 'é',
      c: '',
      d: '',
      e: 'f&g',
      h: '',
    });
  });

  it('keeps a non-form body as text for body parameters', () => {
    const req = fakeRequest({ method: 'PUT', url: '/api/v1/x?a=1' });
    expect(collectParams(req, Buffer.from('{"x":1}'))).toEqual({ raw: { a: '1' }, bodyBytes: Buffer.from('{"x":1}') });
  });

  it('rejects a name given twice', () => {
    expect(failure(() => collectParams(fakeRequest({ url: '/x?a=1&a=1' }), undefined))).toBe(
      'Parameter "a" must not be specified multiple times.',
    );
    const form = fakeRequest({ method: 'POST', url: '/x?a=1', form: true });
    expect(failure(() => collectParams(form, Buffer.from('a=2')))).toBe(
      'Parameter "a" must not be specified multiple times.',
    );
  });

  it('reads bodies by the request method: POST/PUT/PATCH when announced, DELETE only with a length', () => {
    for (const method of ['POST', 'PUT', 'PATCH']) {
      expect(hasProcessableBody(fakeRequest({ method, headers: { 'Content-Length': '3' } }))).toBe(true);
      expect(hasProcessableBody(fakeRequest({ method, headers: { 'Transfer-Encoding': 'chunked' } }))).toBe(true);
      expect(hasProcessableBody(fakeRequest({ method }))).toBe(false);
    }
    expect(hasProcessableBody(fakeRequest({ method: 'DELETE', headers: { 'Content-Length': '3' } }))).toBe(true);
    expect(hasProcessableBody(fakeRequest({ method: 'DELETE', headers: { 'Transfer-Encoding': 'chunked' } }))).toBe(
      false,
    );
    expect(hasProcessableBody(fakeRequest({ method: 'GET', headers: { 'Content-Length': '3' } }))).toBe(false);
  });

  it('takes the routing method from the last override header present, on POST only', () => {
    expect(routingMethod(fakeRequest({ method: 'POST' }))).toBe('POST');
    expect(routingMethod(fakeRequest({ method: 'POST', headers: { 'X-HTTP-Method-Override': 'put' } }))).toBe('PUT');
    expect(
      routingMethod(
        fakeRequest({ method: 'POST', headers: { 'X-HTTP-Method-Override': 'put', 'X-HTTP-Method': 'patch' } }),
      ),
    ).toBe('PATCH');
    expect(
      routingMethod(
        fakeRequest({ method: 'POST', headers: { 'X-Method-Override': 'delete', 'X-HTTP-Method': 'patch' } }),
      ),
    ).toBe('DELETE');
    expect(routingMethod(fakeRequest({ method: 'PUT', headers: { 'X-HTTP-Method-Override': 'DELETE' } }))).toBe('PUT');
    expect(routingMethod(fakeRequest({ method: 'HEAD' }))).toBe('GET');
  });
});

describe('rendering and error mapping', () => {
  it('chooses HTML only when text/html ranks before application/json', () => {
    expect(wantsHtml(undefined)).toBe(false);
    expect(wantsHtml('text/html')).toBe(true);
    expect(wantsHtml('application/json, text/html')).toBe(false);
    expect(wantsHtml('text/html;q=0.1, application/json;q=0.2')).toBe(false);
    expect(wantsHtml('application/json;q=0, text/html;q=0.1')).toBe(true);
    expect(wantsHtml('TEXT/HTML')).toBe(true);
  });

  it('sorts keys and renders HTML in the reference format', () => {
    expect(sortedJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}',
    );
    expect(htmlOf({ k: "it's <b>" })).toBe(
      '<div style="font-family:monospace;">{<br />&nbsp;&nbsp;&nbsp;&nbsp;&quot;k&quot;:&nbsp;&quot;it&#x27;s&nbsp;&lt;b&gt;&quot;<br />}</div>',
    );
    expect(htmlOf(null)).toBe('<div style="font-family:monospace;">null</div>');
  });

  it('maps typed errors to statuses and bodies', () => {
    const opts = { loggedIn: false, production: false, requestId: 'r' };
    expect(errorResponse(new RestError('x'), opts)).toEqual({ status: 400, body: { message: 'x', type: 'rest' } });
    expect(errorResponse(new RestError('x', 404, [1]), opts)).toEqual({
      status: 404,
      body: { message: 'x', type: 'rest', extra: [1] },
    });
    expect(errorResponse(new ValidationError('v'), opts)).toEqual({
      status: 400,
      body: { message: 'v', type: 'validation' },
    });
    expect(errorResponse(new AccessDeniedError('a'), opts).status).toBe(401);
    expect(errorResponse(new AccessDeniedError('a'), { ...opts, loggedIn: true }).status).toBe(403);
    const internal = errorResponse(new TypeError("can't"), opts);
    expect(internal.status).toBe(500);
    expect(internal.body.message).toBe(`TypeError: TypeError("can't")`);
    expect(errorResponse('thrown string', opts).body.message).toBe("Error: Error('thrown string')");
    expect(errorResponse(new Error('x'), { ...opts, production: true })).toEqual({
      status: 500,
      body: { message: 'An unexpected error occurred on the server.', type: 'internal', uid: 'r' },
    });
  });
});
