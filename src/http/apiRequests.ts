import type { Request, Response } from 'express';
import type { Services } from '../services';
import { RestError } from '../domain/errors';
import { ownValue } from '../domain/ownMap';
import { errorResponse } from './errorMapping';
import { sendResult } from './render';
import { Router } from './router';
import { collectParams, hasProcessableBody } from './requestParams';
import { BODY_LIMIT, readBody } from './bodyReader';
import { decodeBody } from './bodyDecoding';
import { checkAccessMode, resolvePrincipal } from './auth';
import { parseJsonBody } from './params';
import { loggableParamNames } from './secrets';
import { loadModels } from './modelLoading';
import {
  RESPONSE_SENT,
  routeEventName,
  type HttpMethod,
  type Resource,
  type RouteContext,
  type RouteDef,
} from './routeTable';
import type { ListenerInfo } from '../bus/hooks';
import { ANONYMOUS, type Principal } from './principal';
import { describeStorageFault, storageFaultOf } from '../ports/storageFault';

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
export function pathSegments(path: string): string[] {
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

export interface ApiRequests {
  /** Whether a first path segment below the API root names a resource, i.e. whether `handle` answers the path. */
  hasResource(name: string | undefined): boolean;
  /** Answers one `/api/v1/<resource>/…` request, given its path segments below the API root. */
  handle(req: Request, res: Response, segments: string[]): Promise<void>;
}

/**
 * The API's request pipeline, one function per request: the route table's match (method override included), the
 * body and parameters, the caller, the `rest.*` hooks around the handler, rendering, and error mapping.
 */
export function apiRequests(services: Services, resources: Resource[]): ApiRequests {
  const router = new Router(resources);
  const { hooks } = services;

  /** Runs a route: access, params, handler; fires `.failed` when any of them throws. */
  async function runDefault(
    ctxBase: Omit<RouteContext, 'params' | 'models'>,
    route: RouteDef,
    info: { params: Record<string, string> },
    bodyBytes: Buffer | undefined,
    eventName: string,
  ) {
    try {
      checkAccessMode(route, ctxBase.principal);
      const raw = info.params;
      // In declaration order, so the first failing parameter decides the error (Girder's describeRoute).
      const parsed: [string, unknown][] = [];
      for (const spec of route.params) {
        const given = ownValue(raw, spec.name);
        const rawValue = spec.in === 'body' && given === undefined ? parseJsonBody(spec.name, bodyBytes) : given;
        parsed.push([spec.name, spec.parse(rawValue, ctxBase.principal.viewer)]);
      }
      const params = Object.fromEntries(parsed);
      route.validate?.(params);
      const models = route.models
        ? await loadModels(route.models, {
            reads: services,
            viewer: ctxBase.principal.viewer,
            params,
            path: ctxBase.path,
          })
        : {};
      return await route.handler({ ...ctxBase, rawParams: raw, params, models });
    } catch (error) {
      await hooks.trigger(`${eventName}.failed`, info);
      throw error;
    }
  }

  async function handle(req: Request, res: Response, segments: string[]): Promise<void> {
    const requestId = req.id;
    let principal: Principal = ANONYMOUS;
    try {
      const method = routingMethod(req);
      const [resourceName, ...rest] = segments;
      const match = METHODS.has(method) ? router.match(method as HttpMethod, resourceName, rest) : null;
      if (!match) throw new RestError(`No matching route for "${method} ${rest.join('/')}"`);
      const { route } = match;
      req.loggableParams = loggableParamNames(route.params);

      // A raw-body route (uploads) still gets its parameters from a urlencoded form body, as CherryPy would parse it.
      const formOnRawRoute =
        route.rawBody === true && req.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';
      const body =
        (!route.rawBody || formOnRawRoute) && hasProcessableBody(req) ? await readBody(req, BODY_LIMIT) : undefined;
      const decoded = body && (await decodeBody(req, body, BODY_LIMIT));
      const { raw, bodyBytes } = collectParams(req, decoded);
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
        const ctxBase: Omit<RouteContext, 'params' | 'models'> = {
          rawParams: raw,
          path: match.path,
          principal,
          services,
          meta: { requestId, userId: principal.user?._id ?? null, correlationId: requestId, causationId: null },
          req,
          res,
          setTotalCount: (total) => res.setHeader('Girder-Total-Count', String(total)),
        };
        result = await runDefault(ctxBase, route, info, bodyBytes, eventName);
        if (result === RESPONSE_SENT) return;
      }
      info.returnVal = result;
      const after = await hooks.trigger(`${eventName}.after`, info);
      if (after.defaultPrevented && after.responses.length > 0) result = after.responses[0];
      if (!res.headersSent) sendResult(req, res, 200, result);
      // A write went through: whatever storage fault writes met before is over (readiness, src/http/health.ts).
      if (method !== 'GET' && services.storageFaults.current) services.storageFaults.succeeded();
    } catch (error) {
      sendApiError(services, req, res, error, principal);
    }
  }

  return { hasResource: (name) => name !== undefined && router.hasResource(name), handle };
}

/** Answers an error in the documented format (a 5xx logged with its cause), or cuts a response already under way. */
export function sendApiError(
  services: Services,
  req: Request,
  res: Response,
  error: unknown,
  principal: Principal,
): void {
  const { status, body, retryAfterSeconds } = errorResponse(error, {
    loggedIn: principal.user !== null,
    production: services.config.production,
    requestId: req.id,
  });
  const fault = storageFaultOf(error);
  if (fault) {
    // Named, so logged as what it is rather than as a failure of the service; readiness reports it until a write
    // succeeds again.
    services.storageFaults.failed(fault);
    req.log.warn({ err: error, fault: describeStorageFault(fault) }, 'write refused: storage fault');
  } else if (status >= 500) req.log.error({ err: error }, 'request failed');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(retryAfterSeconds));
  sendResult(req, res, status, body);
}
