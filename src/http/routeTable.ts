import type { Request, Response } from 'express';
import type { ParamSpec } from './params';
import type { Services } from '../services';
import type { Principal } from './principal';
import type { ScopeName } from '../domain/scopes';
import type { RequestMeta } from '../commands/requestMeta';
import type { ModelDecls, ModelsOf } from './modelParams';

/**
 * Access modes: `public` admits anonymous callers; `user` needs a logged-in user (401 `You must be logged in.`);
 * `admin` needs a site administrator (`Administrator access required.`) and is what a route gets when it declares
 * none; `token` needs any valid token carrying the route's scopes (`Invalid token scope.` otherwise).
 */
type AccessMode = 'public' | 'user' | 'admin' | 'token';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type AnyParams = readonly ParamSpec[];
type ParamsOf<P extends AnyParams> = {
  [S in P[number] as S['name']]: S extends ParamSpec<string, infer T> ? T : never;
};

export interface RouteContext<P extends AnyParams = AnyParams, M extends ModelDecls = ModelDecls> {
  /** Coerced declared parameters. */
  params: ParamsOf<P>;
  /** The declared model parameters, loaded and checked at their levels (src/http/modelParams.ts). */
  models: ModelsOf<M>;
  /** Every query/form parameter as given (strings), what the `rest.*` events carry as `params`. */
  rawParams: Record<string, string>;
  /** Wildcard route tokens, e.g. `{ id }`. */
  path: Record<string, string>;
  principal: Principal;
  services: Services;
  meta: RequestMeta;
  req: Request;
  res: Response;
  /** Sets the `Girder-Total-Count` header of a listing. */
  setTotalCount: (total: number) => void;
}

/** Returned by handlers that wrote the response themselves (downloads, streams). */
export const RESPONSE_SENT = Symbol('response-sent');

export interface RouteDef<P extends AnyParams = AnyParams, M extends ModelDecls = ModelDecls> {
  method: HttpMethod;
  /** Path below the resource: '' for the resource root, ':id', ':id/access', 'authentication', … */
  path: string;
  summary: string;
  access: AccessMode;
  /** Scopes the token must carry (a `core.user_auth` token passes all). Default: `core.user_auth`. */
  scope?: ScopeName[];
  /** Whether the token may come from the `serviceToken`/`girderToken` cookie. */
  cookie?: boolean;
  params: P;
  /**
   * The models the route acts on, by the name the handler reads them under: where each id comes from, its model and
   * the level the caller needs (`model.path('folder', AccessLevel.WRITE)`). Loaded before the handler runs.
   */
  models?: M;
  /** Checks on the parameters together, made after each is parsed and before any model is loaded. */
  validate?(params: ParamsOf<P>): void;
  /** The raw request body is the route's own (uploads): the router neither reads nor parses it. */
  rawBody?: boolean;
  /** Response description for the OpenAPI document. */
  produces?: 'application/json' | 'application/zip' | 'application/octet-stream' | 'text/event-stream' | 'text/plain';
  /** Returns the response value, or a promise of it, or RESPONSE_SENT. */
  handler(ctx: RouteContext<P, M>): unknown;
}

export interface Resource {
  /** Mount name under /api/v1, e.g. `folder`. */
  name: string;
  description: string;
  routes: RouteDef[];
}

/** Declares a route with its params and models typed from the declaration. */
export function route<const P extends AnyParams, const M extends ModelDecls = Record<string, never>>(
  def: RouteDef<P, M>,
): RouteDef<P, M> {
  return def;
}

/** The `rest.*` event name stem of a route: `<method>.<resource>[/<path>]` (Girder's handleRoute). */
export function routeEventName(method: string, resource: string, path: string): string {
  return `rest.${method.toLowerCase()}.${path ? `${resource}/${path}` : resource}`;
}
