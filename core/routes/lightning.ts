import type { DepositView, LightningDeposits } from '../account/types.js';
import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { type RouteModule, route } from '../http/router.js';
import { limitAnonymous, limitByIp } from '../limits/request-limits.js';
import type { Services } from '../service-types.js';
import { callerOf, loadKey, requireMoney } from './account.js';

/**
 * Lightning deposits (docs/wallet.md): the gateway takes a NUT-04 mint quote at its primary mint
 * and answers the invoice with an unguessable capability `id`; the watcher (core/account/lightning-deposits.ts)
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
 * one-minute window per IP shared by every process through the store (core/limits/window-limiter.ts).
 */
async function limitCreation(ctx: RequestContext, services: Services): Promise<void> {
  await limitByIp(
    ctx,
    services,
    'ln-create',
    [{ seconds: 60, limit: services.config.lightning.createPerMinute }],
    'Too many Lightning invoices from this address; try again later',
  );
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
  route(router, 'POST', '/v1/wallet/create/lightning', async (ctx, body) => {
    const amount = body.amount_sats;
    await limitAnonymous(ctx, services);
    checkAmount(services, amount);
    await limitCreation(ctx, services);
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
    const money = requireMoney(services);
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
    await limitCreation(ctx, services);
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
