import { ValidationError } from './errors';
import { isObjectId } from './ids';
import type { AccessEntry, AccessList } from './access';

/**
 * Validates an access list given to `PUT …/access` (Girder's setAccessList): every `users[]`/`groups[]` entry needs
 * `id` and `level` (`Invalid access list`), level 0, 1 or 2 (`Invalid access level`); extra keys (`login`, `name`…)
 * are dropped so a GET result can be PUT back; missing lists are empty; flags are always `[]` because no access flags
 * are registered. Unlike Girder (500), an id that is not an ObjectId is a 400 too.
 */
export function parseAccessList(value: unknown): AccessList {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new ValidationError('Invalid access list', 'access');
  const input = value as Record<string, unknown>;
  return { users: entries(input.users), groups: entries(input.groups) };
}

function entries(list: unknown): AccessEntry[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new ValidationError('Invalid access list', 'access');
  const byId = new Map<string, AccessEntry>();
  for (const raw of list) {
    if (raw === null || typeof raw !== 'object' || !('id' in raw) || !('level' in raw))
      throw new ValidationError('Invalid access list', 'access');
    const { id, level } = raw as { id: unknown; level: unknown };
    if (level !== 0 && level !== 1 && level !== 2) throw new ValidationError('Invalid access level', 'access');
    if (typeof id !== 'string' || !isObjectId(id)) throw new ValidationError('Invalid access list', 'access');
    byId.set(id.toLowerCase(), { id: id.toLowerCase(), level, flags: [] });
  }
  return [...byId.values()];
}

/** `publicFlags`: only registered flags survive, and none are registered, so any list becomes `[]`. */
export function parsePublicFlags(value: unknown): string[] {
  if (!Array.isArray(value)) throw new ValidationError('Parameter publicFlags must be a JSON array.', 'publicFlags');
  return [];
}
