import yauzl from 'yauzl';

export interface ZipFileEntry {
  name: string;
  data: Buffer;
  compressionMethod: number;
  flags: number;
}

/**
 * Every entry of a zip, read with yauzl (which refuses absolute paths, `..` segments and backslashes); with
 * `data: false` only the central directory is read (names and sizes, `data` left empty).
 */
export function readZip(buffer: Buffer, options: { data: boolean } = { data: true }): Promise<ZipFileEntry[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true, validateEntrySizes: true, strictFileNames: true }, (error, zip) => {
      if (error || !zip) return reject(error ?? new Error('no zip'));
      const entries: ZipFileEntry[] = [];
      const add = (entry: yauzl.Entry, data: Buffer) => {
        entries.push({
          name: entry.fileName,
          data,
          compressionMethod: entry.compressionMethod,
          flags: entry.generalPurposeBitFlag,
        });
        zip.readEntry();
      };
      zip.on('error', reject);
      zip.on('end', () => resolve(entries));
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!options.data) return add(entry, Buffer.alloc(0));
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError || !stream) return reject(streamError ?? new Error('no stream'));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', reject);
          stream.on('end', () => add(entry, Buffer.concat(chunks)));
        });
      });
      zip.readEntry();
    });
  });
}
