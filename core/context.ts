import type { Readable } from 'node:stream';
import type { GatewayError } from './errors.js';
import type { OutgoingHeaders } from './http/exchange.js';
import type { Usage } from './metering/types.js';
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
  method: 'api_key' | 'bearer_token' | 'x_cashu' | 'l402' | 'mpp';
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

/** An answer produced by a stage instead of the upstream (see `ctx.respond`). */
export interface LocalReply {
  status: number;
  headers: OutgoingHeaders;
  body: Buffer | string;
}

/** Milliseconds from `performance.now()`; set as the request progresses. */
export interface Timings {
  start: number;
  upstreamStart?: number;
  upstreamHeaders?: number;
  firstChunk?: number;
  /** The upstream response's last byte arrived (the pipeline's relay loop ended). */
  upstreamEnd?: number;
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

/** What a settled call was charged; filled by the settle stage, published on `gateway:request:end`. */
export interface ChargeInfo {
  /** Msats actually charged (after the ledger capped an overrun). */
  msats: number;
  usd?: number;
  model: string;
  /** Every input token (cache reads and writes, audio, image included) and every output token (reasoning
   *  and audio included), as the provider's totals count them. */
  promptTokens: number;
  completionTokens: number;
  /** Token-metered calls: the normalised usage record, each dimension apart (core/metering/usage.ts). */
  usage?: Usage;
  /** Unit-priced calls: images returned, milliseconds of audio, characters of speech input. */
  units?: number;
  /** True when the gateway counted the tokens (the provider reported no usage). */
  estimated: boolean;
  /** The account's balance after the charge, msats, as the ledger's settle step answered it (traces, the signed receipt's `balance_msats`). */
  balanceAfterMsat?: number;
}

/*
 * Per-request state has ONE mechanism: typed local slots (`ctx.local(KEY)` / `ctx.setLocal(KEY, v)`). The
 * keys below are the shared contract between the paid stages and anything that reads their results
 * (routes, tracing subscribers, third-party plugins); a stage's private state uses a key of its own.
 */
/** Who pays (auth stage; completed by the reserve stage once the ledger identified the account). */
export const AUTH = createLocalKey<AuthInfo>('auth');
/** The provider that served the call (set by the relay stage; the settle stage names it in `x-node-cost`). */
export const SERVED_BY = createLocalKey<string>('served-by');
/**
 * What the call cost the operator at the node that served it, msats — a provider paid from the operator's wallet
 * (`"payment": "cashu"`: the token less the change returned; `"cashu-balance"`: the cost the node stated). Set by
 * the relay stage when the answer ends; the audit record's `upstream_msats` (admin readers only).
 */
export const UPSTREAM_COST = createLocalKey<number>('upstream-cost');

/**
 * A pricing policy's change to this call's price (plugin kit, `ctx.adjustPrice`): the price the node's pricing
 * computes becomes `ceil(price × multiplierPpm / 1,000,000) + addMsat`, never below 0 — applied to the
 * reservation (so the call is admitted against the adjusted bound) and to the charge. Set it in `onRequest` of
 * a stage listed before `reserve`.
 */
export interface PriceAdjustment {
  /** Parts per million of the price (1,000,000 = unchanged; 0 = free). Default 1,000,000. */
  multiplierPpm?: number;
  /** msats added after the multiplier (may be negative). Default 0. */
  addMsat?: number;
}
export const PRICE_ADJUSTMENT = createLocalKey<PriceAdjustment>('price-adjustment');

/** The adjusted price (see PriceAdjustment); the identity without one. */
export function adjustedPrice(msat: number, a: PriceAdjustment | undefined): number {
  if (a === undefined) return msat;
  const ppm = a.multiplierPpm ?? 1_000_000;
  return Math.max(0, Math.ceil((msat * ppm) / 1_000_000) + (a.addMsat ?? 0));
}

/** A routing policy's choice for this call (plugin kit, `ctx.preferProviders`). */
export interface ProviderPreference {
  /** Provider names tried first, in this order (names that do not serve the model are skipped). */
  order: string[];
  /** Only these providers (default: the others follow in the node's routing order). */
  only?: boolean;
}
export const PROVIDER_PREFERENCE = createLocalKey<ProviderPreference>('provider-preference');
/** The reservation (reserve stage), consumed by settle. */
export const RESERVATION = createLocalKey<ReservationInfo>('reservation');
/** What the call was charged (settle stage). */
export const CHARGE = createLocalKey<ChargeInfo>('charge');

/**
 * The runner's (and transport's) write access to the fields it owns. Not part of the plugin contract:
 * plugins read `outcome`, `error`, `localReply`, `clientAborted`, `responseIsSse`; only the runner sets them.
 */
export interface RunnerAccess {
  setOutcome(ctx: RequestContext, outcome: 'ok' | 'error' | 'aborted', error?: GatewayError): void;
  markClientAborted(ctx: RequestContext): void;
  setResponseIsSse(ctx: RequestContext, sse: boolean): void;
  markHeadWritten(ctx: RequestContext): void;
}
// Assigned by RequestContext's static block (the only code that can reach its private fields).
export let runnerAccess: RunnerAccess;

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
  /** The raw request body (empty when none, and on a route that streams its body). */
  rawBody: Buffer = Buffer.alloc(0);
  /**
   * The request body as it arrives, on a route registered with RouteOptions `streamBody` (core/http/router.ts);
   * undefined elsewhere. Fails with 413 `payload_too_large` past the route's limit, or when the client leaves.
   */
  bodyStream: Readable | undefined = undefined;
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
   * Set by a response-head hook to ask that the whole body be held until the end hooks ran: the head (with
   * the final Content-Length and any headers the end hooks added) is written after them. A request only: the
   * runner may hold a body no stage asked for (small or gzip-worthy); `headWritten` tells what it did.
   */
  bufferResponse = false;
  /**
   * Set by a response-head hook on an SSE response to hold back a final `data: [DONE]` event, so that
   * bytes appended by end hooks (`appendToBody`) go before it. The runner recognises the event when it is
   * at the end of a chunk (how providers send it).
   */
  holdSseDone = false;
  /**
   * Set by a request hook of a stage that charges the answer: when the client leaves after the request reached
   * the provider (its bytes were sent), the upstream call is NOT cancelled; the runner reads the answer on, through
   * the chunk hooks, for at most this many ms (nothing more is written to the client), so the call is charged from
   * what the provider reports. The end hooks do not run then; the final hooks see `timings.upstreamEnd` set when
   * the whole answer was read. Undefined (the default): the client leaving cancels the upstream call at once.
   */
  drainAfterAbortMs: number | undefined = undefined;
  /** The upstream response; attached by the dispatching stage (the relay) in `onDispatch`. */
  upstream: UpstreamResponse | undefined = undefined;
  readonly timings: Timings = { start: performance.now() };

