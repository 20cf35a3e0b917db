import { RestError, ValidationError } from './errors';
import { checkUserJson } from './userJson';

/**
 * Free-form metadata (`meta` on folders and items) and Girder's rules for it: top-level key names must be non-empty,
 * must not contain `.` and must not start with `$` (Mongo field-name rules); nested keys are not checked.
 */
export type Metadata = Record<string, unknown>;

/** Girder's validateKeys, in its order and with its messages (400 validation, no field). */
function validateMetadataKeys(keys: Iterable<string>): void {
  for (const key of keys) {
    if (!key) throw new ValidationError('Key names must not be empty.');
    if (key.includes('.')) throw new ValidationError(`Invalid key ${key}: keys must not contain the "." character.`);
    if (key.startsWith('$'))
      throw new ValidationError(`Invalid key ${key}: keys must not start with the "$" character.`);
  }
}

/**
 * Girder's setMetadata: the updates are merged over the current metadata; unless `allowNull`, keys set to null are
 * removed. Every top-level key of the result is then validated, and the result is held to the user-JSON limits. Built
 * with `Object.fromEntries` so that a key such as
 * `__proto__` stays an ordinary key.
 */
export function mergeMetadata(current: Metadata, updates: Metadata, allowNull: boolean): Metadata {
  const merged = new Map<string, unknown>(Object.entries(current));
  for (const [key, value] of Object.entries(updates)) {
    if (value === null && !allowNull) merged.delete(key);
    else merged.set(key, value);
  }
  validateMetadataKeys(merged.keys());
  const result = Object.fromEntries(merged);
  // The whole result, not only the update: repeated merges must not grow a document past what adapters store.
  checkUserJson('metadata', result);
  return result;
}

/** Girder's deleteMetadata: the names are validated first, then removed; names that are not present are ignored. */
export function removeMetadataKeys(current: Metadata, fields: string[]): Metadata {
  validateMetadataKeys(fields);
  const drop = new Set(fields);
  return Object.fromEntries(Object.entries(current).filter(([key]) => !drop.has(key)));
}

/**
 * Validates the `fields` body of `DELETE …/metadata` against Girder's JSON schema `{"type": "array", "items":
 * {"type": "string"}}`, with jsonschema's error text: `Invalid JSON object for parameter <name>: <message>`, where the
 * message is jsonschema's multi-line rendering (message, failing schema, offending instance).
 */
export function parseStringList(name: string, value: unknown): string[] {
  const schema = { items: { type: 'string' }, type: 'array' };
  if (!Array.isArray(value)) throw schemaError(name, value, "'array'", 'schema', schema, 'instance');
  value.forEach((entry, index) => {
    if (typeof entry !== 'string')
      throw schemaError(name, entry, "'string'", "schema['items']", schema.items, `instance[${index}]`);
  });
  return value as string[];
}

function schemaError(
  name: string,
  instance: unknown,
  type: string,
  schemaPath: string,
  schema: unknown,
  instancePath: string,
): RestError {
  const message = `${pyRepr(instance, false)} is not of type ${type}\n\nFailed validating 'type' in ${schemaPath}:\n    ${pyRepr(schema, true)}\n\nOn ${instancePath}:\n    ${pyRepr(instance, true)}`;
  return new RestError(`Invalid JSON object for parameter ${name}: ${message}`);
}

/** Python's repr of a JSON value (pprint's, with sorted keys, when `sorted`). */
function pyRepr(value: unknown, sorted: boolean): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : pyFloat(value);
  if (typeof value === 'string') return pyString(value);
  if (Array.isArray(value)) return `[${value.map((v) => pyRepr(v, sorted)).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>);
  if (sorted) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${pyString(k)}: ${pyRepr(v, sorted)}`).join(', ')}}`;
}

function pyFloat(value: number): string {
  const text = String(value);
  return text.includes('e') ? text.replace(/e([+-])(\d)$/, 'e$10$2') : text;
}

function pyString(value: string): string {
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${quote}${out}${quote}`;
}
