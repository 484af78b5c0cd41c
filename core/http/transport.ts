import { randomUUID } from 'node:crypto';
import { RequestContext, runnerAccess } from '../context.js';
import { GatewayError, toGatewayError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Pipeline } from '../pipeline.js';
import { tooLarge } from './body-limit.js';
import type { Cors } from './cors.js';
import type { Exchange, OutgoingHeaders } from './exchange.js';
import { pathProblem } from './framing.js';
import { jsonErrorPosition } from './json-error-position.js';
import { acceptsGzip, sendComplete, sendError, sendJson } from './respond.js';
import type { Route, Router } from './router.js';

/**
 * The HTTP front door shared by both engines: request id, CORS and preflight, docs pages, routing, body
 * reading (413 before reading too much), JSON parsing (400 `invalid_json` with the position), media type
 * (415 `unsupported_media_type` for a non-JSON body on a JSON route: the JSON endpoints take Content-Type
 * application/json only), schema validation, then the pipeline or a route handler. Every failure is the one
 * error envelope (`{ error: { code, message, … } }`, core/errors.ts).
 */

export type ValidatorLookup = (method: string, template: string) => ((body: unknown) => void) | undefined;
export type DocsLookup = (
  path: string,
) => { status: number; headers: Record<string, string>; body: Buffer | string } | undefined;

export interface TransportOptions {
  router: Router;
  pipeline: Pipeline;
  cors: Cors;
  maxBodyBytes: number;
  log: Logger;
  validatorFor?: ValidatorLookup | undefined;
  docs?: DocsLookup | undefined;
  /**
   * Called once per request after its response ended (or the client left), with the status sent (0 when
   * none was). Must not throw and must not block: the audit log records here (core/audit/audit-log.ts).
   */
  onRequestEnd?: ((ctx: RequestContext, status: number) => void) | undefined;
}

const REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;
const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json(?:\s*;|$)/i;
const DOCS_PATH = /^\/(?:openapi\.json$|docs(?:\/|$)|redoc(?:\/|$))/;

