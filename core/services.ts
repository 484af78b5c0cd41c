import { hostname } from 'node:os';
import { creditRecovered } from './account/credit-token.js';
import { LightningDeposits } from './account/lightning-deposits.js';
import { settlePayoutRecord } from './account/pay-out.js';
import { startRefundServices } from './account/refund-sweep.js';
import { AuditLog } from './audit/audit-log.js';
import type { AuditBackend } from './audit/records.js';
import { startBatchServices } from './batches/batch-services.js';
import { isClusterWorker } from './cluster.js';
import type { Config } from './config.js';
import { PaymentDoors } from './doors/payment-doors.js';
import { Events } from './events/events.js';
import { RedisWebhookStore } from './events/redis-webhook-store.js';
import { SqliteWebhookStore } from './events/sqlite-webhook-store.js';
import type { WebhookEvents, WebhookStore } from './events/types.js';
import { createLedger } from './ledger/index.js';
import { LeasingLedger } from './ledger/leasing.js';
import { orphanReport, PROCESS_ID } from './ledger/owner.js';
import type { Ledger, LedgerOptions } from './ledger/types.js';
import { WindowLimiter } from './limits/window-limiter.js';
import type { Logger } from './log.js';
import { setOpenPayoutSource } from './metrics.js';
import { NodeNetwork } from './network/node-network.js';
import { createBtcPriceSource } from './pricing/btc-price.js';
import { pricingMode, tickersNeeded } from './pricing/formula.js';
import { PricingHolder } from './pricing/holder.js';
import { createPricing } from './pricing/pricing.js';
import { PaidNodes } from './providers/paid-nodes.js';
import { Providers, providerName, readProvidersFile } from './providers/providers.js';
import type { Services } from './service-types.js';
import { applyPatch, loadPersistedSettings, reloadSettings } from './settings.js';
import { SHUTDOWN_SQLITE_BUSY_MS, SHUTDOWN_STEP_MS, within } from './shutdown.js';
import { openStore, type StoreConnection } from './store/connection.js';
import { StoreSignals } from './store/signals.js';
import { ModelCatalog, PartialModelList } from './upstream/model-catalog.js';
import type { UpstreamClient } from './upstream/upstream-client.js';
import type { CreateWalletOptions, WalletService } from './wallet/types.js';
import { createWallet } from './wallet/wallet.js';

/**
 * The money services of the composition root: the store connection (Redis when configured, else SQLite in
 * DATA_DIR), the ledger on it, the operator's wallet (only when CASHU_MINTS is set; recovered before the
 * gateway listens), the BTC price source and the pricing service, and a periodic sweep of expired reservations.
 *
 * Everything a caller passes in `overrides` is used as is and NOT closed here (the caller owns it);
 * everything built here is closed by `close()`, in reverse order of creation.
 */

export type LedgerFactory = (conn: StoreConnection, opts: LedgerOptions) => Ledger | Promise<Ledger>;
export type WalletFactory = (opts: CreateWalletOptions) => Promise<WalletService>;

export interface MoneyServiceOptions {
  /** A ready store connection (tests); default: opened from config. Not closed when passed in. */
  store?: StoreConnection;
  /** Ledger factory; default `createLedger` of core/ledger. */
  createLedger?: LedgerFactory;
  /** Wallet factory; default `createWallet` of core/wallet. */
  createWallet?: WalletFactory;
  /** Period of `ledger.sweepExpired()`; default min(60 s, reservation expiry / 4). 0 disables it. */
  sweepEveryMs?: number;
  /** Period of the wallet's recovery pass after start-up; default 60 s. 0 disables it. */
  recoverEveryMs?: number;
  /** Audit backend factory (the audit log lives in the same store); default `openAuditBackend`. */
  createAuditBackend?: (store: StoreConnection | undefined) => AuditBackend;
  /** Wraps the webhook store built here (tests pass a fake whose steps fail or hang); default: as built. */
  wrapWebhookStore?: (store: WebhookStore) => WebhookStore;
}

