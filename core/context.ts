import type { GatewayError } from './errors.js';
import type { OutgoingHeaders } from './http/exchange.js';
import type { UpstreamResponse } from './upstream/upstream-response.js';

/**
 * The one per-request object every plugin and route handler sees. Fields are typed; plugins do not add
 * ad-hoc properties. Third-party plugins keep private state with `createLocalKey<T>()` + `ctx.local()`.
 */

/** Who pays for this call; filled by the auth stage. */
export interface AuthInfo {
  /** Ledger account charged (a child key's parent account for child keys). */
  accountId: string;
  /** Stable id of the credential used (never the credential itself). */
  keyId: string;
  /** How the caller authenticated. */
  method: 'api_key' | 'bearer_token' | 'x_cashu';
  /** True for a child key drawing on its parent's balance. */
  isChild: boolean;
}

/** The amount held back before the upstream call; filled by the reserve stage, consumed by settle. */
export interface ReservationInfo {
  /** Idempotency id of the reservation (the request id). */
  id: string;
  amountMsats: number;
  /** The `max_tokens` the reservation was computed for (possibly lowered from the request's). */
  maxTokens?: number;
}

/** Token usage of the call; filled by the meter stage from upstream `usage` or an estimate. */
export interface UsageInfo {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** `upstream` when the provider reported usage, `estimated` when the gateway counted. */
  source: 'upstream' | 'estimated';
}

/** What the call cost; filled by the settle stage. */
export interface CostInfo {
  msats: number;
  usd?: number;
  breakdown?: { promptMsats: number; completionMsats: number; feesMsats: number };
  estimated: boolean;
}

/** A per-request eCash payment (X-Cashu / token as bearer); filled by the auth stage. */
export interface PaymentInfo {
  /** Value credited from the token, in msats. */
  creditedMsats: number;
  /** Mint the token was redeemed at. */
  mint: string;
}

/** An answer produced by a stage instead of the upstream (see `ctx.respond`). */
export interface LocalReply {
  status: number;
  headers: OutgoingHeaders;
  body: Buffer | string;
}

/** Milliseconds from `performance.now()`; set as the request progresses. */
export interface Timings {
  start: number;
  bodyRead?: number;
  upstreamStart?: number;
  upstreamHeaders?: number;
  firstChunk?: number;
  end?: number;
}

/** Typed key for a plugin's private per-request slot. */
export interface LocalKey<T> {
  readonly description: string;
  /** Phantom field carrying the type; never set. */
  readonly __type?: T;
}

export function createLocalKey<T>(description: string): LocalKey<T> {
  return Object.freeze({ description }) as LocalKey<T>;
}

export interface ContextInit {
  requestId: string;
  method: string;
  path: string;
  rawQuery: string;
  headers: Readonly<Record<string, string>>;
  clientIp: string;
  /** Headers every response carries (request id, CORS). */
  baseHeaders: OutgoingHeaders;
}

export class RequestContext {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly rawQuery: string;
  /** Request headers, lowercased names. Credentials in here MUST NOT be logged. */
  readonly headers: Readonly<Record<string, string>>;
  /** Peer address (a trusted-proxy stage may replace it with the forwarded client address). */
  clientIp: string;
  /** Path parameters of the matched route template. */
  params: Record<string, string> = {};
  /** The matched route template, e.g. `/v1/chat/completions` or `/{path}` for the catch-all. */
  routeTemplate = '';
  /** The raw request body (empty when none). */
  rawBody: Buffer = Buffer.alloc(0);
  /**
   * The parsed JSON body, when the request was JSON. Stages MAY change it (e.g. lower `max_tokens`) and
   * MUST then call `markBodyModified()`, so the relay re-serialises it instead of forwarding `rawBody`.
   */
  body: unknown = undefined;
  bodyModified = false;
  /** `body.model` when it is a string. */
  model: string | undefined = undefined;
  /** `body.stream === true`. */
  stream = false;

  /** The response head as it will be sent; response-head hooks MAY edit status and headers. */
  readonly response: { status: number; headers: OutgoingHeaders };
  /**
   * Set by a response-head hook to hold the whole body until the end hooks ran: the head (with the final
   * Content-Length and any headers the end hooks added) is written after them.
   */
  bufferResponse = false;
  /**
   * Set by a response-head hook on an SSE response to hold back a final `data: [DONE]` event, so that
   * bytes appended by end hooks (`appendToBody`) go before it. The runner recognises the event when it is
   * at the end of a chunk (how providers send it).
   */
  holdSseDone = false;
  /** True when the response is `text/event-stream`. */
  responseIsSse = false;

  clientAborted = false;
  /** How the request ended; set before the final hooks run. */
  outcome: 'ok' | 'error' | 'aborted' | undefined = undefined;
  /** The error being answered, when there is one. */
  error: GatewayError | undefined = undefined;
  readonly timings: Timings = { start: performance.now() };

