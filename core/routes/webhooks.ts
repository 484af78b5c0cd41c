import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { newWebhookSecret } from '../events/signing.js';
import { assertSafeWebhookUrl, UnsafeUrlError } from '../events/ssrf.js';
import { type EventType, eventKeyOf, type Webhook, type WebhookEvents } from '../events/types.js';
import { type RouteModule, route } from '../http/router.js';
import type { KeyInfo } from '../ledger/types.js';
import type { Services } from '../service-types.js';
import { callerOf, loadKey, requireMoney } from './account.js';
import { iso } from './wallet.js';

/**
 * Webhooks and alert settings (shapes in openapi/openapi.yaml, events in docs/webhooks.md).
 * Every route authenticates through `callerOf` like the wallet routes. A key manages its own webhooks and
 * alerts (a child key too); events of a child also go to its parent's webhooks (core/events/).
 *
 * - GET/POST /v1/wallet/alerts, GET/POST /v1/webhooks, DELETE /v1/webhooks/{id},
 *   GET /v1/webhooks/{id}/deliveries.
 * Reads work with an expired key; changes need a live one.
 */

function eventsOf(services: Services): WebhookEvents {
  if (services.events === undefined) {
    throw new GatewayError('service_unavailable', { message: 'This node has no event store configured' });
  }
  return services.events;
}

/**
 * The caller's key, and for a parent its children with an expiry: once the account has a destination, every
 * key's expiry is watched, so a child's key.expired reaches the parent's webhooks even when the child
 * registered nothing (children created later are added by the ledger hook, core/events/events.ts).
 */
async function watchAccount(events: WebhookEvents, info: KeyInfo): Promise<void> {
  const kids = info.children.map((c) => eventKeyOf(c.key)).filter((k) => k.expiresAtMs !== null);
  await events.store.watchKeys(kids);
}

function webhookView(w: Webhook) {
  return { id: w.id, url: w.url, events: w.events, created_at: iso(w.createdAtMs), disabled: w.disabled };
}

async function checkedUrl(services: Services, url: string): Promise<string> {
  try {
    return (await assertSafeWebhookUrl(url, services.config.webhooks.allowPrivateUrls)).href;
  } catch (err) {
    if (err instanceof UnsafeUrlError) {
      throw new GatewayError('invalid_request', { message: `webhook URL refused: ${err.message}` });
    }
    throw err;
  }
}

export const webhookRoutes: RouteModule = (router, services: Services) => {
  const caller = async (ctx: RequestContext, allowExpired: boolean) => {
    const money = requireMoney(services);
    const events = eventsOf(services);
    const c = await callerOf(ctx, money);
    const info = await loadKey(ctx, services, money, c.credential, { allowExpired });
    return { events, info };
  };

  const alertsView = async (events: WebhookEvents, info: KeyInfo) => {
    const a = await events.store.getAlerts(info.key.accountId, info.key.keyId);
    return {
      low_balance_threshold: a?.lowBalanceThresholdMsat ?? null,
      daily_spend_limit: a?.dailySpendLimitMsat ?? null,
      webhook_url: a?.webhookUrl ?? null,
    };
  };

  route(router, 'GET', '/v1/wallet/alerts', async (ctx) => {
    const { events, info } = await caller(ctx, true);
    return { json: await alertsView(events, info) };
  });

  route(router, 'POST', '/v1/wallet/alerts', async (ctx, body = {}) => {
    const { events, info } = await caller(ctx, false);
    const url = body.webhook_url == null ? null : await checkedUrl(services, body.webhook_url);
    const before = await events.store.getAlerts(info.key.accountId, info.key.keyId);
    const secret = url !== null && url !== before?.webhookUrl ? newWebhookSecret() : null;
    await events.store.setAlerts(
      eventKeyOf(info.key),
      {
        lowBalanceThresholdMsat: body.low_balance_threshold ?? null,
        dailySpendLimitMsat: body.daily_spend_limit ?? null,
        webhookUrl: url,
      },
      secret,
    );
    await watchAccount(events, info);
    events.touched(info.key.accountId);
    return {
      json: { ...(await alertsView(events, info)), ...(secret !== null ? { webhook_secret: secret } : {}) },
    };
  });

  route(router, 'GET', '/v1/webhooks', async (ctx) => {
    const { events, info } = await caller(ctx, true);
    const hooks = await events.store.listWebhooks(info.key.accountId, info.key.keyId);
    return { json: { data: hooks.map(webhookView), has_more: false } };
  });

  route(router, 'POST', '/v1/webhooks', async (ctx, body) => {
    const { events, info } = await caller(ctx, false);
    const url = await checkedUrl(services, body.url);
    const existing = await events.store.listWebhooks(info.key.accountId, info.key.keyId);
    if (existing.length >= MAX_WEBHOOKS_PER_KEY) {
      throw new GatewayError('invalid_request', {
        message: `A key may have at most ${MAX_WEBHOOKS_PER_KEY} webhooks`,
      });
    }
    const w = await events.store.createWebhook(eventKeyOf(info.key), {
      url,
      events: body.events as EventType[],
      secret: body.secret,
    });
    await watchAccount(events, info);
    events.touched(info.key.accountId);
    const { disabled: _d, ...view } = webhookView(w);
    return { status: 201, json: view };
  });

  route(router, 'DELETE', '/v1/webhooks/{id}', async (ctx) => {
    const { events, info } = await caller(ctx, true);
    const id = ctx.params.id ?? '';
    if (!(await events.store.deleteWebhook(info.key.accountId, info.key.keyId, id))) {
      throw new GatewayError('not_found', { message: 'No such webhook' });
    }
    return { json: { id, deleted: true } };
  });

  route(router, 'GET', '/v1/webhooks/{id}/deliveries', async (ctx) => {
    const { events, info } = await caller(ctx, true);
    const id = ctx.params.id ?? '';
    const w = await events.store.getWebhook(info.key.accountId, id);
    if (w === null || w.kind !== 'webhook' || w.keyId !== info.key.keyId) {
      throw new GatewayError('not_found', { message: 'No such webhook' });
    }
    const raw = Number(ctx.query.get('limit') ?? 20);
    const limit = Number.isInteger(raw) && raw >= 1 && raw <= 100 ? raw : 20;
    const log = await events.store.listDeliveries(info.key.accountId, id, limit + 1);
    return {
      json: {
        data: log
          .slice(0, limit)
          .map((e) => ({ attempt: e.attempt, at: iso(e.atMs), status: e.status, error: e.error })),
        has_more: log.length > limit,
      },
    };
  });
};

export const MAX_WEBHOOKS_PER_KEY = 10;
