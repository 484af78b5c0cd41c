import { type Dispatcher, type FormData, Pool } from 'undici';
import { GatewayError } from '../errors.js';
import { type CancelSource, ClientGoneError, UpstreamCall } from './upstream-call.js';
import type { UpstreamResponse } from './upstream-response.js';

export { type CancelSource, ClientGoneError };

/**
 * The pooled, keep-alive HTTP client to the configured provider (`UPSTREAM_BASE_URL`, which includes the
 * provider's version path the way an OpenAI SDK `baseURL` does). Requests go through undici's dispatch
 * handler API so body chunks reach the pipeline as they arrive: no stream buffering, no re-serialising.
 *
 * Error mapping (one place): connect/reset/socket failures → 502 `upstream_error`; no head within
 * `UPSTREAM_TIMEOUT_MS`, or the body idle that long → 504 `upstream_timeout`.
 */

export interface UpstreamClientOptions {
  baseUrl: string;
  apiKey?: string | undefined;
  connections: number;
  timeoutMs: number;
  /** Extra headers sent on every request to this provider (the providers file's `headers`). */
  headers?: Record<string, string>;
  /** The API the provider speaks: `openai` (default; the key as `Authorization: Bearer`) or `anthropic` (the
   *  key as `x-api-key`, with `anthropic-version` when the caller sent none). */
  api?: 'openai' | 'anthropic' | undefined;
}

/** The Messages API version sent to an `anthropic` provider when the caller names none. */
export const ANTHROPIC_VERSION = '2023-06-01';

export interface UpstreamRequest {
  method: string;
  /** The gateway path (`/v1/chat/completions`); mapped onto the base URL by `targetPath`. */
  path: string;
  rawQuery?: string;
  /** The caller's request headers (lowercased); filtered by `forwardHeaders`. */
  headers: Readonly<Record<string, string>>;
  /** A FormData (an upload) is streamed with its length and its boundary's Content-Type computed by undici. */
  body?: Buffer | string | FormData | undefined;
  /** Cancelling it cancels the upstream call at any point (the request context implements it). */
  cancel?: CancelSource;
  /**
   * Once the request's bytes were all sent to the provider, a cancel no longer cancels the call: the provider
   * has it and bills it, so the caller reads the answer on (abandoned calls, core/context.ts
   * `drainAfterAbortMs`). Before that, a cancel cancels it as usual.
   */
  keepOnceSent?: boolean;
  /** Headers of this one request, set last (a `payment: cashu` node's `x-cashu` token, node-payment.ts). */
  extraHeaders?: Record<string, string>;
}

/** Request headers never forwarded: hop-by-hop, the caller's credentials, and what undici sets itself. */
const DROP_REQUEST_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'content-length',
  'accept-encoding',
  'authorization',
  'x-cashu',
  'cookie',
  'x-api-key',
  'api-key',
  'origin',
  'referer',
]);

export class UpstreamClient {
  readonly baseUrl: string;
  readonly origin: string;
  /** Path prefix of the base URL without trailing slash, e.g. `/v1` or `/api/v1`. */
  readonly basePath: string;
  readonly timeoutMs: number;
  private readonly pool: Pool;
  private readonly authHeader: string | undefined;
  /** `x-api-key` for an `anthropic` provider (then there is no Authorization header). */
  private readonly apiKeyHeader: string | undefined;
  private readonly extraHeaders: Record<string, string> | undefined;
  private readonly anthropic: boolean;
  private readonly mapError = (err: unknown): GatewayError => mapUpstreamError(err, this.timeoutMs);

  constructor(opts: UpstreamClientOptions) {
    const url = new URL(opts.baseUrl);
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs;
    const anthropic = opts.api === 'anthropic';
    this.authHeader = opts.apiKey && !anthropic ? `Bearer ${opts.apiKey}` : undefined;
    this.apiKeyHeader = opts.apiKey && anthropic ? opts.apiKey : undefined;
    this.anthropic = anthropic;
    this.extraHeaders = opts.headers && Object.keys(opts.headers).length > 0 ? opts.headers : undefined;
    this.pool = new Pool(this.origin, {
      connections: opts.connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      connect: { timeout: Math.min(opts.timeoutMs, 10_000) },
    });
  }

  /** `/v1/chat/completions` → `${basePath}/chat/completions`; paths outside `/v1` are appended as they are. */
  targetPath(gatewayPath: string, rawQuery = ''): string {
    const rest =
      gatewayPath === '/v1' ? '' : gatewayPath.startsWith('/v1/') ? gatewayPath.slice(3) : gatewayPath;
    const q = forwardQuery(rawQuery);
    return `${this.basePath}${rest}${q === '' ? '' : `?${q}`}`;
  }

