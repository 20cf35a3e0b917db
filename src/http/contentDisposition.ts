import { RestError } from '../domain/errors';

/** RFC 5987 percent-encoding of the UTF-8 bytes (Python's `quote(safe='')`: only `A-Za-z0-9_.-~` stay). */
const rfc5987 = (value: string): string =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Girder's setContentDisposition: `<disposition>; filename="<fallback>"`, the fallback being the name decomposed
 * (NFKD) without its combining marks and without what is not latin-1 (quotes and backslashes escaped, control
 * characters dropped); when the fallback differs from the name, `; filename*=UTF-8''<percent-encoded name>` follows.
 */
export function contentDisposition(filename: string, disposition: 'attachment' | 'inline' = 'attachment'): string {
  if (!filename) throw new RestError('Error: Content-Disposition filename is empty.');
  const plain = filename
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\u0000-\u00ff]/g, '')
    .replace(/[\u0000-\u001f\u007f]/g, '');
  let value = `${disposition}; filename="${plain.replace(/[\\"]/g, '\\$&')}"`;
  if (plain !== filename) value += `; filename*=UTF-8''${rfc5987(filename)}`;
  return value;
}