  /** The upstream response; attached by the relay stage. */
  upstream: UpstreamResponse | undefined = undefined;
  /** An answer produced by a stage; see `respond`. */
  localReply: LocalReply | undefined = undefined;

  /** Who pays (auth stage). */
  auth: AuthInfo | undefined = undefined;
  /** Per-request eCash payment (auth stage, X-Cashu or token as bearer). */
  payment: PaymentInfo | undefined = undefined;
  /** The reservation (reserve stage). */
  reservation: ReservationInfo | undefined = undefined;
  /** Metered usage (meter stage). */
  usage: UsageInfo | undefined = undefined;
  /** Charged cost (settle stage). */
  cost: CostInfo | undefined = undefined;
  /** Change for a per-request payment, as an eCash token (change-token stage). Never logged. */
  changeToken: string | undefined = undefined;

  private controller: AbortController | undefined;
  private isCancelled = false;
  private cancelCbs: (() => void)[] | undefined;
  private appended: Uint8Array[] | undefined;
  private locals: Map<LocalKey<unknown>, unknown> | undefined;
  private parsedQuery: URLSearchParams | undefined;

  constructor(init: ContextInit) {
    this.requestId = init.requestId;
    this.method = init.method;
    this.path = init.path;
    this.rawQuery = init.rawQuery;
    this.headers = init.headers;
    this.clientIp = init.clientIp;
    this.response = { status: 200, headers: init.baseHeaders };
  }

  /**
   * Aborted when the client goes away or the request ends (see `cancel`). Created on first use: an
   * AbortController, its signal, listeners and the abort's DOMException cost measurable CPU per call, and
   * most calls never need one (the runner and the relay use `onCancel`).
   */
  get abort(): AbortController {
    let c = this.controller;
    if (c === undefined) {
      c = new AbortController();
      this.controller = c;
      if (this.isCancelled) c.abort();
      else c.signal.addEventListener('abort', () => this.cancel(), { once: true });
    }
    return c;
  }

  /** True once the request was cancelled (client gone, or the pipeline finished with it). */
  get cancelled(): boolean {
    return this.isCancelled;
  }

  /** Cancels the request once: aborts `abort` (when it was created) and runs the `onCancel` callbacks. */
  cancel(): void {
    if (this.isCancelled) return;
    this.isCancelled = true;
    this.controller?.abort();
    const cbs = this.cancelCbs;
    this.cancelCbs = undefined;
    if (cbs) for (const cb of cbs) cb();
  }

  /** Calls `cb` once when the request is cancelled; at once when it already was. */
  onCancel(cb: () => void): void {
    if (this.isCancelled) {
      cb();
      return;
    }
    this.cancelCbs ??= [];
    this.cancelCbs.push(cb);
  }

  /** Removes a callback added with `onCancel`. */
  offCancel(cb: () => void): void {
    const cbs = this.cancelCbs;
    if (cbs === undefined) return;
    const i = cbs.indexOf(cb);
    if (i !== -1) cbs.splice(i, 1);
  }

  /** The query string, parsed on first use. */
  get query(): URLSearchParams {
    this.parsedQuery ??= new URLSearchParams(this.rawQuery);
    return this.parsedQuery;
  }

  markBodyModified(): void {
    this.bodyModified = true;
  }

  /**
   * Answers the request from a stage (Envoy's `sendLocalReply`): JSON for objects, as-is for strings and
   * Buffers. Returns `'stop'` so `return ctx.respond(...)` ends `onRequest`. Local replies skip the response
   * hooks; final hooks still run.
   */
  respond(status: number, body: unknown, headers: OutgoingHeaders = {}): 'stop' {
    const isRaw = typeof body === 'string' || Buffer.isBuffer(body);
    const h: OutgoingHeaders = { ...this.response.headers, ...headers };
    if (!isRaw && h['content-type'] === undefined) h['content-type'] = 'application/json';
    this.localReply = { status, headers: h, body: isRaw ? (body as string | Buffer) : JSON.stringify(body) };
    return 'stop';
  }

  /** Bytes to send after the body (before a held-back `data: [DONE]`); for end hooks. */
  appendToBody(bytes: Uint8Array | string): void {
    this.appended ??= [];
    this.appended.push(typeof bytes === 'string' ? Buffer.from(bytes) : bytes);
  }

  /** Bytes appended by end hooks (runner use). */
  takeAppended(): Uint8Array[] | undefined {
    const a = this.appended;
    this.appended = undefined;
    return a;
  }

  local<T>(key: LocalKey<T>): T | undefined {
    return this.locals?.get(key) as T | undefined;
  }

  setLocal<T>(key: LocalKey<T>, value: T): void {
    this.locals ??= new Map();
    this.locals.set(key, value);
  }
}
