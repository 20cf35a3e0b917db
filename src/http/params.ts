import { z } from 'zod';
import { RestError } from '../domain/errors';
import type { Paging } from '../domain/paging';

/**
 * Declared route parameters. Each spec knows how to coerce a raw string exactly as Girder's `describeRoute`
 * does (same messages), and carries a zod schema of the coerced value for the OpenAPI document.
 * Params are processed in declaration order, so the first failing one decides the error.
 */
export interface ParamSpec<N extends string = string, T = unknown> {
  name: N;
  /** `query`: query string or urlencoded form; `body`: the JSON request body (Girder's jsonParam paramType body). */
  in: 'query' | 'body';
  required: boolean;
  description: string;
  schema: z.ZodType;
  /** The value used when the parameter is absent, shown in the OpenAPI document. */
  default?: unknown;
  /** Replaces the schema derived from `schema` in the OpenAPI document when zod cannot say it exactly. */
  openApiSchema?: Record<string, unknown>;
  /** Coerces the raw value (undefined when absent). Throws RestError with the reference's message. */
  parse(raw: string | undefined): T;
}

interface Common {
  description?: string;
}

const requiredMessage = (name: string) => `Parameter '${name}' is required.`;

function make<N extends string, T>(
  name: N,
  required: boolean,
  description: string | undefined,
  schema: z.ZodType,
  coerce: (raw: string) => T,
  fallback: () => T,
  where: 'query' | 'body' = 'query',
  openApiSchema?: Record<string, unknown>,
): ParamSpec<N, T> {
  const defaultValue = fallback();
  return {
    name,
    in: where,
    required,
    description: description ?? '',
    schema,
    ...(defaultValue !== undefined && !required ? { default: defaultValue } : {}),
    ...(openApiSchema ? { openApiSchema } : {}),
    parse(raw) {
      if (raw === undefined) {
        if (required) throw new RestError(requiredMessage(name));
        return fallback();
      }
      return coerce(raw);
    },
  };
}

/** Girder's toBool: true iff the trimmed, lower-cased value is true, on, 1 or yes; anything else is false. */
export const toBool = (raw: string): boolean => ['true', 'on', '1', 'yes'].includes(raw.trim().toLowerCase());

/** Python's `int(value)`: surrounding whitespace, a sign and `_` between digits are accepted. */
export function parseInteger(name: string, raw: string): number {
  const text = raw.trim();
  if (!/^[+-]?\d+(_\d+)*$/.test(text)) throw new RestError(`Invalid value for integer parameter ${name}: ${raw}.`);
  return Number.parseInt(text.replace(/_/g, ''), 10);
}

function checkEnum<V extends string>(name: string, value: string, allowed: readonly V[]): V {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new RestError(`Invalid value for ${name}: "${value}". Allowed values: ${allowed.join(', ')}.`);
  }
  return value as V;
}

export function parseJson(name: string, raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new RestError(`Parameter ${name} must be valid JSON.`);
  }
}

type JsonShape = 'object' | 'array' | 'any';

function checkJsonShape(name: string, value: unknown, shape: JsonShape): void {
  if (shape === 'object' && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new RestError(`Parameter ${name} must be a JSON object.`);
  }
  if (shape === 'array' && !Array.isArray(value)) throw new RestError(`Parameter ${name} must be a JSON array.`);
}

