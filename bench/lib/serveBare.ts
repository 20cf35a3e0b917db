/**
 * Child-process entry: the yardstick. A bare express 5 app on 127.0.0.1 that answers `GET /api/v1/folder/:id` and
 * `GET /api/v1/folder` with the JSON bodies (and headers) given in BARE_BODIES, which the benchmark captured from the
 * real service: the same bytes, with no auth, no read model and no event store behind them.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';

interface BareBody {
  json: unknown;
  headers?: Record<string, string>;
}

const bodies = JSON.parse(process.env.BARE_BODIES ?? '{}') as { one?: BareBody; list?: BareBody };
const app = express();
app.get('/api/v1/folder/:id', (_req, res) => {
  res.set(bodies.one?.headers ?? {}).json(bodies.one?.json ?? {});
});
app.get('/api/v1/folder', (_req, res) => {
  res.set(bodies.list?.headers ?? {}).json(bodies.list?.json ?? []);
});
const server = app.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('disconnect', () => process.exit(1));
