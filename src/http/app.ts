import express, { type NextFunction, type Request, type Response } from 'express';
import swaggerUi from 'swagger-ui-express';
import type { Services } from '../services';
import { sendResult } from './render';
import type { Resource } from './routeTable';
import { openApiDocument } from './openapi';
import { apiResources } from './resources';
import { healthRoutes } from './health';
import { requestLog } from './requestLog';
import { webClientRoutes } from './web/webClient';
import { setPageHeaders } from './pageHeaders';
import { fileOriginOf, onFileOrigin, servedOnFileOrigin } from './fileOrigin';
import { ANONYMOUS } from './principal';
import { API_ROOT, apiRequests, pathSegments, sendApiError, type ApiRequests } from './apiRequests';
import { guardRequestBody, type BodyRemainderOptions } from './bodyRemainder';
import { corsHeaders } from './cors';

/**
 * Headers on every answer but the probes': nothing the service answers may be cached, and no answer's type is
 * guessed from its bytes (`nosniff`: a JSON answer echoing user text is never read as HTML or script).
 */
function setCommonHeaders(res: Response): void {
  res.setHeader('Cache-Control', 'no-cache, no-store, must-revalidate');
  res.setHeader('Pragma', 'no-cache');
  res.setHeader('Expires', '0');
  res.setHeader('X-Content-Type-Options', 'nosniff');
}

