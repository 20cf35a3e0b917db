/**
 * Child-process entry: the zip download yardstick. A bare node:http server on 127.0.0.1 that answers `GET
 * /?list=<file>&zip64=0|1` with archiver alone zipping the files named in the JSON list (an array of paths) with the
 * service's options (STORE, local time, zip64 when asked), piped into the response: what archiver and Node alone do
 * to send a folder's zip, in a process of its own and over HTTP like the service, so that the two differ only by what
 * the service does on top.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import archiver from 'archiver';

const server = http.createServer((req, res) => {
  const query = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams;
  const files = JSON.parse(fs.readFileSync(query.get('list') ?? '', 'utf8')) as string[];
  const archive = archiver('zip', { store: true, forceZip64: query.get('zip64') === '1', forceLocalTime: true });
  res.writeHead(200, { 'Content-Type': 'application/zip' });
  archive.on('error', () => res.destroy());
  archive.pipe(res);
  files.forEach((file, i) => archive.append(fs.createReadStream(file), { name: `entry-${i}` }));
  void archive.finalize();
});
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('disconnect', () => process.exit(1));
