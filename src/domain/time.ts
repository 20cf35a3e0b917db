/**
 * Girder's datetime rendering (`dt.replace(tzinfo=UTC).isoformat()`): microsecond precision written out, omitted
 * when zero, with an explicit `+00:00` offset, e.g. `2024-05-01T12:34:56.789000+00:00`.
 */
export function girderTime(date: Date = new Date()): string {
  const iso = date.toISOString(); // 2024-05-01T12:34:56.789Z
  const ms = iso.slice(20, 23);
  return ms === '000' ? `${iso.slice(0, 19)}+00:00` : `${iso.slice(0, 19)}.${ms}000+00:00`;
}

const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * An ISO 8601 date or date-time (`2025-05-01`, `2025-05-01T12:00:00Z`, `…+02:00`; without an offset it is UTC) as
 * epoch milliseconds, or null when the text is not one or names no instant `Date` can represent.
 */
export function parseIsoTime(text: string): number | null {
  const match = ISO_TIME.exec(text.trim());
  if (!match) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone] = match;
  const ms = frac ? `.${frac.padEnd(3, '0').slice(0, 3)}` : '';
  const offset =
    !zone || zone.toUpperCase() === 'Z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const time = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${ms}${offset}`);
  return Number.isNaN(time) ? null : time;
}
