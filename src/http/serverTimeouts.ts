import type { Server } from 'node:http';

/**
 * Keep-alive timing of the HTTP server.
 *
 * Why a client saw ECONNRESET: Node closes a keep-alive socket that has been idle for `keepAliveTimeout` (5 s by
 * default) from a timer. When the event loop was blocked for longer than that (a 100k-folder copy projected on the
 * main thread), the timer and the client's next request on that socket became due together; timers run first, so the
 * server destroyed a socket the client had just written a request to. Bulk work no longer blocks the loop
 * (src/infra/readmodel/sqlite/bulkApply.ts), and the idle timeout is set above the usual client and proxy pools
 * (which close their own idle sockets first, so the client is the side that decides): 65 s, as behind an AWS or GCP
 * load balancer; `headersTimeout` is kept just above it, the usual pairing for Node servers behind such pools.
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
const HEADERS_TIMEOUT_MS = 66_000;

export function applyServerTimeouts(server: Server): Server {
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  return server;
}
