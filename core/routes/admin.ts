import { randomBytes } from 'node:crypto';
import { checkSurplus, withdrawSurplus } from '../account/operator-withdrawal.js';
import { auditAdmin } from '../audit/audit-log.js';
import { cookieValue, secretMatches } from '../auth/secret-match.js';
import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { originOf } from '../events/ssrf.js';
import type { RouteModule } from '../http/router.js';
import { route } from '../http/router.js';
import type { KeyLookup } from '../ledger/types.js';
import { adminLoginGate } from '../limits/request-limits.js';
import { overheadSummary } from '../metrics.js';
import type { Services } from '../service-types.js';
import { preparePatch, settingsView, validatePatch } from '../settings.js';
import { AdminStats, MAX_POINTS } from '../stats/admin-stats.js';
import { type Granularity, SPAN_MS } from '../stats/stats-store.js';
import { saveSettings } from '../store/settings-store.js';
import { readAsset } from './admin-assets.js';
import { deliveriesPage, deliveriesQuery } from './admin-deliveries.js';
import { adminKeyRoutes } from './admin-keys.js';
import { networkView } from './admin-network.js';
import { adminCsp, type DashboardData, dashboardPage, loginPage } from './admin-page.js';
import { providersView } from './admin-providers.js';
import {
  AdminSessions,
  arrivedOverHttps,
  assertSameOrigin,
  SESSION_COOKIE,
  sessionCookie,
} from './admin-session.js';
import { keyView } from './admin-views.js';
import { withdrawalPreview } from './admin-withdrawal.js';
import { packageVersion } from './public.js';
import { auditCursor } from './wallet.js';

/**
 * Admin endpoints (docs/endpoints.md, "Admin"): GET /admin/ (HTML dashboard, or a login form without a valid
 * cookie), GET and PATCH /admin/api/settings (see admin-settings.ts for what is shown, redacted and
 * changeable).
 *
 * Authentication: the `admin_password` cookie, compared with ADMIN_PASSWORD in constant time (SHA-256 of
 * both, then `timingSafeEqual`, so neither the value nor its length leaks through timing). Without
 * ADMIN_PASSWORD the admin surface is off: /admin/ answers 404, the API 403 `forbidden`.
 *
 * At registration the persisted runtime settings are loaded from the store and applied over the
 * environment (synchronously on SQLite; on Redis within the first round trip after start).
 */

const NO_STORE = { 'cache-control': 'no-store' };

/**
 * Who may use the admin surface: a console session (`admin_session` cookie, POST /admin/login) or, for API
 * clients, the `admin_password` cookie. A state-changing request must also be same-origin when a
 * browser sent it (admin-session.ts). Answers whether the caller is admitted; `throwing` makes a refusal 401.
 */
async function adminAccess(
  ctx: RequestContext,
  services: Services,
  sessions: AdminSessions,
): Promise<boolean> {
  const expected = services.config.adminPassword;
  if (expected === undefined) {
    throw new GatewayError('forbidden', { message: 'The admin API is disabled (no ADMIN_PASSWORD set)' });
  }
  assertSameOrigin(ctx, services.config.trustedProxies);
  const session = cookieValue(ctx.headers, SESSION_COOKIE);
  if (session !== undefined) {
    const live = await sessions.valid(session).catch((err: unknown) => {
      throw new GatewayError('store_unavailable', { cause: err });
    });
    if (live) {
      if (ctx.method !== 'GET') auditAdmin(ctx);
      return true;
    }
  }
  const given = cookieValue(ctx.headers, 'admin_password');
  const ok = secretMatches(given, expected);
  // Failed logins are limited per client IP; over the limit even the right password answers 429.
  // Audited: failed logins (a password was offered) and every admin change.
  if ((!ok && given !== undefined) || (ok && ctx.method !== 'GET')) auditAdmin(ctx);
  await adminLoginGate(ctx, services, given !== undefined, ok);
  return ok;
}

