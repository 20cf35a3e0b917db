import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
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

/** The whole service (API and web client) listening on 127.0.0.1 on a free port, over a throwaway DATA_DIR. */
export async function startLiveService(): Promise<LiveService> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-service-e2e-'));
  const runtime = await bootstrap(loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir, LOG_LEVEL: 'warn' }));
  const server: Server = await new Promise((resolve) => {
    const s = createApp(runtime.services).listen(0, '127.0.0.1', () => resolve(s));
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
