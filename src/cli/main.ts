import { loadConfig } from '../config';
import { bootstrap } from '../bootstrap';
import { createApp } from '../http/app';
import { rebuildReadModels } from './rebuild';

async function serve(): Promise<void> {
  const config = loadConfig();
  const runtime = await bootstrap(config);
  const app = createApp(runtime.services);
  const server = app.listen(config.port, () => {
    runtime.services.logger.info(`Folder Service listening on http://localhost:${config.port}/api/v1 (data in ${config.dataDir})`);
  });
  const shutdown = () => {
    server.close(() => void runtime.close().then(() => process.exit(0)));
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

async function main(argv: string[]): Promise<void> {
  const [verb = 'serve', ...rest] = argv;
  switch (verb) {
    case 'serve':
      return serve();
    case 'rebuild':
      await rebuildReadModels(loadConfig(), rest);
      return;
    default:
      console.error(`Unknown command "${verb}". Commands: serve, rebuild.`);
      process.exit(2);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
