import { loadConfig } from '../config';
import { bootstrap } from '../bootstrap';
import { createApp } from '../http/app';
import { applyServerTimeouts } from '../http/serverTimeouts';
import { closeGracefully } from '../http/gracefulShutdown';
import { answerClientErrors } from '../http/clientErrors';
import { attachNotificationSocket } from '../http/web/notificationSocket';
import { STANDIN_VARIABLE, mongoStandInMode } from '../infra/readmodel/createReadModel';

async function serve(): Promise<void> {
  const config = loadConfig();
  const runtime = await bootstrap(config);
  const app = createApp(runtime.services);
  const server = app.listen(config.port, () => {
    // The bound port (PORT=0 picks a free one; tests read it from this line).
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    runtime.services.logger.info(
      `Folder Service listening on http://localhost:${port}/api/v1 (data in ${config.dataDir})`,
    );
  });
  applyServerTimeouts(server);
  answerClientErrors(server);
  attachNotificationSocket(server, runtime.services);
  let closing = false;
  const shutdown = () => {
    if (closing) return;
    closing = true;
    closeGracefully(server, runtime, runtime.services.logger);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

/**
 * The test-only MongoDB stand-in lives inside one process: a command in a process of its own would see an empty one.
 */
function refuseStandIn(verb: string): void {
  if (mongoStandInMode()) {
    throw new Error(
      `${STANDIN_VARIABLE} selects an in-memory MongoDB stand-in that only exists inside a test process; "${verb}" cannot reach it. Unset ${STANDIN_VARIABLE}.`,
    );
  }
}

async function main(argv: string[]): Promise<void> {
  const [verb = 'serve', ...rest] = argv;
  if (verb === 'rebuild' || verb === 'verify') refuseStandIn(verb);
  switch (verb) {
    case 'serve':
      return serve();
    // The maintenance commands (and the MongoDB adapter they may need) load only when asked for: `serve` starts
    // without them.
    case 'rebuild': {
      const { rebuildReadModels } = require('./rebuild') as typeof import('./rebuild');
      await rebuildReadModels(loadConfig(), rest);
      return;
    }
    case 'verify': {
      // Exit code 1 when the live read models differ from a replay of the log (every difference is printed).
      const { verifyReadModels } = require('./verify') as typeof import('./verify');
      process.exit(await verifyReadModels(loadConfig(), rest));
      return;
    }
    default:
      console.error(`Unknown command "${verb}". Commands: serve, rebuild, verify.`);
      process.exit(2);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // One line and exit code 1: configuration and connection errors (ConfigError, KurrentDbConnectError) are worded
  // for the operator, and a stack trace would bury them.
  const message = error instanceof Error ? error.message : String(error);
  console.error(message.replace(/\s*\n\s*/g, ' ').trim());
  process.exit(1);
});
