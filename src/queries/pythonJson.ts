/**
 * Python's `json.dumps(value)` with its defaults, byte for byte where JSON allows: `", "` and `": "` separators and
 * every non-ASCII character escaped (`ensure_ascii`), keys in their stored order. Girder writes the metadata files of
 * its zip archives this way (`girder-item-metadata.json`, `girder-folder-metadata.json`).
 */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (typeof value === 'object') {
    const fields = Object.entries(value as Record<string, unknown>).map(
      ([key, field]) => `${asciiString(key)}: ${pythonJsonDumps(field)}`,
    );
    return `{${fields.join(', ')}}`;
  }
  if (typeof value === 'string') return asciiString(value);
  return JSON.stringify(value);
}

/** A JSON string with every character past U+007F as `\uXXXX` (UTF-16 units, as Python writes them). */
function asciiString(text: string): string {
  return JSON.stringify(text).replace(
    /[\u0080-\uffff]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