export interface MoneyServices {
  ledger: Ledger;
  wallet: WalletService | undefined;
  pricing: NonNullable<Services['pricing']>;
  btc: NonNullable<Services['btc']>;
  store: StoreConnection | undefined;
  lightning: Services['lightning'];
  /** The payment doors an unpaid call is offered (core/doors/); with a wallet, a store and Lightning deposits. */
  doors: Services['doors'];
  events: WebhookEvents | undefined;
  /** Cross-process signals (settings changes, lease recalls) through the store; with a store. */
  signals: StoreSignals | undefined;
  /** The shutdown began: the store opened here waits for locks at most SHUTDOWN_SQLITE_BUSY_MS from now on. */
  draining(): void;
  /** Each closer bounded by SHUTDOWN_STEP_MS; true when every one finished in time. */
  close(): Promise<boolean>;
}

export async function openMoneyServices(
  config: Config,
  log: Logger,
  base: Pick<Services, 'catalog'> & Partial<Services>,
  opts: MoneyServiceOptions = {},
): Promise<MoneyServices> {
  const o: Opening = { config, log, opts, closers: [] };
  let draining = () => {};
  const close = () => closeAll(o.closers, log);
  try {
    let store = opts.store;
    const needStore = !base.ledger || (!base.wallet && config.cashu.mints.length > 0);
    if (!store && needStore) {
      const own = openOwnStore(o);
      if (own.kind === 'sqlite') draining = () => own.db.pragma(`busy_timeout = ${SHUTDOWN_SQLITE_BUSY_MS}`);
      store = own;
    }
    if (store?.kind === 'redis') await store.ready(10_000);
    const signals = store ? await openSignals(o, store) : undefined;
    let ledger = base.ledger ?? (await buildLedger(o, store!, signals));
    // Webhooks and alerts (core/events/): the store next to the ledger's, the ledger hook, the outbox worker and
    // the key.expired sweep. Closed before the ledger (closers run in reverse).
    const events = base.events ?? (store ? buildEvents(o, store, signals) : undefined);
    if (events) ledger = events.watchLedger(ledger);
    const wallet =
      base.wallet ?? (config.cashu.mints.length > 0 ? await buildWallet(o, store!, ledger) : undefined);
    const lightning =
      base.lightning ?? (wallet && store ? await buildLightning(o, store, ledger, wallet) : undefined);
    const doors =
      base.doors ??
      (wallet && store && lightning ? await buildDoors(o, store, wallet, lightning, ledger) : undefined);
    const btc = base.btc ?? (await buildBtc(o));
    const catalog = base.catalog;
    const pricing =
      base.pricing ??
      new PricingHolder(createPricing({ config: config.pricing, rates: (id) => catalog.usdRates(id), btc }));
    await startHeartbeat(o, ledger);
    startSweep(o, ledger);
    return {
      ledger,
      wallet,
      pricing,
      btc,
      store,
      lightning,
      doors,
      events,
      signals,
      draining: () => draining(),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** What the steps of openMoneyServices share: the settings, the log, and what to close at shutdown (in reverse). */
interface Opening {
  config: Config;
  log: Logger;
  opts: MoneyServiceOptions;
  closers: Array<() => unknown>;
}

/** Each closer gets SHUTDOWN_STEP_MS (a store or mint that does not answer must not hold the rest); true when all
 *  finished in time. */
async function closeAll(closers: Array<() => unknown>, log: Logger): Promise<boolean> {
  let settled = true;
  for (const c of closers.splice(0).reverse()) {
    const err = await within(Promise.resolve().then(c), SHUTDOWN_STEP_MS);
    if (err !== undefined) {
      settled = false;
      log.warn({ err }, 'closing a money service failed or did not finish');
    }
  }
  return settled;
}

/** The store this process opens itself (none was handed in). */
function openOwnStore(o: Opening): StoreConnection {
  const own = openStore({
    redis: o.config.redis,
    redisPrefix: o.config.redisPrefix,
    dataDir: o.config.dataDir,
    sqliteCheckpointMs: o.config.sqliteCheckpointMs,
    onCheckpointError: (err) =>
      o.log.warn(
        { err },
        'SQLite WAL checkpoint in the background failed (SQLite checkpoints inside commits again if its worker is gone)',
      ),
  });
  o.closers.push(() => own.close());
  return own;
}

/** Cross-process signals (settings changes, lease recalls) through the store. */
async function openSignals(o: Opening, store: StoreConnection): Promise<StoreSignals> {
  const opened = await StoreSignals.open(store, {
    onError: (err) => o.log.warn({ err }, 'store signals: read or subscription failed (polled again)'),
  });
  o.closers.push(() => opened.close());
  return opened;
}

/** The ledger on the store, wrapped in credit leases when they are on (docs/ledger.md): the wrapper's close reports
 *  and returns every lease, then closes the store's. */
async function buildLedger(
  o: Opening,
  store: StoreConnection,
  signals: StoreSignals | undefined,
): Promise<Ledger> {
  const { config, log } = o;
  const factory = o.opts.createLedger ?? createLedger;
  const built = await factory(store, {
    prefix: config.redisPrefix,
    auditRetentionMs: config.auditRetentionDays * 86_400_000,
    warn: (msg) => log.warn(msg),
  });
  const leased = config.leases.enabled
    ? new LeasingLedger(built, {
        flushMs: config.leases.flushMs,
        idleMs: config.leases.idleMs,
        ttlMs: config.leases.ttlMs,
        onError: (err) => log.warn({ err }, 'credit lease step failed (retried)'),
        ...(signals !== undefined
          ? {
              notify: () =>
                void signals
                  .bump('recall')
                  .catch((err: unknown) => log.warn({ err }, 'recall signal failed')),
              answered: () =>
                void signals
                  .bump('recall-answered')
                  .catch((err: unknown) => log.warn({ err }, 'recall answer signal failed')),
            }
          : {}),
      })
    : built;
  if (leased instanceof LeasingLedger) {
    signals?.on('recall', () => leased.wake());
    signals?.on('recall-answered', () => leased.recallAnswered());
  }
  o.closers.push(() => leased.close());
  return leased;
}

/** Webhooks and alerts on the store, started; an account gaining a watch signalled to every process. */
function buildEvents(o: Opening, store: StoreConnection, signals: StoreSignals | undefined): Events {
  const webhookStore: WebhookStore =
    store.kind === 'redis'
      ? new RedisWebhookStore(store.redis, o.config.redisPrefix)
      : new SqliteWebhookStore(store.db);
  const built = new Events(
    o.opts.wrapWebhookStore ? o.opts.wrapWebhookStore(webhookStore) : webhookStore,
    o.config.webhooks,
    o.log,
  );
  if (signals !== undefined) {
    built.signalWith(() => signals.bump('watches'));
    signals.on('watches', () => built.watchesChanged());
  }
  built.start();
  o.closers.push(() => built.close());
  return built;
}

/** The wallet, after a recovery pass over what a crash left half-done, with the pass repeated now and then. */
async function buildWallet(o: Opening, store: StoreConnection, ledger: Ledger): Promise<WalletService> {
  const { config, log } = o;
  const factory = o.opts.createWallet ?? createWallet;
  const built = await factory({
    conn: store,
    mints: config.cashu.mints,
    seed: config.cashu.seed,
    log,
    foreignMints: config.foreignMints,
    // Payouts a dead process left between making the token and committing (core/account/pay-out.ts).
    payouts: (record, w) => settlePayoutRecord({ ledger, wallet: w }, record),
    // Receives a dead process (or a lost mint answer) left for a recovery pass: credited where their caller
    // meant to (core/account/credit-token.ts), not only when the client presents the token again.
    receipts: (receipt, intent) => creditRecovered(ledger, receipt, intent),
    // The owner of this process's journal entries (core/wallet/owners.ts). A cluster worker is its own
    // instance (a worker's respawn is not its predecessor: its entries wait for the heartbeat to go stale).
    instance: {
      id: PROCESS_ID,
      name:
        config.cashu.instanceName === undefined || isClusterWorker()
          ? `${config.cashu.instanceName ?? hostname()}#${PROCESS_ID}`
          : config.cashu.instanceName,
      ...(config.orphanReleaseMs > 0 ? { deadAfterMs: config.orphanReleaseMs } : {}),
    },
  });
  o.closers.push(() => built.close());
  setOpenPayoutSource(() => built.openPayouts());
  o.closers.push(() => setOpenPayoutSource(undefined));
  // Finish or roll back what a crash left half-done before any new money moves — but only what is no live
  // process's: entries of a gone owner or of this instance's predecessor (same INSTANCE_NAME). A live
  // neighbour's entry is its own, even at start (deciding it while its melt is on the way to the mint paid
  // refunds twice); the same rule holds for every later pass (RecoverOptions.ownerCheck).
  const report = await built.recover({ ownerCheck: true });
  if (report.examined > 0 || report.liveOwners > 0) log.info({ recovery: report }, 'wallet recovery pass');
  startWalletRecovery(o, built);
  return built;
}

/** Repeat the wallet's recovery pass now and then: a send that failed on a mint outage keeps its proofs journalled
 *  (not spendable) until a pass resolves it, and a payout pending at the mint finishes only in a pass. */
function startWalletRecovery(o: Opening, wallet: WalletService): void {
  const everyRecover = o.opts.recoverEveryMs ?? o.config.cashu.recoveryMs;
  if (everyRecover <= 0) return;
  let recovering = false;
  const timer = setInterval(() => {
    if (recovering) return;
    recovering = true;
    wallet
      .recover({ ownerCheck: true })
      .then((r) => {
        if (r.examined > 0 || r.liveOwners > 0) o.log.info({ recovery: r }, 'wallet recovery pass');
      })
      .catch((err: unknown) => o.log.warn({ err }, 'wallet recovery pass failed'))
      .finally(() => {
        recovering = false;
      });
  }, everyRecover);
  timer.unref();
  o.closers.push(() => clearInterval(timer));
}

/** Lightning deposits: the watcher mints and credits paid quotes whether or not the client asks again. */
async function buildLightning(
  o: Opening,
  store: StoreConnection,
  ledger: Ledger,
  wallet: WalletService,
): Promise<LightningDeposits> {
  // LIGHTNING_POLL_MS: both the watcher's tick and how long an unpaid record waits between checks.
  const built = new LightningDeposits({
    conn: store,
    ledger,
    wallet,
    log: o.log,
    pollMs: o.config.lightning.pollMs,
  });
  await built.init();
  built.start(o.config.lightning.pollMs);
  o.closers.push(() => built.stop());
  return built;
}

/** The payment doors: their secrets (L402 root key, MPP challenge key) made once in the store. */
function buildDoors(
  o: Opening,
  store: StoreConnection,
  wallet: WalletService,
  lightning: NonNullable<Services['lightning']>,
  ledger: Ledger,
): Promise<PaymentDoors> {
  const { config } = o;
  return PaymentDoors.open({
    ledger,
    config: {
      doors: config.doors.offered,
      minSats: config.doors.minSats,
      l402ExpiryS: config.doors.l402ExpiryS,
      closeTakeoverMs: config.doors.closeTakeoverMs,
      realm: doorRealm(config),
    },
    store,
    wallet,
    deposits: lightning,
    log: o.log,
  });
}

/**
 * The BTC price source. Model-based prices depend on the tickers: the first price is awaited before the gateway
 * listens. Token pricing only prices unit-priced calls with it: the tickers run in the background, never delaying
 * the start. Fixed pricing needs none: no ticker runs (tickersNeeded).
 */
async function buildBtc(o: Opening): Promise<NonNullable<Services['btc']>> {
  const { config, log } = o;
  const built = createBtcPriceSource({ config: config.pricing, log });
  o.closers.push(() => built.close());
  if (tickersNeeded(config.pricing)) {
    if (pricingMode(config.pricing) === 'model') {
      await built.refresh().catch((err: unknown) => {
        log.warn({ reason: err instanceof Error ? err.message : String(err) }, 'no BTC price at start-up');
      });
    }
    built.start();
  }
  return built;
}

/** Heartbeat + orphan release (core/ledger/owner.ts): what a dead process held is released by this one within
 *  ORPHAN_RELEASE_MS, long before its reservation would expire. */
async function startHeartbeat(o: Opening, ledger: Ledger): Promise<void> {
  const { log } = o;
  const orphanMs = o.config.orphanReleaseMs;
  if (orphanMs <= 0) return;
  const beat = async () => {
    await ledger.heartbeat(PROCESS_ID);
    const r = await ledger.releaseOrphans(orphanMs);
    const report = orphanReport(r);
    if (report) log[report.level](r, report.msg);
  };
  await beat().catch((err: unknown) => log.warn({ err }, 'heartbeat failed'));
  let beating = false;
  const timer = setInterval(
    () => {
      if (beating) return;
      beating = true;
      beat()
        .catch((err: unknown) => log.warn({ err }, 'heartbeat failed'))
        .finally(() => {
          beating = false;
        });
    },
    Math.max(100, Math.floor(orphanMs / 3)),
  );
  timer.unref();
  o.closers.push(() => clearInterval(timer));
}

/** Expired reservations released now and then. */
function startSweep(o: Opening, ledger: Ledger): void {
  const every = o.opts.sweepEveryMs ?? Math.min(60_000, Math.floor(o.config.reservationExpiryMs / 4));
  if (every <= 0) return;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    ledger
      .sweepExpired()
      .then((n) => {
        if (n > 0) o.log.info({ released: n }, 'released expired reservations');
      })
      .catch((err: unknown) => o.log.warn({ err }, 'expiry sweep failed'))
      .finally(() => {
        running = false;
      });
  }, every);
  timer.unref();
  o.closers.push(() => clearInterval(timer));
}

export interface BuiltServices {
  /** Complete: every field is set here, none is filled in later. */
  services: Services;
  /**
   * Closes what was built here (not what `overrides` supplied), in reverse order, each step bounded by
   * SHUTDOWN_STEP_MS; true when every one finished in time.
   */
  close(): Promise<boolean>;
  /** The shutdown began (before the grace): see MoneyServices.draining. */
  draining(): void;
}

/** The providers file, or the one provider UPSTREAM_BASE_URL names (reusing `client` when a test supplies one). */
export function buildProviders(config: Config, client?: UpstreamClient): Providers {
  const opts = {
    policy: config.routingPolicy,
    maxAttempts: config.providerMaxAttempts,
    breaker: config.providerBreaker,
  };
  if (config.providersPath !== undefined) {
    const file = readProvidersFile(config.providersPath, process.env, {
      timeoutMs: config.upstreamTimeoutMs,
      maxConnections: config.upstreamConnections,
    });
    return new Providers(file, opts);
  }
  const name = providerName(config.upstreamBaseUrl);
  const file = {
    providers: [
      {
        name,
        baseUrl: config.upstreamBaseUrl,
        ...(config.upstreamApiKey !== undefined ? { apiKey: config.upstreamApiKey } : {}),
        models: '*' as const,
        priority: 1,
        weight: 1,
        timeoutMs: config.upstreamTimeoutMs,
        maxConnections: config.upstreamConnections,
        headers: {},
        pricing: {},
      },
    ],
    routing: {},
  };
  // One provider, nothing to fail over to: its breaker reports status but does not refuse calls.
  return new Providers(file, { ...opts, skipOpenBreakers: false }, client ? { [name]: client } : {});
}

/**
 * The model catalogue is the union of the providers' lists: each provider's `/v1/models` (only the models it
 * serves, when its entry names them) plus the ids its entry names; the first provider listing a model wins its
 * metadata. Fails only when no provider answered and no entry names a model.
 */
async function unionOfModels(providers: Services['providers']): Promise<unknown> {
  const answers = await Promise.allSettled(providers.list.map((p) => p.client.getJson('/v1/models')));
  const seen = new Set<string>();
  const data: unknown[] = [];
  let answered = false;
  providers.list.forEach((p, i) => {
    const a = answers[i]!;
    if (a.status === 'fulfilled') {
      answered = true;
      const items = (a.value as { data?: unknown })?.data;
      for (const m of Array.isArray(items) ? items : []) {
        const id = (m as { id?: unknown })?.id;
        if (typeof id !== 'string' || seen.has(id) || !p.serves(id)) continue;
        seen.add(id);
        data.push(m);
      }
    }
    for (const id of p.namedModels ?? []) {
      if (seen.has(id)) continue;
      seen.add(id);
      data.push({ id, object: 'model', owned_by: p.name });
    }
  });
  if (!answered && data.length === 0) throw (answers[0] as PromiseRejectedResult).reason;
  // A provider without named models whose list did not come: use what came, and let the catalogue retry.
  const failed = providers.list.filter((p, i) => answers[i]!.status === 'rejected' && !p.namedModels?.length);
  if (failed.length > 0)
    throw new PartialModelList(
      { object: 'list', data },
      failed.map((p) => p.name),
    );
  return { object: 'list', data };
}

/**
 * The composition root's services, built once and complete: the upstream client and model catalogue, the
 * money services (store, ledger, wallet recovered before anything listens, BTC price, pricing holder), the
 * lifecycle flag, and the operator settings persisted in the store applied over the environment — all before
 * a plugin or route module is built, so the first call already prices with the persisted terms.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the composition root of the services: built in dependency order, each step one or two lines
export async function buildServices(
  config: Config,
  log: Logger,
  overrides: Partial<Services> = {},
  money: MoneyServiceOptions = {},
): Promise<BuiltServices> {
  const providers = overrides.providers ?? buildProviders(config, overrides.upstream);
  const upstream = overrides.upstream ?? providers.list[0]!.client;
  const catalog =
    overrides.catalog ??
    new ModelCatalog({
      fetchModels: () => unionOfModels(providers),
      modelsPath: config.modelsPath,
      ownedBy: providers.list[0]!.name,
      log,
    });
  const m = await openMoneyServices(config, log, { ...overrides, catalog }, money);
  const store = m.store ?? overrides.store;
  // The node's Nostr identity (from NOSTR_NSEC, else made once in the store) and its listing at NOSTR_RELAYS.
  const ownNetwork = overrides.network === undefined;
  let network = overrides.network;
  if (ownNetwork) {
    try {
      network = await NodeNetwork.open(config, store, catalog, log);
    } catch (err) {
      await m.close();
      throw err;
    }
  }
  // The nodes it buys from (paid from the wallet): their prices read now, so that a `"pricing": "auto"` node that
  // advertises none stops the start.
  const ownNodes = overrides.nodes === undefined;
  let nodes = overrides.nodes;
  if (ownNodes) {
    try {
      nodes = PaidNodes.build(providers.list, { wallet: m.wallet, ledger: m.ledger, store, log });
      await nodes?.start(log);
    } catch (err) {
      await nodes?.close();
      if (ownNetwork) await network?.close();
      await m.close();
      throw err;
    }
  }
  const services: Services = {
    ...overrides,
    config,
    log,
    upstream,
    providers,
    catalog,
    ledger: m.ledger,
    wallet: m.wallet,
    pricing: m.pricing,
    btc: m.btc,
    ...(m.lightning !== undefined ? { lightning: m.lightning } : {}),
    ...(m.doors !== undefined ? { doors: m.doors } : {}),
    ...(m.events !== undefined ? { events: m.events } : {}),
    ...(store !== undefined ? { store } : {}),
    ...(m.signals !== undefined ? { signals: m.signals } : {}),
    lifecycle: overrides.lifecycle ?? { draining: false },
    ...(network !== undefined ? { network } : {}),
    ...(nodes !== undefined ? { nodes } : {}),
    // Per-IP and admin-login limits, in the same store as the ledger (in memory without one).
    limiter: overrides.limiter ?? new WindowLimiter(store),
  };
  // The audit log, in the same store (memory without one): a settled call's record is written by the ledger step
  // that charges it, every other record in batches off the request path. Reads first have the ledger write the
  // calls it still holds (credit leases), so a reader sees every call answered so far.
  const ownAudit = overrides.audit === undefined;
  if (ownAudit) {
    const ledger = services.ledger;
    services.audit = new AuditLog(store, {
      retentionDays: config.auditRetentionDays,
      log,
      ...(money.createAuditBackend !== undefined ? { backend: money.createAuditBackend(store) } : {}),
      ...(ledger !== undefined ? { beforeRead: (account) => ledger.reportCalls(account) } : {}),
    });
    services.audit.start();
  }
  // Provider objects' owners and the batch settlement watcher, in the money store (core/batches/).
  const batches = store !== undefined ? startBatchServices(services, store) : undefined;
  if (batches !== undefined) {
    services.objects ??= batches.objects;
    services.batchJobs ??= batches.jobs;
    services.batchWatcher ??= batches.watcher;
  }
  // Refunds to Lightning addresses and the expired-key sweep (core/account/refund-sweep.ts).
  const refunds = startRefundServices(services, store);
  services.lightningAddresses ??= refunds.addresses;
  services.refundSweep ??= refunds.sweep;
  if (store !== undefined) {
    // Persisted settings win over the environment; unreadable ones leave the environment's values. The
    // signals' baseline version was read before this load, so a change saved meanwhile is applied again.
    try {
      const saved = await loadPersistedSettings(services, store);
      if (Object.keys(saved).length > 0) applyPatch(services, saved);
    } catch (err) {
      log.warn({ err }, 'could not load the persisted admin settings');
    }
    // A change made by any process sharing the store (PATCH /admin/api/settings) reaches this one.
    services.signals?.on('settings', (version) => {
      reloadSettings(services, store, version).catch((err: unknown) =>
        log.warn({ err, version }, 'could not apply the changed admin settings (next change retries)'),
      );
    });
  }
  if (ownNetwork) network?.start();
  return {
    services,
    draining: () => m.draining(),
    async close() {
      if (ownNetwork) await network?.close();
      if (ownNodes) {
        const left = await within(nodes?.close(), SHUTDOWN_STEP_MS);
        if (left !== undefined) log.warn({ err: left }, 'closing the node payments failed or did not finish');
      }
      catalog.stop();
      // Each step has its own deadline (core/shutdown.ts); the money services bound each of theirs.
      const jobs = await within(batches?.close(), SHUTDOWN_STEP_MS);
      if (jobs !== undefined) log.warn({ err: jobs }, 'closing the batch watcher failed or did not finish');
      const sweep = await within(refunds.close(), SHUTDOWN_STEP_MS);
      if (sweep !== undefined)
        log.warn({ err: sweep }, 'closing the expired-key sweep failed or did not finish');
      const audit = await within(ownAudit ? services.audit?.close() : undefined, SHUTDOWN_STEP_MS);
      if (audit !== undefined) log.warn({ err: audit }, 'closing the audit log failed or did not finish');
      let settled = (await m.close()) && audit === undefined && jobs === undefined && sweep === undefined;
      const pools = await within(
        !overrides.providers ? providers.close() : !overrides.upstream ? upstream.close() : undefined,
        SHUTDOWN_STEP_MS,
      );
      if (pools !== undefined) {
        settled = false;
        log.warn({ err: pools }, 'closing the provider pools failed or did not finish');
      }
      return settled;
    },
  };
}

/** The MPP realm: the host of the node's first public URL, else the service name. */
function doorRealm(config: Config): string {
  const first = config.network.publicUrls[0];
  if (first !== undefined) {
    try {
      return new URL(first).host;
    } catch {
      /* the service name below */
    }
  }
  return 'prepaid-model-gateway';
}
