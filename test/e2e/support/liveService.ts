import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net, { type AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { loadConfig } from '../../../src/config';
import { bootstrap, type Runtime } from '../../../src/bootstrap';
import { createApp } from '../../../src/http/app';
import { attachNotificationSocket } from '../../../src/http/web/notificationSocket';

export interface LiveService {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  runtime: Runtime;
  close(): Promise<void>;
}

/** A port free at the time of asking (for a configuration that must name the service's own port). */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * The whole service (API and web client) listening on 127.0.0.1 on a free port, over a throwaway DATA_DIR. `env`
 * adds settings; given as a function it gets the port the service will listen on (for FILE_ORIGIN).
 */
export async function startLiveService(
  env: Record<string, string> | ((port: number) => Record<string, string>) = {},
): Promise<LiveService> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-service-e2e-'));
  const wanted = typeof env === 'function' ? await freePort() : 0;
  const extra = typeof env === 'function' ? env(wanted) : env;
  const runtime = await bootstrap(loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...extra }));
  const server: Server = await new Promise((resolve) => {
    const s = createApp(runtime.services).listen(wanted, '127.0.0.1', () => resolve(s));
  });
  attachNotificationSocket(server, runtime.services);
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    runtime,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
