import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import { errorResponse } from './errorMapping';
import { BodyStalledError, MAX_DRAIN_BYTES } from './bodyReader';

/**
 * What becomes of a request body that the answer does not wait for: the one place that keeps every connection
 * usable or closes it (docs/http-conventions.md, "Connections").
 *
 * An answer can go out before its request body has all arrived: a refusal before the body is read (401/403, a bad
 * parameter, an unknown route), or while it is read (`Received too many bytes.`, a write that fails on a full disk).
 * The rest of that body is still on its way on the same connection; unless it is read, the next request on that
 * connection is never parsed (a client or proxy pool that reuses the connection then waits for an answer that never
 * comes, and the next request may be another user's). So, for every request that declares a body, at the moment its
 * answer's headers are written:
 *  - a body that arrived whole needs nothing;
 *  - a body declared (`Content-Length`) at most {@link MAX_DRAIN_BYTES} long has its rest read and dropped after the
 *    answer, and the connection stays usable;
 *  - a longer body, one of unknown length (chunked), or one that stalled is answered with `Connection: close`, and the
 *    connection is closed after the answer.
 * And a body that stops arriving while the service waits for it (no byte for the idle time, `BODY_IDLE_TIMEOUT_SECONDS`)
 * is answered 408 in the JSON error format with `Connection: close`; whatever was reading it fails with
 * {@link BodyStalledError}. The same idle time bounds the reading of a rest after the answer: past it the connection is
 * cut.
 */

/** Requests whose body stalled, with the error their readers are to fail with. */
const stalledBodies = new WeakMap<IncomingMessage, BodyStalledError>();

export interface BodyRemainderOptions {
  /** How long a body may send nothing while the service waits for it. */
  idleMs: number;
}

/** Whether the request announces a body (RFC 9112 §6.3: a Transfer-Encoding, or a Content-Length above 0). */
function declaresBody(req: IncomingMessage): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length !== '0';
}

/** The declared length of the body, or undefined when it is not known in advance (chunked). */
function declaredLength(req: IncomingMessage): number | undefined {
  if (req.headers['transfer-encoding'] !== undefined) return undefined;
  const length = Number(req.headers['content-length']);
  return Number.isSafeInteger(length) ? length : undefined;
}

/**
 * Watches one request's body from its arrival to its end: installed once per request, before any route sees it.
 * Requests without a body cost nothing.
 */
export function guardRequestBody(req: IncomingMessage, res: ServerResponse, options: BodyRemainderOptions): void {
  if (!declaresBody(req)) return;
  let stalled = false;

  // The decision is taken when the answer's headers are written, whichever code path writes them (a route's
  // result, an error, express's own answers): `res.end` and `res.flushHeaders` call `writeHead` too.
  const writeHead = res.writeHead.bind(res);
  let settled = false;
  res.writeHead = ((...args: Parameters<ServerResponse['writeHead']>) => {
    if (!settled && !req.complete) {
      const length = declaredLength(req);
      if (stalled || length === undefined || length > MAX_DRAIN_BYTES) res.setHeader('Connection', 'close');
      // Read the rest and drop it: for a usable connection, the next request follows it; for one being closed, a
      // client still sending is not reset before it reads the answer. Nothing reads the body after its answer: a
      // view of it that no one read (bodyStream) is let go.
      req.unpipe();
      req.resume();
    }
    settled = true;
    return writeHead(...args);
  }) as ServerResponse['writeHead'];

  watchIdle(req, options.idleMs, () => {
    stalled = true;
    const error = new BodyStalledError(options.idleMs);
    stalledBodies.set(req, error);
    if (res.headersSent) {
      // The answer went out already (the rest was being dropped): nothing more can come of this connection.
      req.socket.destroy();
      return;
    }
    const { status, body } = errorResponse(error, { loggedIn: false, production: true, requestId: '' });
    const text = JSON.stringify(body);
    res.statusCode = status;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.end(text, () => {
      // Whatever still waits for the body (a body reader, an upload's stream) fails with the named error; the
      // answer it would give has been given.
      req.destroy(error);
      req.socket.destroy();
    });
  });
}

/**
 * Calls `onIdle` once when the body has sent nothing for `idleMs` while someone reads it (a body nobody reads yet, or
 * whose reader holds back, is waiting on the service, not on the client). Stops when the body is complete or the
 * connection gone. The socket's byte count moves with every byte the parser takes, read or not.
 */
function watchIdle(req: IncomingMessage, idleMs: number, onIdle: () => void): void {
  const socket = req.socket;
  let bytesRead = socket.bytesRead;
  let lastProgress = Date.now();
  const timer = setInterval(
    () => {
      if (req.complete || socket.destroyed) {
        clearInterval(timer);
        return;
      }
      const now = Date.now();
      const waitingOnClient = req.readableFlowing === true && req.readableLength === 0;
      if (socket.bytesRead !== bytesRead || !waitingOnClient) {
        bytesRead = socket.bytesRead;
        lastProgress = now;
        return;
      }
      if (now - lastProgress >= idleMs) {
        clearInterval(timer);
        onIdle();
      }
    },
    Math.max(Math.floor(idleMs / 4), 5),
  );
  timer.unref();
  // On the request, not the socket: a kept-alive socket carries many requests, and a listener per request on it
  // would pile up. A connection that closes first is seen at the next tick (the timer does not hold the process).
  req.once('end', () => clearInterval(timer));
}

/**
 * The body as a stream for a consumer that pipes it somewhere (an upload into a file): a view of the request that
 * the consumer may destroy when its destination fails (a full disk) without destroying the request, and with it the
 * connection and the answer still to be written. The rest of the body is then left to the rules above. A request that
 * fails or goes away before its body ended fails the view too, so that no consumer waits for ever.
 */
export function bodyStream(req: IncomingMessage): Readable {
  const view = new PassThrough();
  req.pipe(view);
  req.once('error', (error) => fail(view, error));
  req.once('close', () => {
    if (!req.complete) fail(view, new Error('The request was aborted before its body was read.'));
  });
  // Let go when the answer went out first (the rest is then dropped): whoever still held the view learns it.
  view.once('unpipe', () => {
    if (!req.complete)
      fail(view, stalledBodies.get(req) ?? new Error('The request was answered before its body was read.'));
  });
  return view;
}

/** Ends the view with `error` for whoever reads it; quietly when no one does (an unheard error would crash). */
function fail(view: PassThrough, error: Error): void {
  if (!view.destroyed) view.destroy(view.listenerCount('error') > 0 ? error : undefined);
}
