import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { loggedUrl } from './secrets';

declare module 'http' {
  interface IncomingMessage {
    /** The request's id, also sent as `Girder-Request-Uid` and recorded in the metadata of the events it causes. */
    id: string;
    /** A logger bound to this request (its id, method and URL, secrets redacted). */
    log: Logger;
    /**
     * The query parameters whose values the log may show: the matched route's declared non-secret ones
     * (src/http/secrets.ts), set by the router. Until a route matches (or when none does) no value is shown.
     */
    loggableParams?: ReadonlySet<string>;
  }
}

/**
 * The request log: an id per request (`Girder-Request-Uid`), `req.log`, and one `request completed` line per answer
 * at level info, as pino-http wrote them (`req: {id, method, url}`, `res: {statusCode}`, `responseTime`).
 *
 * Written for the request path's cost (docs/performance.md, "Request path"): pino-http built a child logger per
 * request, serialising the request into it, and hooked three listeners, even when its line would be dropped by the
 * level. Here the child logger is built only when something logs through `req.log`, and the answer is watched only
 * when level info is enabled.
 */
export function requestLog(logger: Logger): (req: Request, res: Response) => void {
  return (req, res) => {
    const id = randomUUID();
    const started = Date.now();
    // The URL as received (express rewrites req.url below mount points).
    const url = req.originalUrl;
    res.setHeader('Girder-Request-Uid', id);
    req.id = id;
    let log: Logger | undefined;
    Object.defineProperty(req, 'log', {
      configurable: true,
      // Built on first use, by then the route has usually matched: its declarations decide which values show.
      get: () => (log ??= logger.child({ req: { id, method: req.method, url: loggedUrl(url, req.loggableParams) } })),
    });
    if (logger.isLevelEnabled('info')) {
      // 'close' follows 'finish' on a completed answer, and also comes alone when the client went away first.
      res.once('close', () => {
        const statusCode = res.statusCode;
        const responseTime = Date.now() - started;
        if (statusCode >= 500) {
          req.log.info(
            { res: { statusCode }, err: new Error(`failed with status code ${statusCode}`), responseTime },
            'request errored',
          );
        } else {
          req.log.info(
            { res: { statusCode }, responseTime },
            !req.readableAborted && res.writableEnded ? 'request completed' : 'request aborted',
          );
        }
      });
    }
  };
}
