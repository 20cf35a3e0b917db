import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Logger } from 'pino';

/** What the process must do on the way out, in order (src/bootstrap.ts, Runtime). */
export interface ShutdownSteps {
  /** Ends the open event streams (server-sent events, notification sockets) with a clean end of stream. */
  endStreams(): void;
  /** Closes the stores; runs once every request has been answered. */
  close(): Promise<void>;
}

/** How long a graceful close may take before the process exits anyway (something hangs). */
export const SHUTDOWN_FALLBACK_MS = 5000;
/** While closing, connections that fall idle (their last answer sent) are closed this often. */
const IDLE_SWEEP_MS = 50;

/**
 * SIGTERM (and SIGINT): stops accepting connections, lets the requests in flight finish and be answered, ends the
 * event streams cleanly (their clients see the end of the stream, not a reset), closes keep-alive connections as soon
 * as they are idle, then closes the stores and exits 0. A process whose close does not complete within
 * {@link SHUTDOWN_FALLBACK_MS} (a request that hangs) is ended anyway, with exit code 1 and a log line saying so.
 *
 * Why the sweep and `Connection: close`: `server.close()` closes the connections idle at that moment; one whose
 * request is still in flight becomes idle once it is answered, and would otherwise stay open until its keep-alive
 * timeout (65 s), long past the fallback; one whose client sends its next request at once (under load) would never
 * be idle at all.
 */
export function closeGracefully(server: Server, steps: ShutdownSteps, logger: Logger): void {
  const fallback = setTimeout(() => {
    logger.warn(`graceful shutdown did not complete within ${SHUTDOWN_FALLBACK_MS} ms; exiting`);
    process.exit(1);
  }, SHUTDOWN_FALLBACK_MS);
  fallback.unref();
  const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
  sweep.unref();
  logger.info('shutting down: no new connections; answering the requests in flight');
  // A client that keeps its connection busy (the next request sent as soon as the last is answered, or pipelined)
  // never leaves it idle: each answer from now on says `Connection: close`, and the connection ends after it.
  server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  });
  server.close(() => {
    clearInterval(sweep);
    steps
      .close()
      .then(() => {
        logger.info('shut down');
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'closing the stores failed');
        process.exit(1);
      });
  });
  steps.endStreams();
  server.closeIdleConnections();
}
