import type { RequestContext } from '../context.js';
import { recordRequest, recordStoreError } from '../metrics.js';
import type { paths } from '../openapi/generated/types.js';
import { matchRelayPath, type RelayPath } from '../relay-paths.js';
import type { Services } from '../service-types.js';
import type { OutgoingHeaders } from './exchange.js';

/**
 * Routes: exact paths, `{param}` templates (OpenAPI style) and the paid catch-all. Two kinds of target:
 * the paid pipeline, or a handler that returns a complete reply (wallet, balance, admin, public pages).
 * Route modules register handlers without touching core: `RouteModule = (router, services) => void`.
 */

/** A complete reply: `json` is serialised; `body` is sent as-is (then set `content-type` in headers). */
export interface RouteReply {
  status?: number;
  headers?: OutgoingHeaders;
  json?: unknown;
  body?: string | Buffer;
}

export type RouteHandler = (ctx: RequestContext) => RouteReply | Promise<RouteReply>;

export interface RouteOptions {
  /**
   * The body is JSON: a non-empty body must have a JSON Content-Type (else 415) and parse (else 400
   * `invalid_json`); it is then checked against the OpenAPI schema. Default: true.
   */
  json?: boolean;
  /**
   * The body is not read before the handler: the handler reads `ctx.bodyStream` as it arrives (uploads far above
   * MAX_BODY_BYTES), at most `maxBytes` of it (413 `payload_too_large` beyond, declared or counted). What the
   * handler leaves unread is read and discarded before its answer (core/http/streamed-body.ts). No JSON.
   */
  streamBody?: { maxBytes: number };
}

export interface Route {
  readonly method: string;
  /** OpenAPI path template (`/v1/providers/{provider_name}`); `/{path}` for the catch-all. */
  readonly template: string;
  readonly target: 'pipeline' | RouteHandler;
  readonly json: boolean;
  readonly streamBody: { maxBytes: number } | undefined;
}

export type RouteModule = (router: Router, services: Services) => void;

type JsonContent<R> = R extends { content: { 'application/json': infer B } } ? B : undefined;
/**
 * The JSON request body an OpenAPI operation declares (generated types of core/openapi/generated): the body
 * type when required, `| undefined` when optional, `undefined` when the operation takes none, `unknown` for a
 * template the document does not have.
 */
export type JsonBodyOf<P extends string, M extends string> = P extends keyof paths
  ? Lowercase<M> extends keyof paths[P]
    ? paths[P][Lowercase<M>] extends { requestBody: infer R }
      ? JsonContent<R>
      : paths[P][Lowercase<M>] extends { requestBody?: infer R }
        ? JsonContent<R> | undefined
        : undefined
    : undefined
  : unknown;

/** A handler that receives the request body typed from the OpenAPI document. */
export type TypedRouteHandler<B> = (ctx: RequestContext, body: B) => RouteReply | Promise<RouteReply>;

/** Wraps a route handler so its requests are counted and timed under `route` (the template). */
function timedRoute(route: string, method: string, handler: RouteHandler): RouteHandler {
  return async (ctx) => {
    const t0 = performance.now();
    let status = 500;
    try {
      const reply = await handler(ctx);
      status = reply.status ?? 200;
      return reply;
    } catch (err) {
      const e = err as { status?: unknown; code?: unknown };
      if (typeof e.status === 'number') status = e.status;
      if (e.code === 'store_unavailable') recordStoreError('route');
      throw err;
    } finally {
      recordRequest(route, method, status, (performance.now() - t0) / 1000);
    }
  };
}

/**
 * The one way route modules register a handler: counted and timed under its template (GET /metrics), and
 * given the JSON body typed from the OpenAPI operation. The transport validated that body against the same
 * operation's schema before the handler runs, which is what makes the cast below sound.
 */
export function route<P extends string, M extends 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'>(
  router: Router,
  method: M,
  template: P,
  handler: TypedRouteHandler<JsonBodyOf<P, M>>,
  opts?: RouteOptions,
): void {
  const typed: RouteHandler = (ctx) => handler(ctx, ctx.body as JsonBodyOf<P, M>);
  router.add(method, template, timedRoute(template, method, typed), opts);
}

export type RouteMatch =
  | { kind: 'route'; route: Route; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allowed: string[] }
  /** Under the catch-all's prefix, but RELAY_PATHS does not list it: 404 `endpoint_not_enabled`. */
  | { kind: 'not_enabled' }
  | { kind: 'none' };