  // Runner-owned (read-only to plugins; see RunnerAccess).
  private _responseIsSse = false;
  private _headWritten = false;
  private _clientAborted = false;
  private _outcome: 'ok' | 'error' | 'aborted' | undefined = undefined;
  private _error: GatewayError | undefined = undefined;
  private _localReply: LocalReply | undefined = undefined;

  static {
    runnerAccess = {
      setOutcome(ctx, outcome, error) {
        ctx._outcome = outcome;
        if (error !== undefined) ctx._error = error;
      },
      markClientAborted(ctx) {
        ctx._clientAborted = true;
      },
      setResponseIsSse(ctx, sse) {
        ctx._responseIsSse = sse;
      },
      markHeadWritten(ctx) {
        ctx._headWritten = true;
      },
    };
  }

  /** True when the response is `text/event-stream`. */
  get responseIsSse(): boolean {
    return this._responseIsSse;
  }
  /**
   * True once the head of a relayed answer went out (the body streams): from then on `ctx.response.headers`
   * reach no one. False while the runner holds the whole body (a stage set `bufferResponse`, or the body is
   * small): the head is written after the end hooks, which may still edit it.
   */
  get headWritten(): boolean {
    return this._headWritten;
  }
  /** True once the client went away. */
  get clientAborted(): boolean {
    return this._clientAborted;
  }
  /** How the request ended; set before the final hooks run. */
  get outcome(): 'ok' | 'error' | 'aborted' | undefined {
    return this._outcome;
  }
  /** The error being answered, when there is one. */
  get error(): GatewayError | undefined {
    return this._error;
  }
  /** An answer produced by a stage; see `respond`. */
  get localReply(): LocalReply | undefined {
    return this._localReply;
  }

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
    this._localReply = { status, headers: h, body: isRaw ? (body as string | Buffer) : JSON.stringify(body) };
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

  /**
   * Plugin kit, pricing policies: changes this call's price (see PriceAdjustment). Call it in `onRequest` of a
   * stage before `reserve`; a later call replaces an earlier one.
   */
  adjustPrice(a: PriceAdjustment): void {
    const ppm = a.multiplierPpm ?? 1_000_000;
    const add = a.addMsat ?? 0;
    if (!Number.isSafeInteger(ppm) || ppm < 0 || !Number.isSafeInteger(add)) {
      throw new TypeError('adjustPrice: multiplierPpm must be an integer ≥ 0 and addMsat an integer');
    }
    this.setLocal(PRICE_ADJUSTMENT, { multiplierPpm: ppm, addMsat: add });
  }

  /** Plugin kit, routing policies: the providers to try first for this call (see ProviderPreference). */
  preferProviders(order: string[], opts: { only?: boolean } = {}): void {
    this.setLocal(PROVIDER_PREFERENCE, { order: [...order], ...(opts.only ? { only: true } : {}) });
  }

  /** Sets a slot; `undefined` clears it. */
  setLocal<T>(key: LocalKey<T>, value: T | undefined): void {
    if (value === undefined) {
      this.locals?.delete(key);
      return;
    }
    this.locals ??= new Map();
    this.locals.set(key, value);
  }
}