  /** The caller's headers minus hop-by-hop and credentials, plus the operator's upstream key. */
  forwardHeaders(clientHeaders: Readonly<Record<string, string>>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name in clientHeaders) {
      if (!DROP_REQUEST_HEADERS.has(name) && !name.startsWith('x-forwarded-'))
        out[name] = clientHeaders[name]!;
    }
    // Chunk hooks parse the body (SSE, usage): ask for it uncompressed.
    out['accept-encoding'] = 'identity';
    if (this.extraHeaders !== undefined) Object.assign(out, this.extraHeaders);
    if (this.authHeader !== undefined) out.authorization = this.authHeader;
    if (this.anthropic) {
      if (this.apiKeyHeader !== undefined) out['x-api-key'] = this.apiKeyHeader;
      out['anthropic-version'] ??= ANTHROPIC_VERSION;
    }
    return out;
  }

  /** Sends a request; resolves once the response head arrived, with the body paused until `pipe`. */
  send(req: UpstreamRequest): Promise<UpstreamResponse> {
    const path = this.targetPath(req.path, req.rawQuery);
    const headers = this.forwardHeaders(req.headers);
    if (req.extraHeaders !== undefined) Object.assign(headers, req.extraHeaders);
    return new Promise<UpstreamResponse>((resolve, reject) => {
      const call = new UpstreamCall(resolve, reject, this.mapError, req.cancel, req.keepOnceSent === true);
      try {
        this.pool.dispatch(
          { path, method: req.method as Dispatcher.HttpMethod, headers, body: req.body ?? null },
          call,
        );
      } catch (err) {
        call.onError(err as Error);
      }
    });
  }

  /** GET a JSON document from the provider (model list). Throws GatewayError on failure. */
  async getJson(gatewayPath: string, timeoutMs = 10_000): Promise<unknown> {
    const headers: Record<string, string> = { ...this.extraHeaders, accept: 'application/json' };
    if (this.authHeader !== undefined) headers.authorization = this.authHeader;
    if (this.anthropic) {
      if (this.apiKeyHeader !== undefined) headers['x-api-key'] = this.apiKeyHeader;
      headers['anthropic-version'] ??= ANTHROPIC_VERSION;
    }
    let res: Dispatcher.ResponseData;
    try {
      res = await this.pool.request({
        path: this.targetPath(gatewayPath),
        method: 'GET',
        headers,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
    } catch (err) {
      throw mapUpstreamError(err, timeoutMs);
    }
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new GatewayError('upstream_error', {
        message: `The upstream provider answered ${res.statusCode} to GET ${gatewayPath}`,
      });
    }
    try {
      return await res.body.json();
    } catch (err) {
      throw new GatewayError('upstream_error', {
        message: 'The upstream provider sent invalid JSON',
        cause: err,
      });
    }
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

/** `api_key` in the query is a gateway credential (docs/endpoints.md, "Authentication"): never forwarded. */
function forwardQuery(rawQuery: string): string {
  if (rawQuery === '' || !rawQuery.includes('api_key')) return rawQuery;
  const params = new URLSearchParams(rawQuery);
  params.delete('api_key');
  return params.toString();
}

export function mapUpstreamError(err: unknown, timeoutMs: number): GatewayError {
  if (err instanceof GatewayError) return err;
  const code = (err as { code?: string } | null)?.code;
  const name = (err as { name?: string } | null)?.name;
  if (err instanceof ClientGoneError) {
    return new GatewayError('upstream_error', { message: 'The upstream call was cancelled', cause: err });
  }
  switch (code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new GatewayError('upstream_timeout', {
        message: `The upstream provider did not answer within ${timeoutMs} ms`,
        cause: err,
      });
    case 'UND_ERR_BODY_TIMEOUT':
      return new GatewayError('upstream_timeout', {
        message: `The upstream provider stopped sending for ${timeoutMs} ms`,
        cause: err,
      });
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new GatewayError('upstream_timeout', {
        message: 'Connecting to the upstream provider timed out',
        cause: err,
      });
    case 'ECONNREFUSED':
      return new GatewayError('upstream_error', {
        message: 'Could not connect to the upstream provider (connection refused)',
        cause: err,
      });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new GatewayError('upstream_error', {
        message: 'Could not resolve the upstream provider host',
        cause: err,
      });
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return new GatewayError('upstream_error', {
        message: 'The upstream provider closed the connection unexpectedly',
        cause: err,
      });
    default:
      return new GatewayError('upstream_error', {
        message: `The upstream request failed (${code ?? name ?? 'unknown error'})`,
        cause: err,
      });
  }
}
