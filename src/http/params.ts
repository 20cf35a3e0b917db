import { z } from 'zod';
import { RestError } from '../domain/errors';
import { checkUserJson } from '../domain/userJson';
import { parseIsoTime } from '../domain/time';
import { strictUtf8 } from '../domain/strictUtf8';
import { checkExactNumbers } from '../domain/exactNumbers';
import type { Paging } from '../domain/paging';
import type { Viewer } from '../domain/access';
import { checkSort, type SortKeys } from '../domain/sortKeys';

/**
 * Declared route parameters. Each spec knows how to coerce a raw string exactly as Girder's `describeRoute`
 * does (same messages), and carries a zod schema of the coerced value for the OpenAPI document.
 * Params are processed in declaration order, so the first failing one decides the error.
 */
/** What a parameter holds; the hostile-input tests generate values from it (test/http/hostileInput.test.ts). */
type ParamKind = 'string' | 'bool' | 'int' | 'enum' | 'json' | 'date';

export interface ParamSpec<N extends string = string, T = unknown> {
  name: N;
  kind: ParamKind;
  /** For `int`: the accepted range (both ends included). */
  range?: IntRange;
  /** For `enum`: the accepted values. */
  values?: readonly string[];
  /** `query`: query string or urlencoded form; `body`: the JSON request body (Girder's jsonParam paramType body). */
  in: 'query' | 'body';
  required: boolean;
  description: string;
  schema: z.ZodType;
  /** The value used when the parameter is absent, shown in the OpenAPI document. */
  default?: unknown;
  /** Replaces the schema derived from `schema` in the OpenAPI document when zod cannot say it exactly. */
  openApiSchema?: Record<string, unknown>;
  /**
   * A password, token, key or one-time code: its value never reaches the log (src/http/secrets.ts builds the logged
   * URL from the declarations) and the OpenAPI document marks it `format: password`. Declared on string parameters,
   * whose parsing never puts the value in an error message.
   */
  secret?: true;
  /**
   * Coerces the raw value (undefined when absent). Throws RestError with the reference's message. `viewer` is the
   * caller, for the few values whose validity depends on who asks (a listing's `sort`, domain/sortKeys.ts).
   */
  parse(raw: string | undefined, viewer?: Viewer | null): T;
}

interface Common {
  description?: string;
}

/** Options of a string parameter that may hold a secret (see {@link ParamSpec.secret}). */
interface MaybeSecret {
  secret?: boolean;
}

const secretFlag = (opts: MaybeSecret) => (opts.secret === true ? { secret: true as const } : {});

/** A parameter declared `required: true` is never undefined (its parse throws when it is absent). */
type Given<T, Required extends boolean> = Required extends true ? T : T | undefined;

const requiredMessage = (name: string) => `Parameter '${name}' is required.`;

function make<N extends string, T>(
  kind: ParamKind,
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
    kind,
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

/** An inclusive range of safe integers. */
export interface IntRange {
  min: number;
  max: number;
}

/** Counts, offsets and sizes: from 0 to the largest integer a JavaScript number holds exactly (2^53 - 1). */
const NON_NEGATIVE: IntRange = { min: 0, max: Number.MAX_SAFE_INTEGER };
/** Any integer a JavaScript number holds exactly (for values whose sign the domain judges with its own message). */
export const SAFE_INTEGER: IntRange = { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER };
/** Token lifetimes in days: at least a day, at most 100 years (36,525 days), so that every expiry is a valid date. */
export const DURATION_DAYS: IntRange = { min: 1, max: 36_525 };
/** Unix times in seconds that `Date` represents (±8.64e15 ms around 1970). */
export const UNIX_SECONDS: IntRange = { min: -8_640_000_000_000, max: 8_640_000_000_000 };

/** {@link parseInteger}, then the range: refusals name the parameter and the range. */
function parseBoundedInteger(name: string, raw: string, range: IntRange): number {
  const value = parseInteger(name, raw);
  if (!Number.isSafeInteger(value) || value < range.min || value > range.max) {
    throw new RestError(
      `Invalid value for integer parameter ${name}: ${raw}. It must be between ${range.min} and ${range.max}.`,
    );
  }
  return value;
}

/** Control characters (C0 and DEL) break HTTP header values (response splitting, Node's ERR_INVALID_CHAR). */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

function refuseControlCharacters(name: string, value: string): string {
  if (CONTROL_CHARACTERS.test(value))
    throw new RestError(`Invalid value for ${name}: control characters are not allowed.`);
  return value;
}

function checkEnum<V extends string>(name: string, value: string, allowed: readonly V[]): V {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new RestError(`Invalid value for ${name}: "${value}". Allowed values: ${allowed.join(', ')}.`);
  }
  return value as V;
}

