import { creditToken } from '../core/account/credit-token.js';
import { auditKey } from '../core/audit/audit-log.js';
import { parseCredential } from '../core/auth/credentials.js';
import { clientAddress, compileIpList } from '../core/auth/ip-match.js';
import { AUTH, createLocalKey, type RequestContext } from '../core/context.js';
import type { DoorCaller } from '../core/doors/types.js';
import { GatewayError } from '../core/errors.js';
import { limitAnonymous } from '../core/limits/request-limits.js';
import { lazyLru } from '../core/lru.js';
import type { HookStatus, Plugin, PluginFactory, PluginNeeds } from '../core/plugin.js';
import type { CashuUnit } from '../core/wallet/types.js';
import { CREDENTIAL, DOOR_OFFER, noOptions, TOKEN_UNIT, UNPAID } from './paid-state.js';

/**
 * The auth stage: who pays for this call. FAILS CLOSED: no credential, or one that cannot be checked, ends
 * the request; it never lets a call through unidentified.
 *
 * - Client IP: the peer address; `X-Forwarded-For` only when the peer is in TRUSTED_PROXIES.
 * - No credential → 401 `missing_credentials`, with a NUT-18 payment request (`creqA…`) in the `X-Cashu`
 *   response header (NUT-24) when the node has a wallet, so Cashu-aware clients can pay.
 * - `Bearer sk-…` → the API key is the ledger credential; whether it exists, has expired, may use the model
 *   is checked by the reserve stage's ONE admission round trip (not here: no extra round trip).
 * - `Bearer cashuA…|cashuB…` → the token's hash is the identity. The first use redeems the token at its mint
 *   and credits the hash identity through the one credit step (core/account/credit-token.ts; both idempotent
 *   by hash): racing first uses redeem once and credit once. Hashes credited by this process are remembered in
 *   an LRU, so later uses cost no extra round trip.
 * - `X-Cashu: <token>` → the same redeem + credit; the change-token stage returns
 *   the rest of the token's value as change.
 * - `Authorization: L402 <macaroon>:<preimage>` / `Payment <credential>` (core/doors/) → the invoice's identity,
 *   credited on first use; an MPP-paid answer carries `Payment-Receipt`. A short balance is offered a fresh
 *   invoice with the 402 (reserve stage).
 * - No credential and a Lightning door offered (PAYMENT_DOORS) → marked unpaid: the reserve stage prices the call
 *   and answers 402 with every door's offer for its bound (X-Cashu request, L402 and Payment challenges).
 */

/** The Lightning door that paid this call (an MPP answer carries its Payment-Receipt). */
const DOOR_CALLER = createLocalKey<DoorCaller>('auth.doorCaller');

/** Token hashes this process has seen credited (a hit skips receive + credit). */
const CREDITED_CACHE_SIZE = 100_000;

/** The services auth uses: plugins/index.ts hands it these alone (a required one missing stops the start). */
export const authNeeds = {
  required: ['ledger', 'config', 'log'],
  optional: ['wallet', 'doors', 'limiter'],
} as const satisfies PluginNeeds;

