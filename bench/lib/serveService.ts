/**
 * Child-process entry: the Folder Service as `npm start` runs it (bootstrap + express app, NODE_ENV=production), but
 * bound to 127.0.0.1 on a port of its choosing, which it reports to its parent over IPC. DATA_DIR comes from the
 * environment. Stops on SIGTERM like the real server.
 */
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../src/config';
import { bootstrap } from '../../src/bootstrap';
import { createApp } from '../../src/http/app';

async function main(): Promise<void> {
  const runtime = await bootstrap(loadConfig({ ...process.env, LOG_LEVEL: 'warn', NODE_ENV: 'production' }));
  const server = createApp(runtime.services).listen(0, '127.0.0.1', () => {
    process.send?.({ port: (server.address() as AddressInfo).port });
  });
  process.on('SIGTERM', () => server.close(() => void runtime.close().then(() => process.exit(0))));
  // The benchmark that started this process died (killed by the runner's time limit): do not outlive it.
  process.on('disconnect', () => process.exit(1));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