async function dashboardData(services: Services): Promise<DashboardData> {
  const c = services.config;
  const data: DashboardData = {
    node: {
      name: c.node.name,
      description: c.node.description,
      version: packageVersion(),
      npub: c.node.npub,
      mints: c.cashu.mints,
    },
    audit: { error: 'No balance store configured' },
    wallet: { error: 'No eCash wallet configured (CASHU_MINTS)' },
    settings: settingsView(services, services.store?.kind),
    overhead: await overheadSummary(),
  };
  if (services.ledger) {
    try {
      const report = await services.ledger.checkConservation();
      data.audit = {
        ok: report.ok,
        accounts: report.accounts,
        breaches: report.breaches.length,
        totals: { ...report.totals },
      };
    } catch {
      data.audit = { error: 'The balance store is unavailable' };
    }
  }
  if (services.wallet) {
    try {
      data.wallet = (await services.wallet.balances()).map((b) => ({
        mint: b.mint,
        unit: b.unit,
        amount: b.amount,
        amount_msat: b.amountMsat,
        reserved: b.reserved,
        proofs: b.proofs,
      }));
    } catch {
      data.wallet = { error: 'The wallet store is unavailable' };
    }
    // A melt the mint has not decided keeps its key's balance held and its payouts refused (payout-guard.ts).
    try {
      data.open_payouts = (await services.wallet.openPayouts()).map((p) => ({
        payout_id: p.holdId,
        state: p.state,
        since: new Date(p.sinceMs).toISOString(),
      }));
    } catch {
      data.open_payouts = { error: 'The wallet store is unavailable' };
    }
  }
  return data;
}

/** A positive integer query parameter within [1, max], or `dflt` when absent; 400 otherwise. */
function intParam(ctx: RequestContext, name: string, dflt: number, max: number): number {
  const raw = ctx.query.get(name);
  if (raw === null) return dflt;
  const n = Number(raw);
  if (!/^[0-9]+$/.test(raw) || !Number.isSafeInteger(n) || n < 1 || n > max) {
    throw new GatewayError('validation_failed', {
      message: `${name}: must be an integer from 1 to ${max}`,
    });
  }
  return n;
}

function storeFailure(err: unknown): never {
  if (err instanceof GatewayError) throw err;
  throw new GatewayError('store_unavailable', { cause: err });
}

/** Proofs held (store figures, no mint call) and user balances: the periodic solvency sample. */
async function storeSolvency(services: Services) {
  const [lines, owed] = await Promise.all([
    services.wallet!.balances(),
    services.ledger!.totalUserBalancesMsat(),
  ]);
  return { proofsMsat: lines.reduce((s, l) => s + l.amountMsat, 0), userBalancesMsat: owed };
}