interface Pattern {
  segments: string[];
  routes: Map<string, Route>;
}

/** The catch-all's OpenAPI template. */
export const CATCH_ALL_TEMPLATE = '/{path}';

export class Router {
  private readonly exact = new Map<string, Map<string, Route>>();
  private readonly patterns: Pattern[] = [];
  private catchAllPrefix: string | undefined;
  private relayPaths: readonly RelayPath[] = [];

  add(method: string, template: string, target: Route['target'], opts: RouteOptions = {}): this {
    const route: Route = {
      method: method.toUpperCase(),
      template,
      target,
      json: opts.streamBody === undefined && (opts.json ?? true),
      streamBody: opts.streamBody,
    };
    let routes: Map<string, Route>;
    if (template.includes('{')) {
      const segments = template.split('/');
      let p = this.patterns.find((x) => x.segments.join('/') === template);
      if (p === undefined) {
        p = { segments, routes: new Map() };
        this.patterns.push(p);
      }
      routes = p.routes;
    } else {
      routes = this.exact.get(template) ?? new Map();
      this.exact.set(template, routes);
    }
    if (routes.has(route.method)) throw new Error(`Route ${route.method} ${template} is registered twice`);
    routes.set(route.method, route);
    return this;
  }

  get(template: string, handler: RouteHandler, opts?: RouteOptions): this {
    return this.add('GET', template, handler, opts);
  }
  post(template: string, handler: RouteHandler, opts?: RouteOptions): this {
    return this.add('POST', template, handler, opts);
  }
  put(template: string, handler: RouteHandler, opts?: RouteOptions): this {
    return this.add('PUT', template, handler, opts);
  }
  patch(template: string, handler: RouteHandler, opts?: RouteOptions): this {
    return this.add('PATCH', template, handler, opts);
  }
  delete(template: string, handler: RouteHandler, opts?: RouteOptions): this {
    return this.add('DELETE', template, handler, opts);
  }

  /** A paid route: the request runs through the pipeline. */
  pipeline(method: string, template: string, opts: RouteOptions = {}): this {
    return this.add(method, template, 'pipeline', opts);
  }

  /**
   * Every other path under `prefix` that `relayPaths` (RELAY_PATHS) lists goes through the paid pipeline;
   * the rest is `not_enabled`.
   */
  catchAll(prefix: string, relayPaths: readonly RelayPath[]): this {
    this.catchAllPrefix = prefix;
    this.relayPaths = relayPaths;
    return this;
  }

  match(method: string, path: string): RouteMatch {
    const m = method === 'HEAD' ? 'GET' : method;
    const exact = this.exact.get(path);
    if (exact !== undefined) return pick(exact, m, {});
    if (this.patterns.length > 0) {
      const segs = path.split('/');
      for (const p of this.patterns) {
        const params = matchSegments(p.segments, segs);
        if (params !== undefined) return pick(p.routes, m, params);
      }
    }
    if (
      this.catchAllPrefix !== undefined &&
      path.startsWith(this.catchAllPrefix) &&
      path.length > this.catchAllPrefix.length
    ) {
      if (matchRelayPath(this.relayPaths, m, path) === undefined) return { kind: 'not_enabled' };
      return {
        kind: 'route',
        route: {
          method,
          template: CATCH_ALL_TEMPLATE,
          target: 'pipeline',
          json: false,
          streamBody: undefined,
        },
        params: { path: path.slice(1) },
      };
    }
    return { kind: 'none' };
  }
}

function pick(routes: Map<string, Route>, method: string, params: Record<string, string>): RouteMatch {
  const route = routes.get(method);
  if (route !== undefined) return { kind: 'route', route, params };
  return { kind: 'method_not_allowed', allowed: [...routes.keys()] };
}

function matchSegments(template: string[], path: string[]): Record<string, string> | undefined {
  if (template.length !== path.length) return undefined;
  let params: Record<string, string> | undefined;
  for (let i = 0; i < template.length; i++) {
    const t = template[i]!;
    const s = path[i]!;
    if (t.startsWith('{') && t.endsWith('}')) {
      if (s === '') return undefined;
      let value: string;
      try {
        value = decodeURIComponent(s);
      } catch {
        return undefined;
      }
      params ??= {};
      params[t.slice(1, -1)] = value;
    } else if (t !== s) {
      return undefined;
    }
  }
  return params ?? {};
}