/** JSON text → value; a number the read models could not hold exactly is refused (rule 2, src/domain/exactNumbers.ts). */
function parseJson(name: string, raw: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new RestError(`Parameter ${name} must be valid JSON.`);
  }
  checkExactNumbers(name, raw);
  return value;
}

type JsonShape = 'object' | 'array' | 'any';

function checkJsonShape(name: string, value: unknown, shape: JsonShape): void {
  if (shape === 'object' && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new RestError(`Parameter ${name} must be a JSON object.`);
  }
  if (shape === 'array' && !Array.isArray(value)) throw new RestError(`Parameter ${name} must be a JSON array.`);
}

export const param = {
  /** `headerSafe`: the value ends up in a response header (a MIME type): control characters are refused. */
  string<N extends string, R extends boolean = false>(
    name: N,
    opts: Common & MaybeSecret & { required?: R; strip?: boolean; default?: string; headerSafe?: boolean } = {},
  ) {
    const strip = (s: string) => {
      const value = opts.strip ? s.trim() : s;
      return opts.headerSafe ? refuseControlCharacters(name, value) : value;
    };
    return {
      ...make<N, Given<string, R>>(
        'string',
        name,
        opts.required ?? false,
        opts.description,
        z.string(),
        strip,
        () => opts.default as Given<string, R>,
      ),
      ...secretFlag(opts),
    };
  },
  requiredString<N extends string>(name: N, opts: Common & MaybeSecret & { strip?: boolean } = {}) {
    return {
      ...make<N, string>(
        'string',
        name,
        true,
        opts.description,
        z.string(),
        (s) => (opts.strip ? s.trim() : s),
        () => '',
      ),
      ...secretFlag(opts),
    };
  },
  bool<N extends string>(name: N, opts: Common & { default?: boolean } = {}) {
    return make<N, boolean | undefined>('bool', name, false, opts.description, z.boolean(), toBool, () => opts.default);
  },
  flag<N extends string>(name: N, defaultValue: boolean, opts: Common = {}) {
    return make<N, boolean>(
      'bool',
      name,
      false,
      opts.description,
      z.boolean().default(defaultValue),
      toBool,
      () => defaultValue,
    );
  },
  /** A safe integer within `range` (default {@link NON_NEGATIVE}). */
  int<N extends string, R extends boolean = false>(
    name: N,
    opts: Common & {
      default?: number;
      required?: R;
      range?: IntRange;
      /** What a blank value stands for, where Girder declares a plain string and tests it for truth. */
      blankAs?: number;
    } = {},
  ) {
    const range = opts.range ?? NON_NEGATIVE;
    return {
      ...make<N, Given<number, R>>(
        'int',
        name,
        opts.required ?? false,
        opts.description,
        z.number().int(),
        (raw) =>
          opts.blankAs !== undefined && raw.trim() === '' ? opts.blankAs : parseBoundedInteger(name, raw, range),
        () => opts.default as Given<number, R>,
      ),
      range,
    };
  },
  enum<N extends string, V extends string, R extends boolean = false>(
    name: N,
    values: readonly V[],
    opts: Common & { default?: V; required?: R; strip?: boolean } = {},
  ) {
    return {
      ...make<N, Given<V, R>>(
        'enum',
        name,
        opts.required ?? false,
        opts.description,
        z.enum(values as unknown as [V, ...V[]]),
        (raw) => checkEnum(name, opts.strip ? raw.trim() : raw, values),
        () => opts.default as Given<V, R>,
      ),
      values,
    };
  },
  /** A `dateTime` parameter (Girder parses it with dateutil): an ISO 8601 date or date-time `Date` represents → epoch
   * ms. */
  dateTime<N extends string>(name: N, opts: Common = {}) {
    return make<N, number | undefined>(
      'date',
      name,
      false,
      opts.description,
      z.string(),
      (raw) => {
        const time = parseIsoTime(raw);
        if (time === null) throw new RestError(`Invalid date format for parameter ${name}: ${raw}.`);
        return time;
      },
      () => undefined,
    );
  },
  /**
   * A point in time as text that the query using it reads (`at`: an ISO 8601 time or a log position, see
   * src/queries/pointInTime.ts). Declared as a `date`, so the hostile-input suite tries impossible dates on it.
   */
  timeText<N extends string>(name: N, opts: Common = {}) {
    return make<N, string | undefined>(
      'date',
      name,
      false,
      opts.description,
      z.string(),
      (raw) => raw,
      () => undefined,
    );
  },
  /** A JSON-encoded query/form parameter (Girder's jsonParam), within the user-JSON limits (src/domain/userJson.ts). */
  json<N extends string, T = unknown, R extends boolean = false>(
    name: N,
    opts: Common & MaybeSecret & { shape?: JsonShape; required?: R; validate?: (value: unknown) => T } = {},
  ) {
    const spec = make<N, Given<T, R>>(
      'json',
      name,
      opts.required ?? false,
      opts.description,
      opts.shape === 'array'
        ? z.array(z.unknown())
        : opts.shape === 'object'
          ? z.record(z.string(), z.unknown())
          : z.unknown(),
      (raw) => {
        const value = parseJson(name, raw);
        checkJsonShape(name, value, opts.shape ?? 'any');
        checkUserJson(name, value);
        return opts.validate ? opts.validate(value) : (value as T);
      },
      () => undefined as Given<T, R>,
    );
    return { ...spec, ...secretFlag(opts) };
  },
  /**
   * A JSON parameter carried as the request body (Girder's jsonParam with paramType='body'). When the same name is
   * present in the query or form it is taken from there instead (the router passes it in as raw).
   */
  jsonBody<N extends string, T = unknown>(
    name: N,
    opts: Common & { shape?: JsonShape; validate?: (value: unknown) => T } = {},
  ) {
    const spec = param.json<N, T, true>(name, { ...opts, required: true });
    return { ...spec, in: 'body' as const };
  },
};