export const param = {
  string<N extends string>(name: N, opts: Common & { required?: boolean; strip?: boolean; default?: string } = {}) {
    const strip = (s: string) => (opts.strip ? s.trim() : s);
    return make<N, string | undefined>(
      name,
      opts.required ?? false,
      opts.description,
      z.string(),
      strip,
      () => opts.default,
    );
  },
  requiredString<N extends string>(name: N, opts: Common & { strip?: boolean } = {}) {
    return make<N, string>(name, true, opts.description, z.string(), (s) => (opts.strip ? s.trim() : s), () => '');
  },
  bool<N extends string>(name: N, opts: Common & { default?: boolean } = {}) {
    return make<N, boolean | undefined>(name, false, opts.description, z.boolean(), toBool, () => opts.default);
  },
  flag<N extends string>(name: N, defaultValue: boolean, opts: Common = {}) {
    return make<N, boolean>(name, false, opts.description, z.boolean().default(defaultValue), toBool, () => defaultValue);
  },
  int<N extends string>(name: N, opts: Common & { default?: number; required?: boolean } = {}) {
    return make<N, number | undefined>(
      name,
      opts.required ?? false,
      opts.description,
      z.number().int(),
      (raw) => parseInteger(name, raw),
      () => opts.default,
    );
  },
  enum<N extends string, V extends string>(
    name: N,
    values: readonly V[],
    opts: Common & { default?: V; required?: boolean; strip?: boolean } = {},
  ) {
    return make<N, V | undefined>(
      name,
      opts.required ?? false,
      opts.description,
      z.enum(values as unknown as [V, ...V[]]),
      (raw) => checkEnum(name, opts.strip ? raw.trim() : raw, values),
      () => opts.default,
    );
  },
  /** A JSON-encoded query/form parameter (Girder's jsonParam). */
  json<N extends string, T = unknown>(
    name: N,
    opts: Common & { shape?: JsonShape; required?: boolean; validate?: (value: unknown) => T } = {},
  ) {
    return make<N, T | undefined>(
      name,
      opts.required ?? false,
      opts.description,
      opts.shape === 'array' ? z.array(z.unknown()) : opts.shape === 'object' ? z.record(z.string(), z.unknown()) : z.unknown(),
      (raw) => {
        const value = parseJson(name, raw);
        checkJsonShape(name, value, opts.shape ?? 'any');
        return opts.validate ? opts.validate(value) : (value as T);
      },
      () => undefined,
    );
  },
  /**
   * A JSON parameter carried as the request body (Girder's jsonParam with paramType='body'). When the same name is
   * present in the query or form it is taken from there instead (the router passes it in as raw).
   */
  jsonBody<N extends string, T = unknown>(name: N, opts: Common & { shape?: JsonShape; validate?: (value: unknown) => T } = {}) {
    const spec = param.json<N, T>(name, { ...opts, required: true });
    return { ...spec, in: 'body' as const };
  },
};

/** Reads the JSON request body for a body parameter, with the reference's messages. */
export function parseJsonBody(name: string, body: string | undefined): string {
  if (body === undefined || body.length === 0) throw new RestError(`JSON parameter ${name} must be passed in request body.`);
  try {
    JSON.parse(body);
  } catch {
    // Python's json.loads reads NaN/Infinity/-Infinity and hands them to parse_constant, which Girder rejects.
    const { text, first } = replaceJsonConstants(body);
    if (first !== undefined && isJson(text)) throw new RestError(`Error: "${first}" is not valid JSON.`);
    throw new RestError('Invalid JSON passed in request body.');
  }
  return body;
}

const isJson = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** Replaces the bare constants NaN, Infinity and -Infinity (outside strings) with null; reports the first one. */
function replaceJsonConstants(body: string): { text: string; first: string | undefined } {
  let first: string | undefined;
  let out = '';
  let i = 0;
  while (i < body.length) {
    const c = body[i];
    if (c === '"') {
      let j = i + 1;
      while (j < body.length && body[j] !== '"') j += body[j] === '\\' ? 2 : 1;
      out += body.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    const constant = ['-Infinity', 'Infinity', 'NaN'].find((k) => body.startsWith(k, i));
    if (constant) {
      first ??= constant;
      out += 'null';
      i += constant.length;
      continue;
    }
    out += c;
    i++;
  }
  return { text: out, first };
}

export const SORT_DIRECTIONS = ['1', '-1'] as const;

/** `limit`, `offset`, `sort`, `sortdir` as Girder's pagingParams (limit 0 means no limit). */
export function pagingParams(defaultSort: string) {
  return [
    param.int('limit', { default: 50, description: 'Result set size limit (0 for no limit).' }),
    param.int('offset', { default: 0, description: 'Offset into result set.' }),
    param.string('sort', { default: defaultSort, description: 'Field to sort the result set by.' }),
    make<'sortdir', 1 | -1>(
      'sortdir',
      false,
      'Sort order: 1 for ascending, -1 for descending.',
      z.union([z.literal(1), z.literal(-1)]),
      (raw) => {
        const n = parseInteger('sortdir', raw);
        return Number(checkEnum('sortdir', String(n), SORT_DIRECTIONS)) as 1 | -1;
      },
      () => 1,
      'query',
      { type: 'integer', enum: [1, -1] },
    ),
  ] as const;
}

export function pagingOf(params: { limit?: number; offset?: number; sort?: string; sortdir?: 1 | -1 }): Paging {
  return { limit: params.limit ?? 50, offset: params.offset ?? 0, sort: params.sort ?? 'lowerName', sortdir: params.sortdir ?? 1 };
}
