import { GatewayError } from '../errors.js';
import type { RouteModule } from '../http/router.js';
import { route } from '../http/router.js';
import { ledgerRefusalToError } from '../ledger/errors.js';
import type { BalanceLimitReset, KeyMeta, KeyUsage } from '../ledger/types.js';
import { countKeyRequest } from '../limits/request-limits.js';
import type { Services } from '../service-types.js';
import { type Caller, callerOf, loadKey, requireMoney, tokenUnit, withdraw } from './account.js';

/**
 * The balance endpoints (docs/endpoints.md; shapes in openapi/openapi.yaml). Amounts in msats unless a field
 * says sats.
 *
 * - GET /v1/balance/info: the key, its usage and limits, and its child keys (shortened, never in full).
 * - POST /v1/balance/refund: the whole balance as a token, like /v1/wallet/refund; the account is named by
 *   Authorization or by the body `{cashu_token}` = the original token of a bearer/X-Cashu payment (its
 *   hash is the identity; the token itself is NOT redeemed again).
 * - POST /v1/balance/child-key (201): 1–50 child keys, CHILD_KEY_COST_MSATS each, all or nothing.
 */

const seconds = (ms: number | null): number | null => (ms === null ? null : Math.floor(ms / 1000));

function limitsView(key: KeyMeta, usage: KeyUsage) {
  return {
    total_requests: usage.totalRequests,
    total_spent: usage.totalSpentMsat,
    balance_limit: key.balanceLimitMsat,
    balance_limit_reset: key.balanceLimitReset,
    validity_date: seconds(key.validityDateMs),
  };
}

const RESETS: readonly (BalanceLimitReset | null)[] = ['daily', 'weekly', 'monthly', null];

export const balanceRoutes: RouteModule = (router, services: Services) => {
  route(router, 'GET', '/v1/balance/info', async (ctx) => {
    const money = requireMoney(services);
    const caller = await callerOf(ctx, money);
    const info = await loadKey(ctx, services, money, caller.credential, { allowExpired: true });
    const { key, usage, account } = info;
    return {
      json: {
        api_key: key.displayKey,
        key_id: key.keyId,
        balance: account.balanceMsat,
        reserved: account.reservedMsat,
        available: info.availableMsat,
        is_child: key.isChild,
        parent_key: key.parentKeyId,
        ...limitsView(key, usage),
        child_keys: info.children.map((c) => ({
          api_key: c.key.displayKey,
          key_id: c.key.keyId,
          ...limitsView(c.key, c.usage),
        })),
      },
    };
  });

  route(router, 'POST', '/v1/balance/refund', async (ctx, body = {}) => {
    const money = requireMoney(services);
    let caller: Caller;
    if (body.cashu_token !== undefined) {
      if (ctx.headers.authorization !== undefined || ctx.headers['x-cashu'] !== undefined) {
        throw new GatewayError('invalid_request', {
          message: 'Name the account either by Authorization or by the body cashu_token, not both',
        });
      }
      const unit = tokenUnit(money, body.cashu_token);
      caller = {
        credential: { tokenHash: money.wallet.tokenHash(body.cashu_token) },
        method: 'bearer_token',
        ...(unit !== undefined ? { unit } : {}),
      };
      await countKeyRequest(ctx, services, caller.credential);
    } else {
      caller = await callerOf(ctx, money);
    }
    const info = await loadKey(ctx, services, money, caller.credential, { allowExpired: true });
    return { json: await withdraw(money, caller.credential, 'all', 'refund', info, undefined, caller.unit) };
  });

  route(router, 'POST', '/v1/balance/child-key', async (ctx, body) => {
    const money = requireMoney(services);
    const count = body.count ?? 0;
    if (!Number.isInteger(count) || count < 1 || count > 50) {
      throw new GatewayError('invalid_request', { message: 'count must be an integer from 1 to 50' });
    }
    if (!RESETS.includes(body.balance_limit_reset ?? null)) {
      throw new GatewayError('invalid_request', {
        message: 'balance_limit_reset must be daily, weekly or monthly',
      });
    }
    const caller = await callerOf(ctx, money);
    await loadKey(ctx, services, money, caller.credential);
    const r = await money.ledger.createChildKeys({
      parent: caller.credential,
      count,
      feePerKeyMsat: services.config.childKeyCostMsats,
      balanceLimitMsat: body.balance_limit ?? null,
      balanceLimitReset: body.balance_limit_reset ?? null,
      validityDateMs: body.validity_date == null ? null : body.validity_date * 1000,
    });
    if (!r.ok) throw ledgerRefusalToError(r);
    return {
      status: 201,
      json: {
        api_keys: r.apiKeys,
        count: r.apiKeys.length,
        cost_msats: r.feeMsat,
        cost_sats: Math.ceil(r.feeMsat / 1000),
        parent_balance: r.parentBalanceMsat,
        parent_balance_sats: Math.floor(r.parentBalanceMsat / 1000),
      },
    };
  });
};
