import crypto from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import pinoHttp from 'pino-http';
import swaggerUi from 'swagger-ui-express';
import type { Services } from '../services';
import { RestError } from '../domain/errors';
import { errorResponse } from './errorMapping';
import { sendResult } from './render';
import { Router } from './router';
import { collectParams, hasProcessableBody } from './requestParams';
import { ANONYMOUS, checkAccessMode, resolvePrincipal, type Principal } from './auth';
import { parseJsonBody } from './params';
import { RESPONSE_SENT, routeEventName, type HttpMethod, type Resource, type RouteContext } from './routeTable';
import { openApiDocument } from './openapi';
import { apiResources } from './resources';

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
const OVERRIDE_HEADERS = ['X-HTTP-Method-Override', 'X-HTTP-Method', 'X-Method-Override'];
const BODY_LIMIT = 16 * 1024 * 1024;

/** The routing method: the request's, or on POST the last method-override header present. */
function routingMethod(req: Request): string {
  let method = req.method.toUpperCase();
  if (method === 'POST') {
    for (const header of OVERRIDE_HEADERS) {
      const value = req.get(header);
      if (value) method = value.trim().toUpperCase();
    }
  }
  return method === 'HEAD' ? 'GET' : method;
}

function readBody(req: Request, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(Object.assign(new Error('request entity too large'), { type: 'entity.too.large' }));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export function createApp(services: Services, resources: Resource[] = apiResources): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const router = new Router(resources);

  app.use(
    pinoHttp({
      logger: services.logger,
      genReqId: (req, res) => {
        const id = crypto.randomUUID();
        res.setHeader('Girder-Request-Uid', id);
        return id;
      },
      // Never log headers (tokens, Basic credentials, cookies) nor the token parameter.
      serializers: {
        req: (req) => ({ id: req.id, method: req.method, url: String(req.url).replace(/([?&]token=)[^&]*/g, '$1[redacted]') }),
        res: (res) => ({ statusCode: res.statusCode }),
      },
    }),
  );

  app.get('/api/v1/describe', (_req, res) => {
    res.type('application/json').send(JSON.stringify(openApiDocument(resources, services.version)));
  });
  app.use('/api/v1', swaggerUi.serve);
  app.get(['/api/v1', '/api/v1/'], swaggerUi.setup(undefined, { swaggerUrl: '/api/v1/describe', customSiteTitle: 'Folder Service API' }));

  app.use('/api/v1', async (req: Request, res: Response, next: NextFunction) => {
    const requestId = String(req.id);
    res.setHeader('Cache-Control', 'no-cache, no-store, must-revalidate');
    res.setHeader('Pragma', 'no-cache');
    res.setHeader('Expires', '0');
    let principal: Principal = ANONYMOUS;
    try {
      const method = routingMethod(req);
      const segments = req.path.split('/').filter((s) => s.length > 0).map(decodeURIComponent);
      const [resourceName, ...rest] = segments;
      if (!resourceName || !router.hasResource(resourceName)) return next();
      if (!METHODS.has(method)) throw new RestError(`No matching route for "${method} ${rest.join('/')}"`);
      const match = router.match(method as HttpMethod, resourceName, rest);
      if (!match) throw new RestError(`No matching route for "${method} ${rest.join('/')}"`);
      const { route } = match;

      const body = !route.rawBody && hasProcessableBody(req, method) ? await readBody(req, BODY_LIMIT) : undefined;
      const { raw, bodyText } = collectParams(req, body);
      principal = await resolvePrincipal(services, req, route, raw);
      const eventName = routeEventName(method, match.resource.name, route.path);
      const info = { ...match.path, params: raw };
      const before = await services.hooks.trigger(`${eventName}.before`, info);

      let result: unknown;
      if (before.defaultPrevented && before.responses.length > 0) {
        result = before.responses[0];
      } else {
        checkAccessMode(route, principal);
        const params: Record<string, unknown> = {};
        for (const spec of route.params) {
          const rawValue = spec.in === 'body' && raw[spec.name] === undefined ? parseJsonBody(spec.name, bodyText) : raw[spec.name];
          params[spec.name] = spec.parse(rawValue);
        }
        const ctx: RouteContext = {
          params: params as RouteContext['params'],
          rawParams: raw,
          path: match.path,
          principal,
          services,
          meta: { requestId, userId: principal.user?._id ?? null, correlationId: requestId, causationId: null },
          req,
          res,
          setTotalCount: (total) => res.setHeader('Girder-Total-Count', String(total)),
        };
        try {
          result = await route.handler(ctx);
        } catch (error) {
          await services.hooks.trigger(`${eventName}.failed`, info);
          throw error;
        }
        if (result === RESPONSE_SENT) return;
      }
      const after = await services.hooks.trigger(`${eventName}.after`, { ...info, returnVal: result });
      if (after.defaultPrevented && after.responses.length > 0) result = after.responses[0];
      if (!res.headersSent) sendResult(req, res, 200, result);
    } catch (error) {
      const { status, body } = errorResponse(error, { loggedIn: principal.user !== null, production: services.config.production, requestId });
      if (status >= 500) req.log.error({ err: error }, 'request failed');
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendResult(req, res, status, body);
    }
  });

  app.use((req: Request, res: Response) => {
    sendResult(req, res, 404, { message: `No resource at "${req.method} ${req.path}".`, type: 'rest' });
  });
  return app;
}
