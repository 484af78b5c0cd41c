import type { LightningAddresses } from './account/lightning-address.js';
import type { LightningDeposits, RefundSweep } from './account/types.js';
import type { AuditTrail } from './audit/types.js';
import type { BatchJobs } from './batches/types.js';
import type { Config } from './config.js';
import type { PaymentDoors } from './doors/types.js';
import type { WebhookEvents } from './events/types.js';
import type { Ledger } from './ledger/types.js';
import type { WindowLimiter } from './limits/window-limiter.js';
import type { Logger } from './log.js';
import type { NodeNetwork } from './network/node-network.js';
import type { ObjectOwners } from './objects/types.js';
import type { BtcPriceSource, PricingService } from './pricing/types.js';
import type { PaidNodes, Providers } from './providers/types.js';
import type { StoreConnection } from './store/connection.js';
import type { StoreSignals } from './store/signals.js';
import type { ModelCatalog } from './upstream/types.js';
import type { UpstreamClient } from './upstream/upstream-client.js';
import type { WalletService } from './wallet/types.js';

/**
 * The service bag: every service the composition root builds, once and complete, in `buildServices`
 * (core/services.ts) before any plugin or route module sees it. Route modules get the whole bag; a plugin is
 * handed only the services it declared (`PluginNeeds`, core/plugin.ts; plugins/index.ts grants them). The money
 * fields are optional only for setups that build a pipeline by hand without a store (relay-only tests); the
 * gateway always has them.
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
  pricing?: PricingService;
  /** Lightning deposits the server finishes (core/account/lightning-deposits.ts); with a wallet and a store. */
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

/** A service's name: what a plugin lists in its needs. */
export type ServiceName = keyof Services;

/** Each service by name, with the type a plugin that declared it is handed (never `undefined` once granted). */
export type ServiceTypes = { [K in ServiceName]-?: NonNullable<Services[K]> };