export const auth: PluginFactory<typeof authNeeds> = (options, services): Plugin => {
  noOptions('auth', options);
  const { ledger } = services;
  const wallet = services.wallet;
  const trusted = compileIpList(services.config.trustedProxies);
  const credited = lazyLru<string, true>(CREDITED_CACHE_SIZE);

  const doors = services.doors;

  /** The doors' offer for a bound, or null when the mint gives no quote now (logged, never thrown). */
  function offerFor(ctx: RequestContext) {
    return async (amountMsat: number) => {
      if (!doors) return null;
      try {
        return await doors.offer(amountMsat, ctx.model);
      } catch (err) {
        services.log.warn(
          { code: (err as GatewayError).code ?? 'error' },
          'no Lightning offer for an unpaid call',
        );
        return null;
      }
    };
  }

  /** An L402 / MPP credential: the invoice's identity (credited on its first use). */
  async function identifyDoor(ctx: RequestContext, authorization: string): Promise<HookStatus | undefined> {
    const caller = doors ? await doors.identify(authorization, { model: ctx.model }) : null;
    if (caller === null) {
      throw new GatewayError('invalid_payment_credential', {
        message: 'This node offers no such payment door',
      });
    }
    // An MPP session's topUp or close is answered by the door itself: no call is made.
    if (caller.answer) return ctx.respond(caller.answer.status, caller.answer.body, caller.answer.headers);
    const credential = { tokenHash: caller.tokenHash };
    ctx.setLocal(CREDENTIAL, credential);
    ctx.setLocal(AUTH, { accountId: '', keyId: '', method: caller.door, isChild: false });
    ctx.setLocal(DOOR_CALLER, caller);
    ctx.setLocal(DOOR_OFFER, offerFor(ctx));
    auditKey(ctx, credential);
    return undefined;
  }

  function missing(): GatewayError {
    if (!wallet || (doors && !doors.offers('cashu'))) return new GatewayError('missing_credentials');
    return new GatewayError('missing_credentials', {
      headers: {
        'X-Cashu': wallet.createPaymentRequest({ description: 'Pay per call with an eCash token (X-Cashu)' }),
      },
    });
  }

  /** Redeems a token (first use) and credits its hash identity; returns the hash (the account's identity). */
  async function redeem(token: string): Promise<{ tokenHash: string; unit: CashuUnit }> {
    if (!wallet) {
      throw new GatewayError('invalid_api_key', { message: 'eCash payment is not enabled on this node' });
    }
    const decoded = wallet.decodeToken(token); // invalid_token / mint_not_trusted / unsupported_unit
    const { tokenHash, unit } = decoded;
    if (credited.has(tokenHash)) return { tokenHash, unit };
    await creditToken({ ledger, wallet }, token, { kind: 'token' });
    credited.set(tokenHash, true);
    return { tokenHash, unit };
  }

  /**
   * A token credential (bearer or X-Cashu): redeemed and credited on first use; its hash is the identity. Its
   * unit is kept for the reserve stage: the call is charged in whole units of it (CHARGE_STEP).
   */
  async function identifyToken(ctx: RequestContext, token: string): Promise<void> {
    const { tokenHash, unit } = await redeem(token);
    ctx.setLocal(CREDENTIAL, { tokenHash });
    ctx.setLocal(TOKEN_UNIT, unit);
    auditKey(ctx, { tokenHash });
  }

  return {
    name: 'auth',
    onRequest(ctx) {
      ctx.clientIp = clientAddress(ctx.clientIp, ctx.headers['x-forwarded-for'], trusted);
      const cred = parseCredential({
        method: ctx.method,
        headers: ctx.headers,
        queryApiKey:
          ctx.method === 'GET' && ctx.rawQuery.includes('api_key') ? ctx.query.get('api_key') : null,
      });
      // No usable credential: limited per client IP (RATE_LIMIT_IP_*), then 402 with the doors' offers (the
      // reserve stage prices the call), or 401 when no Lightning door is offered.
      if (!cred)
        return limitAnonymous(ctx, services).then(() => {
          if (!doors?.lightning) throw missing();
          ctx.setLocal(UNPAID, true);
          ctx.setLocal(DOOR_OFFER, offerFor(ctx));
          return undefined;
        });
      if (cred.kind === 'door') return identifyDoor(ctx, cred.authorization);
      // Filled completely by the reserve stage once the ledger has identified the account.
      ctx.setLocal(AUTH, { accountId: '', keyId: '', method: cred.kind, isChild: false });
      if (cred.kind === 'api_key') {
        const credential = { apiKey: cred.apiKey };
        ctx.setLocal(CREDENTIAL, credential);
        auditKey(ctx, credential);
        return undefined;
      }
      return identifyToken(ctx, cred.token).then(() => undefined);
    },
    onResponseHead(ctx, head) {
      const caller = ctx.local(DOOR_CALLER);
      // MPP: a paid answer carries the Payment-Receipt of the invoice that paid it.
      if (caller?.door === 'mpp' && head.status < 400 && doors)
        head.headers['Payment-Receipt'] = doors.receipt(caller);
    },
  };
};
