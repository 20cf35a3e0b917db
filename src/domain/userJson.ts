import { ValidationError } from './errors';

/**
 * Limits on JSON that users hand in (folder and item metadata, and every other free-form JSON parameter), so that
 * whatever a decider accepts, every read-model adapter can store and every later step can serialise:
 *  - depth: at most {@link MAX_JSON_DEPTH} levels of objects/arrays, what a MongoDB document allows (SQLite's JSON
 *    functions stop at 1000, V8's recursive serialisers overflow the stack some thousands deep);
 *  - size: at most {@link MAX_JSON_BYTES} bytes serialised (UTF-8), which keeps a folder's document far inside
 *    MongoDB's 16 MiB and its events inside the event store's 1 MiB per append.
 */
export const MAX_JSON_DEPTH = 100;
export const MAX_JSON_BYTES = 512 * 1024;

/**
 * The nesting depth of a JSON value (a scalar is 0, `{}` and `[]` are 1), counted without recursion and giving up as
 * soon as it passes `limit`, so that a value nested 100,000 levels costs no stack and little time.
 */
function jsonDepthExceeds(value: unknown, limit: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const { value: current, depth } = top;
    if (current === null || typeof current !== 'object') continue;
    const level = depth + 1;
    if (level > limit) return true;
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children)
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth: level });
  }
  return false;
}

/** Refuses (400 validation, `field` = the parameter) user JSON deeper or larger than the limits above. */
export function checkUserJson(field: string, value: unknown): void {
  if (jsonDepthExceeds(value, MAX_JSON_DEPTH)) {
    throw new ValidationError(`${field} is nested more than ${MAX_JSON_DEPTH} levels deep.`, field);
  }
  // JSON.stringify gives undefined (not a string, whatever its type says) for undefined and functions.
  const json = JSON.stringify(value) as string | undefined;
  const bytes = Buffer.byteLength(json ?? '', 'utf8');
  if (bytes > MAX_JSON_BYTES) {
    throw new ValidationError(
      `${field} is too large: ${bytes} bytes of JSON, at most ${MAX_JSON_BYTES} allowed.`,
      field,
    );
  }
}
