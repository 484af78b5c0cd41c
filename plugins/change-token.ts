import { payOut } from '../core/account/pay-out.js';
import { AUTH, createLocalKey, type RequestContext } from '../core/context.js';
import type { GatewayError } from '../core/errors.js';
import type { Plugin, PluginFactory } from '../core/plugin.js';
import type { CashuUnit } from '../core/wallet/types.js';
import { CREDENTIAL, needLedger, noOptions, PRICED_CALL } from './paid-state.js';

/** Set when the change went out in the response head (cost fixed at admission): nothing more at the end. */
const CHANGE_IN_HEAD = createLocalKey<true>('change-token.head');

/**
 * The change-token stage: for `X-Cashu` calls (stateless pay-per-call), returns what is left of the token's
 * value after the call as a fresh eCash token from the primary mint. NEVER LOSES MONEY: the remainder is
 * moved out of the token's hash identity only by a committed withdrawal hold, and any failure aborts the
 * hold, leaving it there — the original token then still works as a bearer credential or via
 * /v1/balance/refund.
 *
 * - Change = the whole available balance of the token's identity after settlement, paid out through the
 *   one pay-out step (core/account/pay-out.ts: hold → send → commit; the token is taken back on any failure).
 * - Non-stream: in the `X-Cashu` response header. When the call's cost was fixed at admission (flat pricing,
 *   audio, speech, the catch-all) the change is made as soon as the upstream answered 2xx/3xx and goes in the
 *   head, so a binary answer (speech) streams through unbuffered; otherwise (metered JSON) the body is held
 *   until the charge is known, as the meter holds it anyway.
 * - Streams: no buffering. The stream starts at once and the change arrives at its end as an SSE comment
 *   line `: x-cashu <token>` right before `data: [DONE]` (SSE clients ignore comments).
 * - Stateless: whatever the call did not spend comes back. An upstream failure or error status (reservation
 *   released) and a 402 (nothing reserved) return the whole token value in `X-Cashu` with the error; on a
 *   402 the NUT-18 request for the shortfall is in `X-Cashu-Payment-Request`.
 * - Units: the change is made in the unit of the paying token. sat tokens get whole sats (rounded DOWN; the
 *   sub-sat remainder stays on the token's identity); msat tokens get exact change.
 */

export const changeToken: PluginFactory = (options, services): Plugin => {
  noOptions('change-token', options);
  const ledger = needLedger('change-token', services);
  const wallet = services.wallet;
  const log = services.log;

  function isPerCall(ctx: RequestContext): boolean {
    return (
      wallet !== undefined && ctx.local(AUTH)?.method === 'x_cashu' && ctx.local(CREDENTIAL) !== undefined
    );
  }

  function unitOf(ctx: RequestContext): CashuUnit {
    const token = ctx.headers['x-cashu'];
    try {
      return token ? wallet!.decodeToken(token.trim()).unit : 'sat';
    } catch {
      return 'sat';
    }
  }

  /** Moves the identity's remaining balance into a fresh token; undefined when there is none to give. */
  async function makeChange(ctx: RequestContext): Promise<string | undefined> {
    const credential = ctx.local(CREDENTIAL)!;
    const info = await ledger.getKeyInfo(credential);
    if (!info) return undefined;
    const unit = unitOf(ctx);
    const step = unit === 'sat' ? 1000 : 1;
    const amount = Math.floor(info.availableMsat / step) * step;
    if (amount <= 0) return undefined;
    // The one pay-out step: the token is handed out and debited, or taken back and not debited.
    const r = await payOut(
      { ledger, wallet: wallet! },
      { credential, amountMsat: amount, kind: 'refund', unit },
    );
    return r.token;
  }

  async function tryChange(ctx: RequestContext): Promise<string | undefined> {
    try {
      return await makeChange(ctx);
    } catch (err) {
      log.warn(
        { requestId: ctx.requestId, code: (err as GatewayError).code, err: (err as Error).message },
        'change not made; the remainder stays on the token identity (usable as bearer or refundable)',
      );
      return undefined;
    }
  }

  return {
    name: 'change-token',
    async onResponseHead(ctx, head) {
      if (!isPerCall(ctx) || ctx.responseIsSse) return;
      if (head.status < 400 && ctx.local(PRICED_CALL)?.exactMsat !== undefined) {
        // What is left after the reservation (exactly the cost) is the change: known now.
        const token = await tryChange(ctx);
        if (token) head.headers['X-Cashu'] = token;
        ctx.setLocal(CHANGE_IN_HEAD, true);
        return;
      }
      ctx.bufferResponse = true;
    },
    async onResponseEnd(ctx) {
      if (!isPerCall(ctx) || ctx.local(CHANGE_IN_HEAD)) return;
      const token = await tryChange(ctx);
      if (!token) return;
      if (ctx.responseIsSse) ctx.appendToBody(`: x-cashu ${token}\n\n`);
      else ctx.response.headers['X-Cashu'] = token;
    },
    async onError(ctx, _err) {
      if (!isPerCall(ctx)) return;
      // Mid-stream the head is gone; the remainder stays on the identity.
      if (ctx.upstream !== undefined && !ctx.bufferResponse) return;
      const token = await tryChange(ctx);
      if (!token) return;
      ctx.response.headers['X-Cashu'] = token;
    },
  };
};
