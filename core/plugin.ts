import type { LightningAddresses } from './account/lightning-address.js';
import type { RefundSweep } from './account/refund-sweep.js';
import type { AuditTrail } from './audit/types.js';
import type { BatchJobs } from './batches/types.js';
import type { WindowLimiter } from './limits/window-limiter.js';
import type { ObjectOwners } from './objects/types.js';

/**
 * The plugin contract: the public API for plugin authors. Modelled on Envoy's HTTP filters (request hooks
 * that return a status, response hooks by direction, a final hook that always runs) and undici's dispatch
 * handlers (head, data, end, error).
 *
 * A plugin file in `plugins/` exports a factory `(options, services) => Plugin` that validates its options
 * ONCE (throwing `ConfigError` on bad options) and returns an object with only the hooks it needs; a missing
 * hook is a pass-through. The pipeline is an ordered list of plugins from configuration (`PIPELINE`).
 *
 * Order of events for one request (see core/pipeline.ts):
 *   onRequest (each plugin, in order) → onDispatch (the relay stage attaches `ctx.upstream`) →
 *   onResponseHead (in order) → onResponseChunk (in order, per chunk) → onResponseEnd (in order) →
 *   onFinally (every plugin, exactly once).
 * On an error anywhere: onError (every plugin that has it, in order), then the error envelope is sent,
 * then onFinally. On a client disconnect: no more hooks except onFinally (`ctx.outcome === 'aborted'`).
 */

import type { LightningDeposits } from './account/lightning-deposits.js';
import type { Config } from './config.js';
import type { RequestContext } from './context.js';
import type { PaymentDoors } from './doors/payment-doors.js';
import type { GatewayError } from './errors.js';
import type { WebhookEvents } from './events/types.js';
import type { Ledger } from './ledger/types.js';
import type { Logger } from './log.js';
import type { NodeNetwork } from './network/node-network.js';
import type { PricingHolder } from './pricing/holder.js';
import type { BtcPriceSource } from './pricing/types.js';
import type { PaidNodes } from './providers/paid-nodes.js';
import type { Providers } from './providers/providers.js';
import type { StoreConnection } from './store/connection.js';
import type { StoreSignals } from './store/signals.js';
import type { ModelCatalog } from './upstream/model-catalog.js';
import type { UpstreamClient } from './upstream/upstream-client.js';
import type { WalletService } from './wallet/types.js';

// The rest of the plugin kit's types (package export `prepaid-model-gateway/plugin`; see docs/plugins.md).
export type { PriceAdjustment, ProviderPreference, RequestContext } from './context.js';
export type { Provider } from './providers/provider.js';
export type { Providers } from './providers/providers.js';
export type { RoutingInfo, RoutingPolicy } from './providers/routing-policy.js';

/** What `onRequest` returns: go on with the next plugin, or stop (only after having answered). */
export const HookStatus = { Continue: 'continue', Stop: 'stop' } as const;
export type HookStatus = (typeof HookStatus)[keyof typeof HookStatus];

/** The response head as the response-head hooks see it (the same object as `ctx.response`). */
export interface ResponseHead {
  status: number;
  headers: Record<string, string | string[]>;
}

export interface Plugin {
  /** Unique within a pipeline; used in logs and traces. */
  readonly name: string;

  /**
   * Names of the stages that MUST be listed before this one (it reads what they publish). The pipeline refuses
   * to start when one is missing or listed after it, so a wrong `PIPELINE` fails at start, not per request.
   */
  readonly after?: readonly string[];

  /**
   * Runs in pipeline order before the upstream call. MUST return `Continue` (or nothing) to go on, or
   * `Stop` only after having answered with `ctx.respond(...)`; to fail, throw a `GatewayError`. MAY
   * return a promise (the runner only awaits when one is returned). MAY edit `ctx.body` and then MUST call
   * `ctx.markBodyModified()`. MUST NOT write to the client directly.
   */
  // `void` so that a hook with a bare `return;` (or none) type-checks: nothing returned means Continue.
  // biome-ignore lint/suspicious/noConfusingVoidType: an async hook with a bare `return;` is a Promise<void>.
  onRequest?(ctx: RequestContext): HookStatus | undefined | void | Promise<HookStatus | undefined | void>;

  /**
   * The upstream call: runs once, after EVERY plugin's `onRequest` (also those listed after this plugin, e.g. a
   * response-side stage that shapes the request), unless a request hook answered. MUST set `ctx.upstream` or
   * throw a `GatewayError`. At most one plugin of a pipeline has it (the relay); the pipeline refuses a second.
   */
  onDispatch?(ctx: RequestContext): void | Promise<void>;

  /**
   * Runs in order once the upstream response head is known. MAY edit `head.status`/`head.headers` and set
   * `ctx.bufferResponse` (hold the body until the end hooks ran) or `ctx.holdSseDone`.
   */
  onResponseHead?(ctx: RequestContext, head: ResponseHead): void | Promise<void>;

  /**
   * The hot path: runs for every body chunk, in order. MUST be synchronous (an `async` function is refused when
   * the pipeline is built) and SHOULD NOT allocate. Return
   * `undefined` to pass the chunk on unchanged, a replacement to pass that on instead, or `null` to drop it.
   * MUST NOT keep a reference to the chunk past the call unless it copies it (the buffer may be reused).
   */
  onResponseChunk?(ctx: RequestContext, chunk: Uint8Array): Uint8Array | null | undefined;

