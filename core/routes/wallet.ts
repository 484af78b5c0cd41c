import ipaddr from 'ipaddr.js';
import { closeKey } from '../account/close-key.js';
import { creditToken } from '../account/credit-token.js';
import type { LightningAddresses } from '../account/lightning-address.js';
import { refundToLightning } from '../account/lightning-refund.js';
import { HOLD_EXPIRY_MS } from '../account/pay-out.js';
import { payoutInProgressError } from '../account/payout-guard.js';
import { auditKey } from '../audit/audit-log.js';
import { ownerRecord } from '../audit/records.js';
import type { RequestContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { type RouteHandler, type RouteModule, route } from '../http/router.js';
import { ledgerRefusalToError } from '../ledger/errors.js';
import type { KeyInfo, KeyUpdate, Transaction } from '../ledger/types.js';
import { limitAnonymous } from '../limits/request-limits.js';
import type { Services } from '../service-types.js';
import type { ReceiveReceipt } from '../wallet/types.js';
import { callerOf, expiryOf, loadKey, requireMoney, withdraw } from './account.js';
import { payoutView } from './admin-views.js';

/**
 * The wallet endpoints (docs/endpoints.md, shapes in openapi/openapi.yaml; request bodies are validated by
 * the transport against that document before a handler runs). Amounts are msats unless a field says sats.
 *
 * - POST /v1/wallet/create (201): redeem the token, create a key; a retry with the same token returns the
 *   same key (the ledger derives it from the token hash).
 * - GET /v1/wallet/ (and /v1/wallet), GET /v1/wallet/balance, GET /v1/wallet/transactions.
 * - POST /v1/wallet/topup: token in the body or the `cashu_token` query parameter (exactly one).
 * - POST /v1/wallet/withdraw, POST /v1/wallet/refund: hold → mint a token → commit (see account.ts); the refund
 *   with `{"to": "refund_address"}`: hold → invoice from the key's Lightning address → melt → commit
 *   (core/account/lightning-refund.ts).
 * - POST /v1/wallet/create/subkey (201), POST /v1/wallet/update (allowed IPs, refund address).
 * - Alerts and webhooks: routes/webhooks.ts. Lightning deposits: routes/lightning.ts.
 */

/** The Lightning address resolver, or 503 in a set-up built without one. */
function lightningAddresses(services: Services): LightningAddresses {
  if (services.lightningAddresses === undefined) {
    throw new GatewayError('service_unavailable', { message: 'This node resolves no Lightning addresses' });
  }
  return services.lightningAddresses;
}

/** ISO 8601 of a ms instant, or null. */
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** What a redeemed token yielded and cost (a foreign-mint swap names the mint it came from). */
function receiptView(r: ReceiveReceipt) {
  return {
    msats: r.amountMsat,
    fee_msats: r.feeMsat,
    ...(r.swappedFrom ? { swapped_from: r.swappedFrom } : {}),
  };
}

function accountView(info: KeyInfo) {
  const { key, usage, account } = info;
  return {
    key_id: key.keyId,
    balance: account.balanceMsat,
    reserved: account.reservedMsat,
    available: info.availableMsat,
    total_deposited: account.depositedMsat,
    total_spent: key.isChild ? usage.totalSpentMsat : account.spentMsat,
    total_requests: key.isChild ? usage.totalRequests : account.requests,
    created_at: iso(key.createdAtMs),
    expires_at: iso(expiryOf(info)),
    is_child: key.isChild,
  };
}

function balanceView(info: KeyInfo) {
  const { key, usage, account } = info;
  return {
    balance: account.balanceMsat,
    reserved: account.reservedMsat,
    total_deposited: account.depositedMsat,
    total_spent: key.isChild ? usage.totalSpentMsat : account.spentMsat,
    last_used: iso(usage.lastUsedMs),
    created_at: iso(key.createdAtMs),
    expires_at: iso(expiryOf(info)),
    key_info: { name: key.name, key_id: key.keyId },
  };
}

function transactionView(t: Transaction) {
  return {
    id: t.id,
    type: t.type,
    amount: t.amountMsat,
    balance_after: t.balanceAfterMsat,
    description: t.description,
    timestamp: new Date(t.timestampMs).toISOString(),
  };
}

/** A query integer in [min, max], or `def` when absent; 400 otherwise. */
/** The `before` cursor of the audit readers (a record id: digits, or a Redis stream id). */
export function auditCursor(ctx: RequestContext): string | undefined {
  const raw = ctx.query.get('before');
  if (raw === null) return undefined;
  // SQLite ids are `<time>-<row>`; Redis ids are `<time>-<stream id>`, tagged with the account for account
  // records (core/audit/records.ts AUDIT_ORDER_WINDOW_MS); the readers' ids of before still page.
  if (!/^\d{1,20}(?:-\d{1,20}){0,2}(?:-[0-9A-Za-z]{1,40})?$/.test(raw)) {
    throw new GatewayError('validation_failed', {
      message: 'before: must be a record id from a previous page',
    });
  }
  return raw;
}

export function queryInt(ctx: RequestContext, name: string, def: number, min: number, max: number): number {
  const raw = ctx.query.get(name);
  if (raw === null || raw === '') return def;
  const v = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(v) || v < min || v > max) {
    throw new GatewayError('invalid_request', {
      message: `${name} must be an integer from ${min} to ${max}`,
      details: { parameter: name },
    });
  }
  return v;
}

