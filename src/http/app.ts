import express, { type NextFunction, type Request, type Response } from 'express';
import swaggerUi from 'swagger-ui-express';
import type { Services } from '../services';
import { RestError } from '../domain/errors';
import { errorResponse } from './errorMapping';
import { sendResult } from './render';
import { Router } from './router';
import { collectParams, hasProcessableBody } from './requestParams';
import { BODY_LIMIT, readBody } from './bodyReader';
import { checkAccessMode, resolvePrincipal } from './auth';
import { parseJsonBody } from './params';
import {
  RESPONSE_SENT,
  routeEventName,
  type HttpMethod,
  type Resource,
  type RouteContext,
  type RouteDef,
} from './routeTable';
import { openApiDocument } from './openapi';
import { apiResources } from './resources';
import type { ListenerInfo } from '../bus/hooks';
import { healthRoutes } from './health';
import { requestLog } from './requestLog';
import { webClientRoutes } from './web/webClient';
import { ANONYMOUS, type Principal } from './principal';

export const API_ROOT = '/api/v1';
const METHODS = new Set<string>(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
/** Checked in this order; the last one present wins (Girder's Resource.POST). */
const OVERRIDE_HEADERS = ['X-HTTP-Method-Override', 'X-HTTP-Method', 'X-Method-Override'];

/** The routing method: the request's, or on POST the last method-override header present (any case). */
export function routingMethod(req: Request): string {
  let method = req.method.toUpperCase();
  if (method === 'POST') {
    for (const header of OVERRIDE_HEADERS) {
      const value = req.get(header);
      if (value !== undefined) method = value.trim().toUpperCase();
    }
  }
  return method === 'HEAD' ? 'GET' : method;
}

/** Path segments below the API root, percent-decoded (a malformed escape stays as given). */
function pathSegments(path: string): string[] {
  return path
    .split('/')
    .filter((s) => s.length > 0)
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
}

/** The request's id: a UUID string, as `genReqId` below makes it. */
const requestIdOf = (req: Request): string => req.id;

/** The Swagger UI page, with its assets addressed below the API root whether or not the URL ends with a slash. */
function swaggerPage(): string {
  const html = swaggerUi.generateHTML(undefined, {
    swaggerUrl: `${API_ROOT}/describe`,
    customSiteTitle: 'Folder Service API',
  });
  return html.replace(/(href|src)="\.\//g, `$1="${API_ROOT}/`);
}

/**
 * The HTTP application: common headers, the OpenAPI document and Swagger UI, and one middleware that routes every
 * `/api/v1/<resource>/…` request through the route table (method override, params, auth, `rest.*` hooks, handler,
 * rendering, error mapping).
 */
export function createApp(services: Services, resources: Resource[] = apiResources): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // /healthz and /readyz: outside /api/v1 and before the request log, so probes neither route nor flood the logs.
  app.use(healthRoutes(services));
  const router = new Router(resources);
  const { hooks } = services;

  // Request ids, `req.log` and the request log (never headers, tokens, passwords or keys).
  app.use(requestLog(services.logger));
  app.use((_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Cache-Control', 'no-cache, no-store, must-revalidate');
    res.setHeader('Pragma', 'no-cache');
    res.setHeader('Expires', '0');
    next();
  });

  // Built on the first request for it, not at start-up (the whole route table walked into a document).
  let describe: string | undefined;
  app.get(`${API_ROOT}/describe`, (_req, res) => {
    describe ??= JSON.stringify(openApiDocument(resources, services.version));
    res.type('application/json').send(describe);
  });

  /** Runs a route: access, params, handler; fires `.failed` when any of them throws. */
  async function runDefault(
    ctxBase: Omit<RouteContext, 'params'>,
    route: RouteDef,
    info: { params: Record<string, string> },
    bodyText: string | undefined,
    eventName: string,
  ) {
    try {
      checkAccessMode(route, ctxBase.principal);
      const raw = info.params;
      const params: Record<string, unknown> = {};
      for (const spec of route.params) {
        const given = raw[spec.name] as string | undefined;
        const rawValue = spec.in === 'body' && given === undefined ? parseJsonBody(spec.name, bodyText) : given;
        params[spec.name] = spec.parse(rawValue);
      }
      return await route.handler({ ...ctxBase, rawParams: raw, params: params });
    } catch (error) {
      await hooks.trigger(`${eventName}.failed`, info);
      throw error;
    }
  }

  app.use(API_ROOT, async (req: Request, res: Response, next: NextFunction) => {
    const requestId = requestIdOf(req);
    let principal: Principal = ANONYMOUS;
    try {
      const method = routingMethod(req);
      const [resourceName, ...rest] = pathSegments(req.path);
      if (!resourceName || !router.hasResource(resourceName)) {
        next();
        return;
      }
      const match = METHODS.has(method) ? router.match(method as HttpMethod, resourceName, rest) : null;
      if (!match) throw new RestError(`No matching route for "${method} ${rest.join('/')}"`);
      const { route } = match;

      // A raw-body route (uploads) still gets its parameters from a urlencoded form body, as CherryPy would parse it.
      const formOnRawRoute =
        route.rawBody === true && req.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';
      const body =
        (!route.rawBody || formOnRawRoute) && hasProcessableBody(req) ? await readBody(req, BODY_LIMIT) : undefined;
      const { raw, bodyText } = collectParams(req, body);
      principal = await resolvePrincipal(services, req, route, raw);
      const eventName = routeEventName(method, match.resource.name, route.path);
      // One info object for the whole request, as Girder's kwargs: a before-listener may adjust `params`.
      const info: Record<string, unknown> & { params: Record<string, string> } = { ...match.path, params: raw };
      const before = await hooks.trigger(`${eventName}.before`, info, {
        // A before-listener runs only if the caller passes its declared access (admin when it declares none).
        pre: (listener: ListenerInfo) => checkAccessMode({ ...route, access: listener.access ?? 'admin' }, principal),
      });

      let result: unknown;
      if (before.defaultPrevented && before.responses.length > 0) {
        result = before.responses[0];
      } else {
        const ctxBase: Omit<RouteContext, 'params'> = {
          rawParams: raw,
          path: match.path,
          principal,
          services,
          meta: { requestId, userId: principal.user?._id ?? null, correlationId: requestId, causationId: null },
          req,
          res,
          setTotalCount: (total) => res.setHeader('Girder-Total-Count', String(total)),
        };
        result = await runDefault(ctxBase, route, info, bodyText, eventName);
        if (result === RESPONSE_SENT) return;
      }
      info.returnVal = result;
      const after = await hooks.trigger(`${eventName}.after`, info);
      if (after.defaultPrevented && after.responses.length > 0) result = after.responses[0];
      if (!res.headersSent) sendResult(req, res, 200, result);
    } catch (error) {
      sendError(req, res, error, principal);
    }
  });

  // The web client at `/` (docs/web-client.md).
  app.use(webClientRoutes());

  const page = swaggerPage();
  app.get([API_ROOT, `${API_ROOT}/`], (_req, res) => {
    res.type('text/html; charset=utf-8').send(page);
  });
  app.use(API_ROOT, swaggerUi.serve);

  app.use((req: Request, res: Response) => {
    sendResult(req, res, 404, { message: `The path '${req.path}' was not found.`, type: 'rest' });
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    sendError(req, res, error, ANONYMOUS);
  });

  function sendError(req: Request, res: Response, error: unknown, principal: Principal): void {
    const { status, body, retryAfterSeconds } = errorResponse(error, {
      loggedIn: principal.user !== null,
      production: services.config.production,
      requestId: requestIdOf(req),
    });
    if (status >= 500) req.log.error({ err: error }, 'request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // The rest of an over-limit body may not have been read: this connection cannot carry another request.
    if (status === 413) res.setHeader('Connection', 'close');
    if (retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(retryAfterSeconds));
    sendResult(req, res, status, body);
  }

  return app;
}
