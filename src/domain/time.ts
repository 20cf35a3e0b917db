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

const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether the fields name a day and a time of day that exist: `Date` rolls `2027-02-30` over to March 2 and
 * `T23:60` to the next hour rather than refusing them, and the service would read a time other than the one sent.
 */
function fieldsExist(year: number, month: number, day: number, hour: number, minute: number, second: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const days = month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1];
  return day <= days && hour <= 23 && minute <= 59 && second <= 59;
}

/**
 * An ISO 8601 date or date-time (`2025-05-01`, `2025-05-01T12:00:00Z`, `…+02:00`; without an offset it is UTC) as
 * epoch milliseconds, or null when the text is not one, names a day or time that does not exist (`2027-02-30`,
 * `24:00`, an offset past `±23:59`), or names no instant `Date` can represent.
 */
export function parseIsoTime(text: string): number | null {
  const match = ISO_TIME.exec(text.trim());
  if (!match) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone] = match;
  if (!fieldsExist(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s))) return null;
  const zoneDigits = zone ? zone.replace(/\D/g, '') : '';
  if (zoneDigits.length === 4 && (Number(zoneDigits.slice(0, 2)) > 23 || Number(zoneDigits.slice(2)) > 59)) return null;
  const ms = frac ? `.${frac.padEnd(3, '0').slice(0, 3)}` : '';
  const offset =
    !zone || zone.toUpperCase() === 'Z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const time = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${ms}${offset}`);
  return Number.isNaN(time) ? null : time;
}
