import { RestError } from '../domain/errors';

/** RFC 5987 percent-encoding of the UTF-8 bytes (Python's `quote(safe='')`: only `A-Za-z0-9_.-~` stay). */
const rfc5987 = (value: string): string =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Girder's setContentDisposition: `<disposition>; filename="<name>"`, where a name that is not latin-1 falls back to
 * its NFKD form with the non-latin-1 characters dropped, and then also gets `; filename*=UTF-8''<percent-encoded>`.
 * Quotes and backslashes are escaped; control characters (invalid in a header) are dropped from the fallback.
 */
export function contentDisposition(filename: string, disposition: 'attachment' | 'inline' = 'attachment'): string {
  if (!filename) throw new RestError('Error: Content-Disposition filename is empty.');
  const latin1 = /^[\u0000-\u00ff]*$/.test(filename);
  const fallback = (latin1 ? filename : filename.normalize('NFKD').replace(/[^\u0000-\u00ff]/g, ''))
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .replace(/[\\"]/g, '\\$&');
  let value = `${disposition}; filename="${fallback}"`;
  if (!latin1) value += `; filename*=UTF-8''${rfc5987(filename)}`;
  return value;
}
