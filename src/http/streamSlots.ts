import type { IncomingMessage } from 'node:http';
import type { Services } from '../services';
import { TooManyRequestsError } from './tooManyRequests';

/**
 * How many event streams (SSE) and notification sockets each caller holds open: at most `STREAMS_PER_CALLER` per
 * user, or per client address for a caller with no user (docs/security.md, "Streams per caller"). Every long-lived
 * answer claims a slot before it starts and gives it back when its connection closes, however it ends. Counts are
 * this process's.
 */

/** Open streams per caller key, per service instance. A key leaves the map when its last stream closes. */
const openByServices = new WeakMap<Services, Map<string, number>>();

/** Whom a stream counts against: the user, else the client address (`req.ip`, as express reads it). */
function callerKey(userId: string | null, req: IncomingMessage & { ip?: string }): string {
  return userId !== null ? `user ${userId}` : `address ${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`;
}

/**
 * Claims a stream slot for the caller, released once `connection` emits `close` (the response of an SSE route, the
 * socket of an upgraded one). Throws 429 when the caller already holds as many as allowed.
 */
export function claimStreamSlot(
  services: Services,
  userId: string | null,
  req: IncomingMessage & { ip?: string },
  connection: { once(event: 'close', listener: () => void): unknown; destroyed: boolean },
): void {
  // Gone already (the client left while the route was loading): its `close` has passed and nothing is held.
  if (connection.destroyed) return;
  let open = openByServices.get(services);
  if (!open) {
    open = new Map();
    openByServices.set(services, open);
  }
  const counts = open;
  const key = callerKey(userId, req);
  const held = counts.get(key) ?? 0;
  const limit = services.config.streamsPerCaller;
  if (held >= limit) {
    throw new TooManyRequestsError(
      `Too many open event streams: at most ${limit} per caller. Close one before opening another.`,
    );
  }
  counts.set(key, held + 1);
  connection.once('close', () => {
    const left = (counts.get(key) ?? 1) - 1;
    if (left > 0) counts.set(key, left);
    else counts.delete(key);
  });
}
