/**
 * Girder's datetime rendering (`dt.replace(tzinfo=UTC).isoformat()`): microsecond precision written out, omitted
 * when zero, with an explicit `+00:00` offset, e.g. `2024-05-01T12:34:56.789000+00:00`.
 */
export function girderTime(date: Date = new Date()): string {
  const iso = date.toISOString(); // 2024-05-01T12:34:56.789Z
  const ms = iso.slice(20, 23);
  return ms === '000' ? `${iso.slice(0, 19)}+00:00` : `${iso.slice(0, 19)}.${ms}000+00:00`;
}