export class Transport {
  private inflight = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly opts: TransportOptions) {}

  /** The engine callback. */
  readonly handle = (ex: Exchange): void => {
    this.inflight++;
    const end = this.opts.onRequestEnd;
    // The request's context, once dispatch made one (for the end hook).
    const held: { ctx?: RequestContext } = {};
    // One `then` (not `.catch().finally()`: two extra promises per call).
    this.dispatch(ex, held).then(
      end === undefined ? this.done : () => this.ended(ex, held.ctx, end),
      (err) => {
        try {
          this.opts.log.error({ err }, 'unhandled error in request dispatch');
          if (!ex.ended) sendError(ex, {}, err);
        } finally {
          if (end === undefined) this.done();
          else this.ended(ex, held.ctx, end);
        }
      },
    );
  };

  private ended(
    ex: Exchange,
    ctx: RequestContext | undefined,
    end: (ctx: RequestContext, status: number) => void,
  ): void {
    try {
      if (ctx !== undefined) end(ctx, ex.statusCode);
    } catch (err) {
      this.opts.log.error({ err }, 'request end hook failed');
    } finally {
      this.done();
    }
  }

  private readonly done = (): void => {
    this.inflight--;
    if (this.inflight === 0) {
      const w = this.idleWaiters;
      this.idleWaiters = [];
      for (const cb of w) cb();
    }
  };

  get inflightRequests(): number {
    return this.inflight;
  }

  /** Resolves when no request is in flight, or after `timeoutMs`. */
  idle(timeoutMs: number): Promise<void> {
    if (this.inflight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  private async dispatch(ex: Exchange, held: { ctx?: RequestContext }): Promise<void> {
    const { router, cors } = this.opts;
    const incomingId = ex.headers['x-request-id'];
    const requestId = incomingId !== undefined && REQUEST_ID.test(incomingId) ? incomingId : randomUUID();
    const base: OutgoingHeaders = { 'x-request-id': requestId };
    const origin = ex.headers.origin;

    // Unsound framing or an unknown version: answered before anything reads the request (the engine closes
    // the connection after a framing refusal: where this request ends is unknowable).
    if (ex.refusal !== undefined) {
      sendError(ex, base, ex.refusal);
      return;
    }
    const badPath = pathProblem(ex.path);
    if (badPath !== undefined) {
      sendError(ex, base, new GatewayError('invalid_request', { message: badPath }));
      return;
    }

    if (ex.method === 'OPTIONS') {
      cors.preflight(origin, base);
      ex.writeHead(204, base);
      ex.end();
      return;
    }
    cors.headers(origin, base);

    const ctx = new RequestContext({
      requestId,
      method: ex.method,
      path: ex.path,
      rawQuery: ex.rawQuery,
      headers: ex.headers,
      clientIp: ex.remoteAddress,
      baseHeaders: base,
    });
    held.ctx = ctx;
    ex.timing = ctx.timings;
    ex.onAborted(() => {
      runnerAccess.markClientAborted(ctx);
      ctx.cancel();
    });

    try {
      if ((ex.method === 'GET' || ex.method === 'HEAD') && this.opts.docs && DOCS_PATH.test(ex.path)) {
        const page = this.opts.docs(ex.path);
        if (page !== undefined) {
          await sendComplete(
            ex,
            page.status,
            { ...base, ...page.headers },
            page.body,
            acceptsGzip(ex.headers),
          );
          return;
        }
      }
      const match = router.match(ex.method, ex.path);
      if (match.kind === 'none') {
        throw new GatewayError('not_found', { message: `No route for ${ex.method} ${ex.path}` });
      }
      if (match.kind === 'not_enabled') {
        throw new GatewayError('endpoint_not_enabled', {
          message: `${ex.method} ${ex.path} is not relayed by this gateway (RELAY_PATHS does not list it)`,
        });
      }
      if (match.kind === 'method_not_allowed') {
        throw new GatewayError('method_not_allowed', {
          message: `${ex.method} is not allowed on ${ex.path} (allowed: ${match.allowed.join(', ')})`,
          headers: { allow: match.allowed.join(', ') },
        });
      }
      const route = match.route;
      ctx.params = match.params;
      ctx.routeTemplate = route.template;
      if (route.streamBody !== undefined) openBodyStream(ex, ctx, route.streamBody.maxBytes);
      else await this.readRequestBody(ex, ctx, route);
      if (route.target === 'pipeline') {
        await this.opts.pipeline.run(ex, ctx);
        return;
      }
      const reply = await route.target(ctx);
      // What the handler left of a streamed body is read before the answer (a client still sending reads it).
      if (ctx.bodyStream !== undefined) await ex.discardBody();
      const headers: OutgoingHeaders = { ...base, ...reply.headers };
      const gzipOk = acceptsGzip(ex.headers);
      if (reply.body !== undefined) await sendComplete(ex, reply.status ?? 200, headers, reply.body, gzipOk);
      else await sendJson(ex, reply.status ?? 200, headers, reply.json ?? null, gzipOk);
    } catch (err) {
      if (ctx.clientAborted || ex.ended) return;
      if (ctx.bodyStream !== undefined) await ex.discardBody();
      const ge = toGatewayError(err);
      if (ge.code === 'internal_error') {
        this.opts.log.error({ err: ge.cause ?? ge, requestId, path: ex.path }, 'request failed');
      }
      sendError(ex, base, ge);
    }
  }

  private async readRequestBody(ex: Exchange, ctx: RequestContext, route: Route): Promise<void> {
    const hasBody =
      (ex.headers['content-length'] !== undefined && ex.headers['content-length'] !== '0') ||
      ex.headers['transfer-encoding'] !== undefined;
    if (hasBody) ctx.rawBody = await ex.readBody(this.opts.maxBodyBytes);
    const contentType = ex.headers['content-type'];
    const isJsonType = contentType !== undefined && JSON_TYPE.test(contentType);
    if (ctx.rawBody.length === 0) {
      // No body stands for no body: validated like one (a required body → 400), never a silent default.
      if (route.json) {
        const validate = this.opts.validatorFor?.(ctx.method, route.template);
        if (validate !== undefined) validate(undefined);
        else if (route.target === 'pipeline') {
          throw new GatewayError('validation_failed', { message: 'body: is required' });
        }
      }
      return;
    }
    if (route.json && !isJsonType) {
      throw new GatewayError('unsupported_media_type', {
        message: `Content-Type must be application/json (got ${contentType ?? 'none'})`,
      });
    }
    if (!isJsonType) return;
    ctx.body = parseJson(ctx.rawBody);
    const body = ctx.body as { model?: unknown; stream?: unknown } | null;
    if (typeof body === 'object' && body !== null) {
      if (typeof body.model === 'string') ctx.model = body.model;
      ctx.stream = body.stream === true;
    }
    this.opts.validatorFor?.(ctx.method, route.template)?.(ctx.body);
  }
}

/**
 * Hands a streamed body to the route (RouteOptions `streamBody`) in the exchange's first turn, as the exchange
 * requires; a declared Content-Length over `maxBytes` is refused before the route runs.
 */
function openBodyStream(ex: Exchange, ctx: RequestContext, maxBytes: number): void {
  ctx.bodyStream = ex.streamBody(maxBytes);
  if (Number(ex.headers['content-length'] ?? 0) > maxBytes) throw tooLarge(maxBytes);
}

/** JSON.parse with a 400 that says where the error is (position, line, column). */
export function parseJson(raw: Buffer): unknown {
  const text = raw.toString('utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    const reason = (err instanceof Error ? err.message : String(err)).replace(
      / in JSON at position \d+.*$/,
      '',
    );
    const details: Record<string, unknown> = {};
    let where = '';
    const position = jsonErrorPosition(text);
    if (position !== -1) {
      const before = text.slice(0, position);
      const line = before.split('\n').length;
      const column = position - before.lastIndexOf('\n');
      Object.assign(details, { position, line, column });
      where =
        position >= text.length
          ? ` at position ${position} (unexpected end of input)`
          : ` at position ${position} (line ${line}, column ${column})`;
    }
    throw new GatewayError('invalid_json', {
      message: `The request body is not valid JSON${where}: ${reason}`,
      details,
    });
  }
}