/** The Swagger UI page, with its assets addressed below the API root whether or not the URL ends with a slash. */
function swaggerPage(): string {
  const html = swaggerUi.generateHTML(undefined, {
    swaggerUrl: `${API_ROOT}/describe`,
    customSiteTitle: 'Folder Service API',
  });
  return html.replace(/(href|src)="\.\//g, `$1="${API_ROOT}/`);
}

/**
 * The HTTP application: the probes, common headers, the OpenAPI document and Swagger UI, the web client, and every
 * `/api/v1/<resource>/…` request through the API's route table (src/http/apiRequests.ts).
 */
export function createApp(services: Services, resources: Resource[] = apiResources): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Whose X-Forwarded-Proto / -Host / -For to believe (TRUST_PROXY): `req.secure` (the cookie's Secure) and `req.host`.
  app.set('trust proxy', services.config.trustProxy);
  // /healthz and /readyz: outside /api/v1 and before the request log, so probes neither route nor flood the logs.
  app.use(healthRoutes(services));
  const api = apiRequests(services, resources);
  // Request ids, `req.log` and the request log (never headers, tokens, passwords or keys), and the common headers.
  const logRequest = requestLog(services.logger);
  const beforeEveryAnswer = (req: Request, res: Response) => {
    logRequest(req, res);
    setCommonHeaders(res);
  };
  const refusedOnFileOrigin = fileOriginGate(services);
  // Girder's CORS headers and preflight answer, on the API's routes (not on the web client, Swagger UI or probes).
  const cors = corsHeaders(services, fileOriginOf(services.config));
  answerApiDirectly(app, api, beforeEveryAnswer, refusedOnFileOrigin, cors, {
    idleMs: services.config.bodyIdleTimeoutMs,
  });
  app.use((req: Request, res: Response, next: NextFunction) => {
    beforeEveryAnswer(req, res);
    if (!refusedOnFileOrigin(req, res)) next();
  });

  // Built on the first request for it, not at start-up (the whole route table walked into a document).
  let describe: string | undefined;
  app.all(`${API_ROOT}/describe`, cors);
  app.get(`${API_ROOT}/describe`, (_req, res) => {
    describe ??= JSON.stringify(openApiDocument(resources, services.version));
    setPageHeaders(res);
    res.type('application/json').send(describe);
  });

  // The API for what the direct path below leaves to express (a URL it does not take apart, as `/API/V1/…`).
  app.use(API_ROOT, (req: Request, res: Response, next: NextFunction) => {
    const segments = pathSegments(req.path);
    if (api.hasResource(segments[0])) cors(req, res, () => void api.handle(req, res, segments));
    else next();
  });

  // The web client at `/` (docs/web-client.md).
  app.use(webClientRoutes());

  const page = swaggerPage();
  app.get([API_ROOT, `${API_ROOT}/`], (_req, res) => {
    setPageHeaders(res);
    res.type('text/html; charset=utf-8').send(page);
  });
  app.use(API_ROOT, swaggerUi.serve);

  app.use((req: Request, res: Response) => {
    sendResult(req, res, 404, { message: `The path '${req.path}' was not found.`, type: 'rest' });
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    sendApiError(services, req, res, error, ANONYMOUS);
  });

  return app;
}

/**
 * On the file origin (FILE_ORIGIN), everything but a file download is answered 404 by this function (which then
 * returns true): no page, no login and no other route is reachable on the origin user files are served from.
 */
function fileOriginGate(services: Services): (req: Request, res: Response) => boolean {
  const fileOrigin = fileOriginOf(services.config);
  if (!fileOrigin) return () => false;
  return (req, res) => {
    if (!onFileOrigin(fileOrigin, req) || servedOnFileOrigin(req)) return false;
    sendResult(req, res, 404, { message: 'Only file downloads are served on the file origin.', type: 'rest' });
    return true;
  };
}

/**
 * Answers `/api/v1/<resource>/…` requests without express's router, and leaves every other request to it; before
 * either, puts every request's body under the connection rules (src/http/bodyRemainder.ts).
 *
 * Why: on the request path, express's dispatch walked every layer before the API's (the probes' router, the request
 * log, the headers, the OpenAPI document) and took the mount point apart: ~14 % of a `GET /folder/:id`'s CPU
 * (docs/performance.md, "Request path"). The API has its own route table, so none of that chose anything.
 *
 * How: express's app function hands each request to `app.handle`; this wraps it. For an API path it does what
 * express does before the first middleware and what the API's middleware relies on (the circular references, the
 * request and response prototypes with `req.get`, `res.status`…, `originalUrl`), then the request log and headers
 * of every answer, the CORS headers (src/http/cors.ts), and runs the API's pipeline. Anything else, including a URL spelt differently that express would
 * still route to the API (case, absolute form), takes express's path unchanged.
 */
function answerApiDirectly(
  app: express.Express,
  api: ApiRequests,
  beforeEveryAnswer: (req: Request, res: Response) => void,
  refusedOnFileOrigin: (req: Request, res: Response) => boolean,
  cors: (req: Request, res: Response, next: NextFunction) => void,
  bodies: BodyRemainderOptions,
): void {
  type Handle = (req: Request, res: Response, callback?: NextFunction) => void;
  const appWithHandle = app as unknown as { handle: Handle };
  const expressHandle = appWithHandle.handle;
  appWithHandle.handle = function handle(req, res, callback) {
    // Every request, API or not: what its answer leaves of its body on the connection (bodyRemainder.ts).
    guardRequestBody(req, res, bodies);
    const segments = apiSegments(req.url);
    if (!segments || !api.hasResource(segments[0])) {
      expressHandle.call(this, req, res, callback);
      return;
    }
    req.res = res;
    res.req = req;
    Object.setPrototypeOf(req, app.request);
    Object.setPrototypeOf(res, app.response);
    req.originalUrl = req.url;
    beforeEveryAnswer(req, res);
    if (!refusedOnFileOrigin(req, res)) cors(req, res, () => void api.handle(req, res, segments));
  };
}

/** The path segments below the API root of a request URL in origin form, or undefined for any other URL. */
function apiSegments(url: string): string[] | undefined {
  if (!url.startsWith(`${API_ROOT}/`)) return undefined;
  const query = url.indexOf('?');
  return pathSegments(url.slice(API_ROOT.length, query < 0 ? undefined : query));
}
