import { GatewayError } from '../errors.js';
import { type RouteModule, route } from '../http/router.js';
import type { Services } from '../plugin.js';
import type { DepositView, LightningDeposits } from '../wallet/lightning-deposits.js';
import { callerOf, loadKey, moneyServices } from './account.js';

/**
 * Lightning deposits (spec §4.3; docs/wallet.md): the gateway takes a NUT-04 mint quote at its primary mint
 * and answers the invoice with an unguessable capability `id`; the watcher (core/wallet/lightning-deposits.ts)
 * mints and credits once the invoice is paid, whether or not the client asks again. A GET finishes a due
 * deposit at once. Whoever holds a create `id` receives the key: treat it like a bearer token.
 *
 * - POST /v1/wallet/create/lightning {amount_sats, name?} → 201; GET /v1/wallet/create/lightning/{id}.
 * - POST /v1/wallet/topup/lightning {amount_sats} (authenticated) → 201; GET /v1/wallet/topup/lightning/{id}.
 */

function deposits(services: Services): LightningDeposits {
  if (!services.lightning) {
    throw new GatewayError('service_unavailable', {
      message: 'This node has no eCash wallet and store for Lightning deposits',
    });
  }
  return services.lightning;
}

function checkAmount(services: Services, amount: number): void {
  const { minSats, maxSats } = services.config.lightning;
  if (amount < minSats || amount > maxSats) {
    throw new GatewayError('invalid_request', {
      message: `amount_sats must be from ${minSats} to ${maxSats}`,
      details: { parameter: 'amount_sats', min: minSats, max: maxSats },
    });
  }
}

/**
 * Creation limit per client IP (each creation asks the mint for a quote and persists a record): a fixed
 * one-minute window per IP, per process (with several processes the effective limit is that times the
 * process count). Old windows are dropped when the map grows.
 */
class PerIpWindow {
  private readonly hits = new Map<string, { start: number; n: number }>();
  constructor(private readonly perMinute: number) {}
  /** Seconds to wait, or 0 when this hit is allowed. */
  take(ip: string, now = Date.now()): number {
    if (this.hits.size > 10_000) {
      for (const [k, v] of this.hits) if (now - v.start >= 60_000) this.hits.delete(k);
    }
    const w = this.hits.get(ip);
    if (!w || now - w.start >= 60_000) {
      this.hits.set(ip, { start: now, n: 1 });
      return 0;
    }
    if (w.n >= this.perMinute) return Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000));
    w.n++;
    return 0;
  }
}

function limitCreation(window: PerIpWindow, ip: string): void {
  const wait = window.take(ip);
  if (wait > 0) {
    throw new GatewayError('rate_limit_exceeded', {
      message: 'Too many Lightning invoices from this address; try again later',
      headers: { 'retry-after': String(wait) },
    });
  }
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function view(id: string, v: DepositView) {
  return {
    id,
    status: v.status,
    amount_sats: v.amountSats,
    invoice: v.request,
    expires_at: iso(v.expiresAt),
    ...(v.creditedMsat !== undefined ? { msats: v.creditedMsat } : {}),
    ...(v.apiKey !== undefined ? { api_key: v.apiKey } : {}),
  };
}

async function read(services: Services, id: string, kind: 'create' | 'topup') {
  const v = await deposits(services).status(id, kind);
  if (v === null) throw new GatewayError('not_found', { message: 'Unknown Lightning deposit' });
  return { json: view(id, v) };
}

export const lightningRoutes: RouteModule = (router, services) => {
  const window = new PerIpWindow(services.config.lightning.createPerMinute);
  route(router, 'POST', '/v1/wallet/create/lightning', async (ctx, body) => {
    const amount = body.amount_sats;
    checkAmount(services, amount);
    limitCreation(window, ctx.clientIp);
    const { id, record } = await deposits(services).create({
      kind: 'create',
      amountSats: amount,
      name: body.name ?? null,
    });
    return {
      status: 201,
      json: view(id, {
        status: 'pending',
        amountSats: amount,
        expiresAt: record.expiresAt,
        request: record.request,
      }),
    };
  });

  route(router, 'GET', '/v1/wallet/create/lightning/{id}', (ctx) =>
    read(services, ctx.params.id ?? '', 'create'),
  );

  route(router, 'POST', '/v1/wallet/topup/lightning', async (ctx, body) => {
    const money = moneyServices(services);
    const amount = body.amount_sats;
    checkAmount(services, amount);
    const caller = await callerOf(ctx, money);
    if (!('apiKey' in caller.credential)) {
      throw new GatewayError('invalid_request', {
        message: 'A Lightning top-up needs an API key (a token identity cannot be topped up by invoice)',
      });
    }
    const info = await loadKey(ctx, services, money, caller.credential);
    if (info.key.isChild) throw new GatewayError('child_key_forbidden');
    limitCreation(window, ctx.clientIp);
    const { id, record } = await deposits(services).create({
      kind: 'topup',
      amountSats: amount,
      topupApiKey: caller.credential.apiKey,
    });
    return {
      status: 201,
      json: view(id, {
        status: 'pending',
        amountSats: amount,
        expiresAt: record.expiresAt,
        request: record.request,
      }),
    };
  });

  route(router, 'GET', '/v1/wallet/topup/lightning/{id}', (ctx) =>
    read(services, ctx.params.id ?? '', 'topup'),
  );
};
