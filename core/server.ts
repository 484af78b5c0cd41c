import { buildPlugins, type PipelineEntry, resolvePipeline } from '../plugins/index.js';
import { drainPayoutRetries } from './account/pay-out.js';
import { AUDIT_SUBJECT, auditInputOf } from './audit/audit-log.js';
import { type Config, loadConfig } from './config.js';
import type { RequestContext } from './context.js';
import { Cors } from './http/cors.js';
import { listen } from './http/engine.js';
import type { EngineServer } from './http/exchange.js';
import { type RouteModule, Router } from './http/router.js';
import { type DocsLookup, Transport, type ValidatorLookup } from './http/transport.js';
import { requestClientAddress } from './limits/request-limits.js';
import { log as defaultLog, type Logger } from './log.js';
import { getRequestValidator, serveDocs, warmRequestValidators } from './openapi/index.js';
import { PAID_ROUTES } from './paid-routes.js';
import { Pipeline } from './pipeline.js';
import { createRealtime } from './realtime/realtime-gateway.js';
import { adminRoutes } from './routes/admin.js';
import { balanceRoutes } from './routes/balance.js';
import { batchesRoutes } from './routes/batches.js';
import { estimateRoutes } from './routes/estimate.js';
import { filesRoutes } from './routes/files.js';
import { healthRoutes } from './routes/health.js';
import { lightningRoutes } from './routes/lightning.js';
import { metricsRoutes } from './routes/metrics.js';
import { publicRoutes } from './routes/public.js';
import { responsesRoutes } from './routes/responses.js';
import { walletRoutes } from './routes/wallet.js';
import { webhookRoutes } from './routes/webhooks.js';
import type { Services } from './service-types.js';
import { buildServices, type MoneyServiceOptions } from './services.js';
import { SHUTDOWN_STEP_MS, within } from './shutdown.js';
import { otelTracesEnabled } from './trace-context.js';

/**
 * The composition root: builds the services, the router (public routes + route modules + the paid routes
 * and catch-all), the pipeline from configuration, and starts the engine. Nothing else wires things up.
 */

export interface GatewayOptions {
  config?: Config;
  log?: Logger;
  /** Pipeline entries; default `config.pipeline`. Tests pass any subset, e.g. `['relay']`. */
  pipeline?: readonly PipelineEntry[];
  /** Extra route modules (wallet, balance, admin, …). */
  routes?: readonly RouteModule[];
  /** Services to use instead of the default ones (and extra ones for later stages). */
  services?: Partial<Services>;
  /** Request-body validators; default the OpenAPI ones. `null` disables validation. */
  validatorFor?: ValidatorLookup | null;
  /** Docs pages; default the OpenAPI module's. `null` disables them. */
  docs?: DocsLookup | null;
  /** Wait for the first upstream model-list fetch before listening (default false: fetched in background). */
  awaitCatalog?: boolean;
  /** How the money services (store, ledger, wallet, pricing) are built; see core/services.ts. */
  money?: MoneyServiceOptions;
}

export interface Gateway {
  readonly port: number;
  /** The engine actually serving. */
  readonly engine: EngineServer['engine'];
  /** `http://host:port` (loopback address when bound to all interfaces). */
  readonly url: string;
  readonly services: Services;
  readonly pipeline: Pipeline;
  readonly transport: Transport;
  /**
   * Graceful shutdown: /readyz turns 503, new connections are refused, requests in flight get up to `graceMs`
   * (default SHUTDOWN_GRACE_MS) to finish and settle, plugins close (settlement retries drained), then the
   * stores and connections close, each step within its own deadline (core/shutdown.ts). Resolves true when
   * everything settled in time (nothing in flight left, every retry applied, every close finished), false
   * when something was left behind. Never rejects.
   */
  close(graceMs?: number): Promise<boolean>;
}

/** Route modules every gateway serves, registered before `GatewayOptions.routes`. */
export const DEFAULT_ROUTES: readonly RouteModule[] = [
  healthRoutes,
  walletRoutes,
  lightningRoutes,
  webhookRoutes,
  balanceRoutes,
  estimateRoutes,
  adminRoutes,
  metricsRoutes,
  filesRoutes,
  batchesRoutes,
  responsesRoutes,
];

export function createRouter(services: Services, modules: readonly RouteModule[] = []): Router {
  const router = new Router();
  publicRoutes(router, services);
  for (const m of DEFAULT_ROUTES) m(router, services);
  for (const m of modules) m(router, services);
  for (const r of PAID_ROUTES) router.pipeline(r.method, r.path, r.multipart ? { json: false } : undefined);
  router.catchAll('/v1/', services.config.relayPaths);
  return router;
}

/**
 * Where requests are audited: every request whose handling named a key (callerOf, the paid auth and reserve
 * stages) or was an admin change / failed admin login leaves an `AUDIT_SUBJECT`; its record is buffered here
 * when the response ended (core/audit/audit-log.ts writes it off the request path) — unless the settle stage
 * handed it to the ledger step that charged the call (`byLedger`: written with the charge).
 */