  /**
   * Runs in order after the last chunk, before the response ends. MAY append bytes with
   * `ctx.appendToBody(...)`; in buffered mode MAY also edit `ctx.response.headers`.
   */
  onResponseEnd?(ctx: RequestContext): void | Promise<void>;

  /**
   * Runs in order when the request fails (a thrown error anywhere, an upstream failure). MAY add headers to
   * `ctx.response.headers` (they are sent with the error envelope). MUST NOT throw (a throw is logged).
   */
  onError?(ctx: RequestContext, err: GatewayError): void | Promise<void>;

  /**
   * Runs exactly once per request on every plugin that has it, whatever happened (success, error, client
   * abort, upstream failure), after the response ended. The place to release what `onRequest` took (e.g.
   * an unsettled reservation). MUST NOT throw (a throw is logged).
   */
  onFinally?(ctx: RequestContext): void | Promise<void>;

  /**
   * Runs once when the gateway shuts down, after every request in flight ended (plugins in reverse pipeline
   * order). The place to finish background work the plugin owns (e.g. settlement retries) within `graceMs`.
   * A close that has not finished SHUTDOWN_STEP_MS after `graceMs` is left behind (core/shutdown.ts). A throw
   * (or rejection) is logged and means work was left unfinished: the process then exits 1.
   */
  close?(graceMs: number): void | Promise<void>;
}

/**
 * Services plugins and route modules may use, built once and complete by `buildServices` (core/services.ts)
 * before any plugin or route module sees them. The money fields are optional only for setups that build a
 * pipeline by hand without a store (relay-only tests); the gateway always has them.
 */
export interface Services {
  config: Config;
  log: Logger;
  /** The primary provider's client (the first of `providers`): model lists, one-provider tools. */
  upstream: UpstreamClient;
  /** Every provider, its breaker and routing (core/providers/providers.ts); the relay uses it. */
  providers: Providers;
  catalog: ModelCatalog;
  /** The money store (paid-call stages, wallet and balance routes). Absent only in relay-only test setups. */
  ledger?: Ledger;
  /** The operator's Cashu wallet (token redemption, change, withdrawals). */
  wallet?: WalletService;
  /** Prices calls (docs/pricing.md); a holder whose terms the admin settings swap at run time. */
  pricing?: PricingHolder;
  /** Lightning deposits the server finishes (core/wallet/lightning-deposits.ts); with a wallet and a store. */
  lightning?: LightningDeposits;
  /** The payment doors an unpaid call is offered: Cashu, L402, MPP (core/doors/); with a wallet and a store. */
  doors?: PaymentDoors;
  /** BTC/USD price source behind model-based pricing and the `usd` display fields. */
  btc?: BtcPriceSource;
  /** The store connection the ledger and wallet share (admin settings are persisted in it). */
  store?: StoreConnection;
  /** Cross-process signals through the store (core/store/signals.ts): settings changes, lease recalls. */
  signals?: StoreSignals;
  /** The audit log (core/audit/audit-log.ts), written by the transport's end hook. */
  audit?: AuditTrail;
  /** Fixed-window counters for per-IP and admin-login limits (core/limits/window-limiter.ts). */
  limiter?: WindowLimiter;
  /** Webhooks and alerts (core/events/events.ts): store, ledger hook, outbox worker. With a store. */
  events?: WebhookEvents;
  /** Which key created each provider object (responses, files, batches): core/objects/. With a store. */
  objects?: ObjectOwners;
  /** The batch settlement jobs (core/batches/), in the money store. With a store. */
  batchJobs?: BatchJobs;
  /** Settles a batch job now when its batch ended (the GET that first sees it ended). With a store and a ledger. */
  batchWatcher?: { settleIfEnded(jobId: string): Promise<void> };
  /** Lightning addresses as refund destinations, resolved under the SSRF rules (core/account/lightning-address.ts). */
  lightningAddresses?: LightningAddresses;
  /** The expired-key sweep (core/account/refund-sweep.ts); with a store, a ledger and a wallet. */
  refundSweep?: RefundSweep;
  /** Process lifecycle: `draining` turns true when a shutdown began (GET /readyz then answers 503). */
  lifecycle?: {
    draining: boolean;
    /** Set once listening when HTTP_ENGINE=uws could not load and node:http serves instead (GET /readyz says so). */
    engineFallback?: { requested: 'uws'; serving: 'node'; reason: string };
  };
  /** The node's Nostr identity and listing (core/network/node-network.ts). */
  network?: NodeNetwork;
  /** The other nodes it buys from, paid from the operator's wallet (`"payment": "cashu"` / `"cashu-balance"`):
   *  their prices, per-call tokens and prepaid keys (core/providers/paid-nodes.ts). Only when the providers file
   *  names such a node. */
  nodes?: PaidNodes;
}

/** A plugin module's factory: validates `options` once, returns the plugin. */
export type PluginFactory = (options: Record<string, unknown> | undefined, services: Services) => Plugin;
