import { payOut } from '../core/account/pay-out.js';
import { AUTH, createLocalKey, type RequestContext } from '../core/context.js';
import type { GatewayError } from '../core/errors.js';
import type { Plugin, PluginFactory, PluginNeeds } from '../core/plugin.js';
import { CREDENTIAL, noOptions, PRICED_CALL, perCallUnit, unitStep } from './paid-state.js';

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
 * - Units: the change is made in the unit of the paying token, and the call was charged in whole units of it
 *   (CHARGE_STEP, plugins/paid-state.ts): the change is the whole remainder, nothing stays behind.
 * - Change that cannot be made (mint down, store away): the answer says so in `X-Cashu-Change` (streams: the
 *   SSE comment `: x-cashu-change …` before `data: [DONE]`), with the amount and how to claim it — the same
 *   token at POST /v1/balance/refund. The pay-out step takes back whatever it began, retrying in the
 *   background (core/account/pay-out.ts), so the remainder is back on the token's identity, claimable.
 */

/**
 * `X-Cashu-Change` (an RFC 8941 item with parameters): the change was not made; claim it by sending the same
 * token to POST /v1/balance/refund. `msat` is the amount, when the store said it.
 */
export function pendingChange(msat: number | undefined): string {
  return `pending;${msat === undefined ? '' : `msat=${msat};`}claim="POST /v1/balance/refund"`;
}

/** The services change-token uses: plugins/index.ts hands it these alone (a required one missing stops the start). */
export const changeTokenNeeds = {
  required: ['ledger', 'log'],
  optional: ['wallet'],
} as const satisfies PluginNeeds;

export const changeToken: PluginFactory<typeof changeTokenNeeds> = (options, services): Plugin => {
  noOptions('change-token', options);
  const { ledger } = services;
  const wallet = services.wallet;
  const log = services.log;

  function isPerCall(ctx: RequestContext): boolean {
    return (
      wallet !== undefined && ctx.local(AUTH)?.method === 'x_cashu' && ctx.local(CREDENTIAL) !== undefined
    );
  }

  /**
   * Moves the identity's remaining balance into a fresh token: `token`, or `pendingMsat` when it could not be
   * made (the amount stays on the identity), or nothing when there is no change to give.
   */
  async function tryChange(ctx: RequestContext): Promise<Change> {
    const credential = ctx.local(CREDENTIAL)!;
    let amount: number | undefined;
    try {
      const info = await ledger.getKeyInfo(credential);
      if (!info) return {};
      const unit = perCallUnit(ctx, wallet);
      // Whole units (the call was charged in them, so this is all of it).
      amount = Math.floor(info.availableMsat / unitStep(unit)) * unitStep(unit);
      if (amount <= 0) return {};
      // The one pay-out step: the token is handed out and debited, or taken back and not debited.
      const r = await payOut(
        { ledger, wallet: wallet! },
        { credential, amountMsat: amount, kind: 'refund', unit },
      );
      return { token: r.token };
    } catch (err) {
      log.warn(
        { requestId: ctx.requestId, code: (err as GatewayError).code, err: (err as Error).message },
        'change not made; it stays on the token identity (X-Cashu-Change: pending, refundable)',
      );
      // `amount` is unknown when the store did not say what is left: the claim covers whatever is there.
      return { pending: true, ...(amount !== undefined ? { pendingMsat: amount } : {}) };
    }
  }

  /** Puts the change (or its pending notice) in the answer's head. */
  function changeHeaders(headers: Record<string, string | string[]>, change: Change): void {
    if (change.token !== undefined) headers['X-Cashu'] = change.token;
    else if (change.pending) headers['X-Cashu-Change'] = pendingChange(change.pendingMsat);
  }

  return {
    name: 'change-token',
    async onResponseHead(ctx, head) {
      // A client gone (its answer read on only to charge it) gets no change now; the rest stays on the identity.
      if (!isPerCall(ctx) || ctx.responseIsSse || ctx.clientAborted) return;
      if (head.status < 400 && ctx.local(PRICED_CALL)?.exactMsat !== undefined) {
        // What is left after the reservation (exactly the cost) is the change: known now.
        changeHeaders(head.headers, await tryChange(ctx));
        ctx.setLocal(CHANGE_IN_HEAD, true);
        return;
      }
      ctx.bufferResponse = true;
    },
    async onResponseEnd(ctx) {
      if (!isPerCall(ctx) || ctx.local(CHANGE_IN_HEAD)) return;
      const change = await tryChange(ctx);
      if (ctx.responseIsSse) {
        if (change.token !== undefined) ctx.appendToBody(`: x-cashu ${change.token}\n\n`);
        else if (change.pending) {
          ctx.appendToBody(`: x-cashu-change ${pendingChange(change.pendingMsat)}\n\n`);
        }
      } else changeHeaders(ctx.response.headers, change);
    },
    async onError(ctx, _err) {
      if (!isPerCall(ctx)) return;
      // Mid-stream the head is gone; the remainder stays on the identity.
      if (ctx.headWritten) return;
      changeHeaders(ctx.response.headers, await tryChange(ctx));
    },
  };
};

/** What tryChange made: a token, or `pending` (with the msats left on the identity when known), or neither. */
interface Change {
  token?: string;
  pending?: true;
  pendingMsat?: number;
}