/** Reads the JSON request body for a body parameter, with the reference's messages; its bytes must be UTF-8. */
export function parseJsonBody(name: string, bytes: Buffer | undefined): string {
  if (bytes === undefined || bytes.length === 0)
    throw new RestError(`JSON parameter ${name} must be passed in request body.`);
  const body = strictUtf8(bytes);
  if (body === null) throw new RestError(`JSON parameter ${name}: the request body is not valid UTF-8.`);
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

const SORT_DIRECTIONS = ['1', '-1'] as const;

/**
 * A listing's `sort`: one of the fields the listing's view shows the caller (`keys`, domain/sortKeys.ts), checked
 * here with the caller so that no listing route can forget it; anything else is a 400 naming `sort`.
 */
function sortParam(keys: SortKeys): ParamSpec<'sort', string> {
  const metadata = keys.metadata.length ? ` or ${keys.metadata[0]}.<key>` : '';
  const spec = param.string('sort', {
    default: keys.default,
    description: `Field to sort the result set by: a field the caller sees in the results${metadata}.`,
  });
  return {
    ...spec,
    parse: (raw, viewer) => checkSort(keys, spec.parse(raw) ?? keys.default, viewer ?? null),
  };
}

/** `limit`, `offset`, `sort`, `sortdir` as Girder's pagingParams (limit 0 means no limit), sorting by `keys`. */
export function pagingParams(keys: SortKeys) {
  return [
    param.int('limit', { default: 50, description: 'Result set size limit (0 for no limit).' }),
    param.int('offset', { default: 0, description: 'Offset into result set.' }),
    sortParam(keys),
    make<'sortdir', 1 | -1>(
      'enum',
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
  return {
    limit: params.limit ?? 50,
    offset: params.offset ?? 0,
    sort: params.sort ?? 'lowerName',
    sortdir: params.sortdir ?? 1,
  };
}
