import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startService, type ServiceProcess } from '../chaos/serviceProcess';
import { SseClient } from '../support/sseClient';
import { KeepAliveSocket } from '../support/keepAliveSocket';
import { SHUTDOWN_FALLBACK_MS } from '../../src/http/gracefulShutdown';

/**
 * Issue 28, rule 4 (SIGTERM): the service, as a process of its own, is stopped with SIGTERM while an event stream is
 * open, a request is in flight (its body half sent, another request queued behind it on the same connection) and a
 * keep-alive connection is idle. It must answer both requests, the second with `Connection: close`, end the stream
 * cleanly, close both connections and exit 0, well before the fallback timer.
 */

let dataDir: string;
let service: ServiceProcess | undefined;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-service-sigterm-'));
  service = await startService(dataDir, {});
}, 90_000);
afterAll(async () => {
  if (service && !service.dead) service.proc.kill('SIGKILL');
  await service?.exited;
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function json(response: Response): Promise<any> {
  return response.json();
}

it('answers the request in flight, ends the event stream, closes idle connections and exits 0 at once', async () => {
  if (!service) throw new Error('the service did not start');
  const { proc } = service;
  const admin = await json(
    await fetch(`${service.api}/user`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        login: 'admin',
        email: 'admin@example.com',
        firstName: 'A',
        lastName: 'D',
        password: 'password1',
      }),
    }),
  );
  const token: string = admin.authToken.token;
  const port = Number(new URL(service.origin).port);

  // An event stream of every event (site admins).
  const stream = new SseClient(`${service.api}/events`, { 'Service-Token': token });
  await stream.opened;
  expect(stream.status).toBe(200);

  // A keep-alive connection, answered once and left idle.
  const idle = await KeepAliveSocket.open(port);
  idle.write('GET /api/v1/system/version HTTP/1.1\r\nHost: service\r\n\r\n');
  expect((await idle.answer()).status).toBe(200);

  // A request in flight: a folder creation whose form body is half sent.
  const body = new URLSearchParams({
    parentType: 'user',
    parentId: admin._id,
    name: 'made during shutdown',
  }).toString();
  const inFlight = await KeepAliveSocket.open(port);
  inFlight.write(
    `POST /api/v1/folder HTTP/1.1\r\nHost: service\r\nService-Token: ${token}\r\n` +
      `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
  );
  await new Promise((resolve) => setTimeout(resolve, 200));

  const signalled = Date.now();
  proc.kill('SIGTERM');
  const exitCode = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  await new Promise((resolve) => setTimeout(resolve, 200));
  inFlight.write(`${body.slice(10)}GET /api/v1/system/version HTTP/1.1\r\nHost: service\r\n\r\n`);

  const answer = await inFlight.answer();
  expect(answer.status).toBe(200);
  expect(JSON.parse(answer.body)).toMatchObject({ _modelType: 'folder', name: 'made during shutdown' });
  await stream.finished;
  // Ended by the server with the end of the response, not cut off.
  expect(stream.endedAt).not.toBeNull();
  await idle.closed();
  // The request its client had queued behind it (pipelined: the connection is never idle) is answered, and that
  // answer closes the connection rather than leaving it open until the fallback.
  const queued = await inFlight.answer();
  expect(queued.status).toBe(200);
  expect(queued.headers.connection).toBe('close');
  await inFlight.closed();
  expect(await exitCode).toBe(0);
  expect(Date.now() - signalled).toBeLessThan(SHUTDOWN_FALLBACK_MS / 2);
  inFlight.destroy();
});