/** A strictly written address: dotted four-part decimal IPv4 (no octal, hex or short forms) or IPv6. */
function strictAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (text.includes(':')) return ipaddr.IPv6.isValid(text) ? ipaddr.process(text) : undefined;
  return ipaddr.IPv4.isValidFourPartDecimal(text) ? ipaddr.IPv4.parse(text) : undefined;
}

/** Canonical allow-list entries (ipaddr.js): single IPv4/IPv6 addresses and CIDR ranges. Throws 400. */
export function normaliseAllowedIps(entries: readonly string[]): string[] {
  const out: string[] = [];
  for (const entry of entries) {
    const slash = entry.indexOf('/');
    const addr = strictAddress(slash === -1 ? entry : entry.slice(0, slash));
    const bitsText = slash === -1 ? undefined : entry.slice(slash + 1);
    const max = addr?.kind() === 'ipv4' ? 32 : 128;
    const bits = bitsText === undefined ? max : /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : -1;
    if (addr === undefined || bits < 0 || bits > max) {
      throw new GatewayError('invalid_request', {
        message: `Not an IP address or CIDR range: ${JSON.stringify(entry.slice(0, 60))}`,
        details: { allowed_ips: entry.slice(0, 60) },
      });
    }
    out.push(bitsText === undefined ? addr.toString() : `${addr.toString()}/${bits}`);
  }
  return [...new Set(out)];
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a route module: one short handler per /v1/wallet route, registered in order; the count is the route table
export const walletRoutes: RouteModule = (router, services: Services) => {
  route(router, 'POST', '/v1/wallet/create', async (ctx, body) => {
    const money = requireMoney(services);
    await limitAnonymous(ctx, services);
    const token = body.cashu_token;
    const r = await creditToken(money, token, { kind: 'new-key' });
    auditKey(ctx, { apiKey: r.apiKey! });
    return {
      status: 201,
      json: {
        api_key: r.apiKey,
        balance: r.balanceMsat,
        created_at: iso(r.key!.createdAtMs),
        key_id: r.key!.keyId,
        ...receiptView(r.receipt),
      },
    };
  });

  const account: RouteHandler = async (ctx) => {
    const money = requireMoney(services);
    const caller = await callerOf(ctx, money);
    return {
      json: accountView(await loadKey(ctx, services, money, caller.credential, { allowExpired: true })),
    };
  };
  route(router, 'GET', '/v1/wallet/', account);
  route(router, 'GET', '/v1/wallet', account);

  // The owner closes the key: disable, pay every whole sat out, delete (core/account/close-key.ts).
  route(router, 'DELETE', '/v1/wallet/', async (ctx) => {
    const money = requireMoney(services);
    const caller = await callerOf(ctx, money);
    const info = await loadKey(ctx, services, money, caller.credential, { allowExpired: true });
    if (info.key.isChild) throw new GatewayError('child_key_forbidden');
    const r = await closeKey(money, {
      target: { credential: caller.credential },
      self: caller.credential,
      refund: true,
      keepDisabled: false,
      expiresInMs: HOLD_EXPIRY_MS,
    });
    return {
      json: {
        key_id: r.key.keyId,
        deleted: r.deleted,
        refund: r.refund === null ? null : payoutView(r.refund),
        left_msats: r.leftMsat,
      },
    };
  });

  route(router, 'GET', '/v1/wallet/balance', async (ctx) => {
    const money = requireMoney(services);
    const caller = await callerOf(ctx, money);
    return {
      json: balanceView(await loadKey(ctx, services, money, caller.credential, { allowExpired: true })),
    };
  });

  route(router, 'GET', '/v1/wallet/transactions', async (ctx) => {
    const money = requireMoney(services);
    const limit = queryInt(ctx, 'limit', 20, 1, 100);
    const offset = queryInt(ctx, 'offset', 0, 0, 1_000_000);
    const caller = await callerOf(ctx, money);
    await loadKey(ctx, services, money, caller.credential, { allowExpired: true });
    const page = await money.ledger.listTransactions(caller.credential, { limit, offset });
    if (page === null) throw new GatewayError('invalid_api_key');
    return {
      json: {
        transactions: page.transactions.map(transactionView),
        has_more: page.hasMore,
        total: page.total,
      },
    };
  });

  // The caller's audit records, newest first (docs/endpoints.md, "Audit log"): a parent key sees its
  // account's records (its children's too), a child key only its own.
  route(router, 'GET', '/v1/wallet/audit', async (ctx) => {
    const money = requireMoney(services);
    const limit = queryInt(ctx, 'limit', 20, 1, 100);
    const before = auditCursor(ctx);
    const caller = await callerOf(ctx, money);
    const info = await loadKey(ctx, services, money, caller.credential, { allowExpired: true });
    if (services.audit === undefined) throw new GatewayError('service_unavailable');
    const page = await services.audit
      .list({
        account: info.key.accountId,
        ...(info.key.isChild ? { keyId: info.key.keyId } : {}),
        ...(before !== undefined ? { before } : {}),
        limit,
      })
      .catch((err: unknown) => {
        throw new GatewayError('store_unavailable', { cause: err });
      });
    // What the operator paid another node for a call is not the key owner's business.
    return { json: { ...page, data: page.data.map(ownerRecord) } };
  });

  route(router, 'POST', '/v1/wallet/topup', async (ctx, body) => {
    const money = requireMoney(services);
    const inBody = body?.cashu_token;
    const inQuery = ctx.query.get('cashu_token');
    if ((inBody === undefined) === (inQuery === null || inQuery === '')) {
      throw new GatewayError('invalid_request', {
        message: 'Send the token either as body field cashu_token or as query parameter cashu_token',
      });
    }
    const token = inBody ?? (inQuery as string);
    const caller = await callerOf(ctx, money);
    const info = await loadKey(ctx, services, money, caller.credential);
    // Checked before redeeming: a child key's top-up would strand the token's value.
    if (info.key.isChild) throw new GatewayError('child_key_forbidden');
    const r = await creditToken(money, token, { kind: 'account', credential: caller.credential });
    const added = r.receipt.amountMsat;
    return {
      json: {
        old_balance: r.balanceMsat - added,
        added_amount: added,
        new_balance: r.balanceMsat,
        transaction_id: r.transactionId,
        ...receiptView(r.receipt),
      },
    };
  });

  route(router, 'POST', '/v1/wallet/withdraw', async (ctx, body) => {
    const money = requireMoney(services);
    const caller = await callerOf(ctx, money);
    const info = await loadKey(ctx, services, money, caller.credential, { allowExpired: true });
    const amount = typeof body?.amount === 'number' ? body.amount : 'all';
    const mint = body?.mint ?? undefined;
    return { json: await withdraw(money, caller.credential, amount, 'withdrawal', info, mint) };
  });

  route(router, 'POST', '/v1/wallet/refund', async (ctx, body) => {
    const money = requireMoney(services);
    const caller = await callerOf(ctx, money);
    const info = await loadKey(ctx, services, money, caller.credential, { allowExpired: true });
    if (body?.to !== 'refund_address') {
      return {
        json: await withdraw(money, caller.credential, 'all', 'refund', info, undefined, caller.unit),
      };
    }
    // To the key's Lightning address, through the mint (core/account/lightning-refund.ts).
    if (info.key.isChild) throw new GatewayError('child_key_forbidden');
    if (info.key.refundAddress === null) throw new GatewayError('refund_address_missing');
    if (info.account.payout) throw await payoutInProgressError(money.wallet, info.account.payout);
    const r = await refundToLightning(money, lightningAddresses(services), {
      credential: caller.credential,
      address: info.key.refundAddress,
    });
    return {
      json: {
        refund_address: r.address,
        amount_msats: r.amountMsat,
        fee_msats: r.feeMsat,
        fee_reserve_msats: r.feeReserveMsat,
        balance: r.balanceMsat,
        payment_preimage: r.preimage,
        mint: r.mint,
      },
    };
  });

  route(router, 'POST', '/v1/wallet/create/subkey', async (ctx, body = {}) => {
    const money = requireMoney(services);
    const caller = await callerOf(ctx, money);
    await loadKey(ctx, services, money, caller.credential);
    const now = Date.now();
    const hours = body.expires_in_hours ?? null;
    const allowedModels = body.allowed_models ?? null;
    const r = await money.ledger.createChildKeys({
      parent: caller.credential,
      count: 1,
      feePerKeyMsat: services.config.childKeyCostMsats,
      name: body.name ?? null,
      balanceLimitMsat: body.balance_limit ?? null,
      balanceLimitReset: null,
      expiresAtMs: hours === null ? null : now + hours * 3_600_000,
      allowedModels,
      now,
    });
    if (!r.ok) throw ledgerRefusalToError(r);
    const key = r.keys[0]!;
    return {
      status: 201,
      json: {
        api_key: r.apiKeys[0],
        key_id: key.keyId,
        name: key.name,
        balance_limit: key.balanceLimitMsat,
        allowed_models: key.allowedModels,
        expires_at: iso(key.expiresAtMs),
        cost_msats: r.feeMsat,
        parent_balance: r.parentBalanceMsat,
      },
    };
  });

  route(router, 'POST', '/v1/wallet/update', async (ctx, body) => {
    const money = requireMoney(services);
    const update: KeyUpdate = {};
    if (body.allowed_ips !== undefined) {
      const allowedIps = normaliseAllowedIps(body.allowed_ips);
      update.allowedIps = allowedIps.length === 0 ? null : allowedIps;
    }
    const caller = await callerOf(ctx, money);
    const info = await loadKey(ctx, services, money, caller.credential);
    if (body.refund_address !== undefined) {
      if (body.refund_address !== null && info.key.isChild) throw new GatewayError('child_key_forbidden');
      // Checked by resolving its LNURL-pay endpoint now, under the SSRF rules: a bad address is refused here,
      // not found out when the money should leave.
      update.refundAddress =
        body.refund_address === null
          ? null
          : (await lightningAddresses(services).resolve(body.refund_address)).address;
    }
    const r = await money.ledger.updateKey({ credential: caller.credential }, update);
    if (!r.ok) throw ledgerRefusalToError(r);
    // An expiring key with an address is swept there when it expires (core/account/refund-sweep.ts).
    if (update.refundAddress !== undefined) await services.refundSweep?.schedule(r.key);
    return {
      json: {
        key_id: r.key.keyId,
        allowed_ips: r.key.allowedIps ?? [],
        refund_address: r.key.refundAddress,
      },
    };
  });
};
