/**
 * Child-process entry: the download yardstick. A bare node:http server on 127.0.0.1 that streams the file named by
 * `?path=` (fs.createReadStream piped into the response, with its Content-Length): what Node alone does to send a
 * file's bytes, with no auth, no read model and no blob store behind it.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const server = http.createServer((req, res) => {
  const file = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams.get('path') ?? '';
  fs.stat(file, (error, stat) => {
    if (error) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': stat.size });
    fs.createReadStream(file).pipe(res);
  });
});
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('disconnect', () => process.exit(1));