function auditHook(services: Services): ((ctx: RequestContext, status: number) => void) | undefined {
  const audit = services.audit;
  if (audit === undefined) return undefined;
  return (ctx, status) => {
    if (ctx.local(AUDIT_SUBJECT)?.byLedger === true) return;
    const input = auditInputOf(ctx, status, requestClientAddress(ctx, services.config.trustedProxies));
    if (input !== undefined) audit.record(input);
  };
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the composition root: start-up steps in their required order (services, recovery, routes, engine, timers)
export async function startGateway(opts: GatewayOptions = {}): Promise<Gateway> {
  const config = opts.config ?? loadConfig();
  const log = opts.log ?? defaultLog;
  // Upstream, catalogue, store, ledger, wallet (recovered before we listen), BTC price, pricing, persisted
  // settings; what `opts.services` supplies is used as is and left to its owner.
  const built = await buildServices(config, log, opts.services, opts.money);
  const services = built.services;
  let pipeline: Pipeline;
  let transport: Transport;
  let server: EngineServer;
  let stopWarming = (): void => {};
  // Realtime sessions over WebSocket (core/realtime/): with a money store only.
  let realtime: ReturnType<typeof createRealtime>;
  try {
    const entries = await resolvePipeline(opts.pipeline ?? config.pipeline, {
      configPath: config.pipelineConfigPath,
    });
    pipeline = new Pipeline(buildPlugins(entries, services, log), log);
    const router = createRouter(services, opts.routes);
    transport = new Transport({
      router,
      pipeline,
      cors: new Cors(config.corsOrigins),
      maxBodyBytes: config.maxBodyBytes,
      log,
      validatorFor: opts.validatorFor === null ? undefined : (opts.validatorFor ?? getRequestValidator),
      docs: opts.docs === null ? undefined : (opts.docs ?? serveDocs),
      onRequestEnd: auditHook(services),
    });
    // The paid routes' validators compiled before the first call needs them; the rest in the background, while
    // no request is in flight.
    if (opts.validatorFor === undefined) {
      const t = transport;
      stopWarming = warmRequestValidators(
        PAID_ROUTES.filter((r) => !r.multipart),
        () => t.inflightRequests > 0,
      );
    }
    realtime = createRealtime(services, log);
    const catalogStart = services.catalog.start();
    // models.json edits apply without a restart (also on SIGHUP, see core/main.ts).
    services.catalog.watch();
    if (opts.awaitCatalog) await catalogStart;
    server = await listen(
      config.httpEngine,
      transport.handle,
      {
        host: config.host,
        port: config.port,
        maxBodyBytes: config.maxBodyBytes,
        maxHeaderBytes: config.maxHeaderBytes,
        headersTimeoutMs: config.headersTimeoutMs,
        bodyTimeoutMs: config.bodyTimeoutMs,
        keepAliveTimeoutMs: config.keepAliveTimeoutMs,
        maxConnections: config.maxConnections,
        ...(realtime !== undefined ? { onUpgrade: realtime.handleUpgrade } : {}),
      },
      log,
    );
  } catch (err) {
    // A bad pipeline or a port in use must not leave the store, wallet or timers open.
    stopWarming();
    await built.close();
    throw err;
  }
  // OpenTelemetry traces: loaded only when an OTLP endpoint is set (nothing of it is imported otherwise).
  const otel = otelTracesEnabled(process.env)
    ? (await import('./otel-tracing.js')).startOtelTracing(process.env, log)
    : undefined;
  if (server.fallback !== undefined && services.lifecycle) {
    services.lifecycle.engineFallback = { requested: 'uws', serving: 'node', reason: server.fallback };
  }
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  let closing: Promise<boolean> | undefined;
  return {
    port: server.port,
    engine: server.engine,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`,
    services,
    pipeline,
    transport,
    close(graceMs = config.shutdownGraceMs) {
      // Every wait has a deadline (core/shutdown.ts): the calls in flight, the plugins' retries and the payout
      // retries share the grace; closing the listener and each service gets SHUTDOWN_STEP_MS. Whatever misses
      // its deadline is logged and left behind (its money is recovered by the next start: reservations expire
      // or are released as orphans, payouts stay in their records).
      closing ??= (async () => {
        stopWarming();
        const deadline = Date.now() + graceMs;
        const left = () => Math.max(0, deadline - Date.now());
        if (services.lifecycle) services.lifecycle.draining = true;
        // SQLite lock waits shortened (they stop the event loop, and every deadline with it).
        built.draining();
        server.stopAccepting();
        // Realtime sessions end with 1001 once what they used is settled.
        const sessionsSettled = (await realtime?.close(left())) ?? true;
        if (!sessionsSettled) log.error('realtime sessions still open at the end of the grace period');
        await transport.idle(left());
        const inflight = transport.inflightRequests;
        if (inflight > 0) log.error({ inflight }, 'requests still in flight at the end of the grace period');
        let settled = inflight === 0 && sessionsSettled;
        settled = (await pipeline.close(left())) && settled;
        // Payout settlements still waiting for the mint or store (what is left stays in its payout record).
        const payouts = await within(
          drainPayoutRetries(left()).then((n) => n === 0 || Promise.reject(new Error(`${n} payouts left`))),
          left() + SHUTDOWN_STEP_MS,
        );
        const listener = await within(server.close(), SHUTDOWN_STEP_MS);
        if (listener !== undefined) log.warn({ err: listener }, 'closing the listener did not finish');
        settled = payouts === undefined && listener === undefined && settled;
        if (otel !== undefined) await within(otel.close(), SHUTDOWN_STEP_MS);
        return (await built.close()) && settled;
      })();
      return closing;
    },
  };
}