function requireWallet(services: Services) {
  if (!services.wallet || !services.ledger) {
    throw new GatewayError('service_unavailable', { message: 'No eCash wallet or balance store configured' });
  }
  return { wallet: services.wallet, ledger: services.ledger };
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a route module: one short handler per /admin route, registered in order; the count is the route table
export const adminRoutes: RouteModule = (router, services: Services) => {
  const store = services.store;
  const sessions = new AdminSessions(store);
  const requireAdmin = async (ctx: RequestContext, _services: Services): Promise<void> => {
    if (!(await adminAccess(ctx, services, sessions))) throw new GatewayError('admin_auth_required');
  };
  // The console's statistics, kept only when the admin surface is on (no store writes otherwise).
  const stats =
    store !== undefined && services.config.adminPassword !== undefined
      ? new AdminStats(
          store,
          services.log,
          services.wallet && services.ledger ? () => storeSolvency(services) : undefined,
          services.lifecycle,
        )
      : undefined;
  const requireStats = (): AdminStats => {
    if (stats === undefined) {
      throw new GatewayError('service_unavailable', { message: 'No balance store configured' });
    }
    return stats;
  };

  route(router, 'GET', '/admin/assets/{name}', async (ctx) => {
    if (services.config.adminPassword === undefined)
      throw new GatewayError('not_found', { message: 'The admin page is disabled' });
    const asset = await readAsset(ctx.params.name ?? '');
    if (asset === undefined) throw new GatewayError('not_found', { message: 'No such admin asset' });
    return {
      status: 200,
      headers: {
        'content-type': asset.type,
        'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff',
      },
      body: asset.body,
    };
  });

  route(router, 'GET', '/admin/api/overview', async (ctx) => {
    await requireAdmin(ctx, services);
    const { settings: _settings, ...overview } = await dashboardData(services);
    return { headers: NO_STORE, json: overview };
  });

  route(router, 'GET', '/admin/api/timeseries', async (ctx) => {
    await requireAdmin(ctx, services);
    const g = (ctx.query.get('granularity') ?? 'minute') as Granularity;
    if (!(g in SPAN_MS)) {
      throw new GatewayError('validation_failed', {
        message: 'granularity: must be one of minute, hour, day',
      });
    }
    const points = intParam(ctx, 'points', 60, MAX_POINTS[g]);
    const series = await requireStats().series(g, points).catch(storeFailure);
    return {
      headers: NO_STORE,
      json: {
        granularity: g,
        bucket_ms: SPAN_MS[g],
        points: series.map((p) => ({
          t: p.t,
          calls: p.calls,
          errors: p.errors,
          charged_msats: p.chargedMsat,
        })),
      },
    };
  });

  route(router, 'GET', '/admin/api/solvency', async (ctx) => {
    await requireAdmin(ctx, services);
    const limit = intParam(ctx, 'limit', 1440, 10_000);
    const samples = await requireStats().samples(limit).catch(storeFailure);
    return {
      headers: NO_STORE,
      json: {
        samples: samples.map((s) => ({
          t: s.t,
          proofs_msat: s.proofsMsat,
          user_balances_msat: s.userBalancesMsat,
        })),
      },
    };
  });

  route(router, 'GET', '/admin/api/webhooks/deliveries', async (ctx) => {
    await requireAdmin(ctx, services);
    const q = deliveriesQuery(ctx, intParam(ctx, 'limit', 50, 500));
    const events = services.events;
    if (!events) throw new GatewayError('service_unavailable', { message: 'No webhook store configured' });
    return { headers: NO_STORE, json: await deliveriesPage(events.store, q).catch(storeFailure) };
  });

  route(router, 'GET', '/admin/api/providers', async (ctx) => {
    await requireAdmin(ctx, services);
    return { headers: NO_STORE, json: await providersView(services) };
  });

  const requireNetwork = () => {
    const n = services.network;
    if (!n) throw new GatewayError('service_unavailable', { message: 'No node network configured' });
    return n;
  };
  route(router, 'GET', '/admin/api/network', async (ctx) => {
    await requireAdmin(ctx, services);
    return { headers: NO_STORE, json: await networkView(requireNetwork(), services.providers) };
  });

  // "Publish now": the listing to every relay at once, backoff or not; answers the view after the pass.
  route(router, 'POST', '/admin/api/network/publish', async (ctx) => {
    await requireAdmin(ctx, services);
    const n = requireNetwork();
    await n.publishNow();
    return { headers: NO_STORE, json: await networkView(n, services.providers) };
  });

  route(router, 'POST', '/admin/api/keys/lookup', async (ctx, body) => {
    await requireAdmin(ctx, services);
    const ledger = services.ledger;
    if (!ledger) throw new GatewayError('service_unavailable', { message: 'No balance store configured' });
    const page = { limit: body.limit ?? 20, offset: 0 };
    const credential: KeyLookup | null =
      body.api_key !== undefined
        ? { apiKey: body.api_key }
        : await ledger.findKeyById(body.key_id ?? '').catch(storeFailure);
    if (credential === null) throw new GatewayError('not_found', { message: 'No key has that key id' });
    const [info, txs] = await Promise.all([
      ledger.getKeyInfo(credential),
      ledger.listTransactions(credential, page),
    ]).catch(storeFailure);
    if (info === null || txs === null) {
      throw new GatewayError('not_found', { message: 'No such key (or it was deleted)' });
    }
    // The key's records from the audit trail (core/audit/: every use of the key, kept AUDIT_RETENTION_DAYS).
    const audit = services.audit
      ? await services.audit.list({ keyId: info.key.keyId, limit: page.limit }).catch(storeFailure)
      : { data: [] };
    const a = info.account;
    // Alert settings and webhooks of the key (receivers by origin only: a URL's path or query may be a secret).
    const events = services.events;
    const [alerts, hooks] = events
      ? await Promise.all([
          events.store.getAlerts(a.accountId, info.key.keyId),
          events.store.listWebhooks(a.accountId, info.key.keyId),
        ]).catch(storeFailure)
      : [null, []];
    return {
      headers: NO_STORE,
      json: {
        key: keyView(info.key, info.usage),
        alerts:
          alerts === null
            ? null
            : {
                low_balance_threshold: alerts.lowBalanceThresholdMsat,
                daily_spend_limit: alerts.dailySpendLimitMsat,
                webhook_origin: alerts.webhookUrl === null ? null : originOf(alerts.webhookUrl),
              },
        webhooks: hooks
          .filter((w) => w.kind === 'webhook')
          .map((w) => ({
            id: w.id,
            origin: originOf(w.url),
            events: w.events,
            disabled: w.disabled,
            created_at: w.createdAtMs,
          })),
        account: {
          balance: a.balanceMsat,
          reserved: a.reservedMsat,
          deposited: a.depositedMsat,
          spent: a.spentMsat,
          withdrawn: a.withdrawnMsat,
          fees: a.feesMsat,
          requests: a.requests,
          created_at: a.createdAtMs,
        },
        available: info.availableMsat,
        children: info.children.map((c) => keyView(c.key, c.usage)),
        transactions: txs.transactions.map((t) => ({
          id: t.id,
          type: t.type,
          amount: t.amountMsat,
          balance_after: t.balanceAfterMsat,
          description: t.description,
          timestamp: t.timestampMs,
          key_id: t.keyId,
          model: t.model,
        })),
        audit: audit.data.map((r) => ({
          timestamp: Date.parse(r.timestamp),
          key_id: r.api_key_id ?? info.key.keyId,
          request_id: r.request_id,
          endpoint: r.endpoint,
          method: r.method,
          status: r.response_status,
          cost_msats: r.cost_msats,
        })),
      },
    };
  });

  route(router, 'POST', '/admin/api/actions/recovery', async (ctx) => {
    await requireAdmin(ctx, services);
    const { wallet } = requireWallet(services);
    // The gateway is serving: entries a live process may still be working on are left alone (and counted).
    const r = await wallet.recover({ ownerCheck: true });
    services.log.info({ report: r }, 'admin: recovery pass run');
    return {
      headers: NO_STORE,
      json: {
        examined: r.examined,
        receives_completed: r.receivesCompleted,
        receipts_credited: r.receiptsCredited,
        rolled_back: r.rolledBack,
        outputs_restored: r.outputsRestored,
        deferred: r.deferred,
        live_owners: r.liveOwners,
      },
    };
  });

  route(router, 'POST', '/admin/api/actions/solvency-check', async (ctx) => {
    await requireAdmin(ctx, services);
    const { wallet, ledger } = requireWallet(services);
    const r = await wallet.checkSolvency(() => ledger.totalUserBalancesMsat());
    await stats
      ?.addSample({ t: Date.now(), proofsMsat: r.proofsMsat, userBalancesMsat: r.userBalancesMsat })
      .catch((err: unknown) => services.log.warn({ err }, 'could not record the solvency sample'));
    return {
      headers: NO_STORE,
      json: {
        solvent: r.solvent,
        proofs_msat: r.proofsMsat,
        pending_msat: r.pendingMsat,
        spent_msat: r.spentMsat,
        user_balances_msat: r.userBalancesMsat,
        per_mint: r.perMint.map((m) => ({
          mint: m.mint,
          unit: m.unit,
          unspent_msat: m.unspentMsat,
          pending_msat: m.pendingMsat,
          spent_msat: m.spentMsat,
        })),
      },
    };
  });

  route(router, 'POST', '/admin/api/actions/payout', async (ctx, body) => {
    await requireAdmin(ctx, services);
    const money = requireWallet(services);
    if (body.mint !== undefined && !services.config.cashu.mints.includes(body.mint)) {
      throw new GatewayError('validation_failed', { message: 'mint: must be one of CASHU_MINTS' });
    }
    // Only the operator surplus may leave: never what the ledger owes its users.
    const r = await withdrawSurplus(money, body.invoice, body.mint === undefined ? {} : { mint: body.mint });
    services.log.info(
      { amountMsat: r.amountMsat, feeMsat: r.feeMsat, mint: r.mint },
      'admin: operator withdrawal',
    );
    return {
      headers: NO_STORE,
      json: {
        amount_msat: r.amountMsat,
        fee_msat: r.feeMsat,
        preimage: r.preimage,
        mint: r.mint,
        unit: r.unit,
        quote: r.quote,
      },
    };
  });

  route(router, 'POST', '/admin/api/actions/payout/preview', async (ctx, body) => {
    await requireAdmin(ctx, services);
    return { headers: NO_STORE, json: withdrawalPreview(await checkSurplus(services, body.invoice)) };
  });

  route(router, 'GET', '/admin/', async (ctx) => {
    const expected = services.config.adminPassword;
    if (expected === undefined)
      throw new GatewayError('not_found', { message: 'The admin page is disabled' });
    const nonce = randomBytes(16).toString('base64');
    const headers = {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': adminCsp(nonce),
      ...NO_STORE,
    };
    if (!(await adminAccess(ctx, services, sessions))) {
      return { status: 200, headers, body: loginPage(nonce) };
    }
    return { status: 200, headers, body: dashboardPage(nonce, await dashboardData(services)) };
  });

  // The console's login: a session in the store (admin-session.ts), never the password in a cookie.
  route(router, 'POST', '/admin/login', async (ctx, body) => {
    const expected = services.config.adminPassword;
    if (expected === undefined) {
      throw new GatewayError('forbidden', { message: 'The admin API is disabled (no ADMIN_PASSWORD set)' });
    }
    assertSameOrigin(ctx, services.config.trustedProxies);
    const ok = secretMatches(body.password, expected);
    auditAdmin(ctx);
    await adminLoginGate(ctx, services, true, ok);
    if (!ok) throw new GatewayError('admin_auth_required', { message: 'Wrong admin password' });
    const ttlMs = services.config.adminSessionHours * 3_600_000;
    const id = await sessions.create(ttlMs).catch((err: unknown) => {
      throw new GatewayError('store_unavailable', { cause: err });
    });
    const secure = arrivedOverHttps(ctx, services.config.trustedProxies);
    return {
      headers: { ...NO_STORE, 'set-cookie': sessionCookie(id, Math.floor(ttlMs / 1000), secure) },
      json: { expires_at: new Date(Date.now() + ttlMs).toISOString() },
    };
  });

  route(router, 'POST', '/admin/logout', async (ctx) => {
    assertSameOrigin(ctx, services.config.trustedProxies);
    await sessions.end(cookieValue(ctx.headers, SESSION_COOKIE)).catch((err: unknown) => {
      throw new GatewayError('store_unavailable', { cause: err });
    });
    const secure = arrivedOverHttps(ctx, services.config.trustedProxies);
    return { status: 204, headers: { ...NO_STORE, 'set-cookie': sessionCookie('', 0, secure) } };
  });

  adminKeyRoutes(router, services, requireAdmin);

  // The node-wide audit log, newest first; filters key_id, status, since, until (ISO 8601), limit, before.
  route(router, 'GET', '/admin/api/audit', async (ctx) => {
    await requireAdmin(ctx, services);
    if (services.audit === undefined) throw new GatewayError('service_unavailable');
    const q = ctx.query;
    const keyId = q.get('key_id');
    if (keyId !== null && !/^[0-9a-f]{16}$/.test(keyId)) {
      throw new GatewayError('validation_failed', { message: 'key_id: must be a 16-character key id' });
    }
    const status = q.get('status');
    if (status !== null && !/^[1-5]\d\d$/.test(status)) {
      throw new GatewayError('validation_failed', { message: 'status: must be an HTTP status code' });
    }
    const time = (name: string): number | undefined => {
      const raw = q.get(name);
      if (raw === null) return undefined;
      const ms = Date.parse(raw);
      if (Number.isNaN(ms))
        throw new GatewayError('validation_failed', { message: `${name}: must be an ISO 8601 time` });
      return ms;
    };
    const since = time('since');
    const until = time('until');
    const before = auditCursor(ctx);
    const page = await services.audit
      .list({
        limit: intParam(ctx, 'limit', 50, 500),
        ...(keyId !== null ? { keyId } : {}),
        ...(status !== null ? { status: Number(status) } : {}),
        ...(since !== undefined ? { sinceMs: since } : {}),
        ...(until !== undefined ? { untilMs: until } : {}),
        ...(before !== undefined ? { before } : {}),
      })
      .catch((err: unknown) => storeFailure(err));
    return { headers: NO_STORE, json: page };
  });

  route(router, 'GET', '/admin/api/settings', async (ctx) => {
    await requireAdmin(ctx, services);
    return { headers: NO_STORE, json: settingsView(services, store?.kind) };
  });

  route(router, 'PATCH', '/admin/api/settings', async (ctx, body) => {
    await requireAdmin(ctx, services);
    const patch = validatePatch(services, body);
    if (Object.keys(patch).length > 0) {
      const apply = preparePatch(services, patch);
      // Applied only once persisted: a store failure (503) leaves the running settings unchanged.
      if (store !== undefined) {
        await saveSettings(store, patch).catch((err: unknown) => {
          throw new GatewayError('store_unavailable', { cause: err });
        });
      }
      apply();
      // Every other process sharing the store reloads and applies the settings (core/store/signals.ts); this one
      // applies them again with the version, which the answer shows.
      // A failed signal answers 503: the change is saved, the PATCH is safe to repeat.
      const version = await services.signals?.bump('settings').catch((err: unknown) => {
        throw new GatewayError('store_unavailable', { cause: err });
      });
      services.log.info({ changed: Object.keys(patch), version }, 'admin settings changed');
    }
    return { headers: NO_STORE, json: settingsView(services, store?.kind) };
  });
};
