import { decodePaymentRequest } from '@cashu/cashu-ts';
import { operatorSurplus } from '../account/operator-withdrawal.js';
import { BackgroundRetry } from '../background-retry.js';
import { GatewayError } from '../errors.js';
import type { Ledger } from '../ledger/types.js';
import type { Logger } from '../log.js';
import { promptTokensUpperBound } from '../metering/prompt-bound.js';
import { callerMaxTokens } from '../metering/request-bound.js';
import { upstreamChangeRetriesTotal, upstreamLostMsatsTotal, upstreamPaidMsatsTotal } from '../metrics.js';
import type { UpstreamResponse } from '../upstream/upstream-response.js';
import { isCashuUnit, readTokenMeta, toMsat } from '../wallet/token-codec.js';
import type { WalletService } from '../wallet/types.js';
import { ChangeCommentFilter, changeHeader, nodeAnswer, pendingHeader } from './node-answer.js';
import { type NodePrice, NodePrices } from './node-prices.js';
import type { NodeCall, NodeCallPayer, NodeCallPayment, Provider } from './types.js';

export type { NodePrice } from './node-prices.js';
/** The SSE filter of a node's answer (node-answer.ts), where the tests of this module reach it. */
export { ChangeCommentFilter };

/**
 * Paying another Cashu-priced node (a providers-file entry with `"payment": "cashu"`, docs/providers.md): each
 * call routed there carries an `X-Cashu` token from the operator's wallet, sized to the node's price, and the
 * node's change comes back into the wallet.
 *
 * - Price: the node's own `GET /v1/models` (`pricing.prompt_msats` / `completion_msats` per 1,000 tokens,
 *   `request_msats`, `context_length`; node-prices.ts), cached for PRICE_TTL_MS and refetched after a 402. A 402 with a NUT-18
 *   request for the shortfall gets one more token, larger by it (`shortfallMsat`, the relay; RAISE_LIMIT). The token covers
 *   the node's reservation bound, computed as the reserve stage computes one: the safe prompt-token bound +
 *   `max_tokens` (or, unset, the node's context length minus that bound) at the node's rates, plus its request
 *   price, rounded up to whole sats. More than the node charges is fine (the rest comes back as change).
 * - Money: one path. The token is made by the wallet's send (`wallet.send`, the swap the change tokens use);
 *   change — or the whole token a node refused — is redeemed by the wallet's receive (`wallet.receive`,
 *   idempotent by the token's hash). Nothing is sent beyond the operator surplus (proofs held minus user
 *   balances, `operatorSurplus`): else 503 `operator_wallet_insufficient`, before anything reached the node.
 *   Check and send are serialised in this process, so two calls cannot both spend the same surplus here;
 *   several processes can each pass the check at the same moment (bounded by one call's bound each).
 * - Change: `X-Cashu` in the answer's head, or the SSE comment `: x-cashu <token>` before `data: [DONE]`
 *   (plugins/change-token.ts is what a node sends). Both are removed before the answer is relayed. Change that
 *   cannot be redeemed now (mint away) is retried in the background and counted
 *   (`gateway_upstream_change_retries_total`).
 * - No change: the token is taken back (`wallet.receive` of our own token). Unspent (the node never redeemed
 *   it: refused, down) → back in the wallet, nothing paid. Spent and the answer complete → the node kept all
 *   of it (its price used the whole token). Spent and the answer broken (the node died after redeeming) →
 *   an operator loss, bounded by the token, counted (`gateway_upstream_lost_msats_total{reason="no_answer"}`)
 *   and logged; the user is charged by the settle rules only, never for the loss. Change this node cannot
 *   redeem (the node makes it at ITS primary mint, which must be one of ours) is lost too
 *   (`reason="change_unredeemable"`); change the node could not make (`X-Cashu-Change: pending`) waits there
 *   (`reason="change_pending"`).
 * - Cost: `gateway_upstream_paid_msats_total{provider}` (token minus change) and one `node paid` log line
 *   per call (request id, provider, sent, change, cost). Not in the user's `X-Node-Cost`: what the operator
 *   pays a supplier is not the buyer's business.
 */

/** A node's 402 may raise a call's token to at most this many times the first one (one raise per call). */
export const RAISE_LIMIT = 4;

/**
 * The most the node can charge for the call (msats): its reservation bound. Throws `upstream_error` when the
 * bound is unknown (no max_tokens and no context length for a token-metered call).
 */
export function nodeCallBoundMsat(price: NodePrice, call: NodeCall): number {
  const tokenMetered = /\/(chat\/completions|completions|responses|embeddings|messages)$/.test(call.path);
  if (!tokenMetered) return Math.ceil(price.requestMsat);
  const pb = promptTokensUpperBound(call.body, call.rawBytes);
  let maxTokens = 0;
  if (!call.path.endsWith('/embeddings')) {
    // The node bounds the call as this gateway does (core/pricing/completion-cap.ts): the largest max-tokens
    // field, else the model's whole context window.
    const set = callerMaxTokens(call.body);
    if (set !== undefined) maxTokens = set;
    else if (price.contextLength !== undefined && price.contextLength > 0) {
      maxTokens = price.contextLength;
    } else if (price.completionMsatPer1k > 0) {
      throw new GatewayError('upstream_error', {
        message:
          'The node that serves this model states no context length: set max_tokens so its price can be paid',
      });
    }
  }
  return Math.ceil(
    price.requestMsat + (pb * price.promptMsatPer1k) / 1000 + (maxTokens * price.completionMsatPer1k) / 1000,
  );
}

/**
 * Tokens paid to other nodes out of the operator surplus (proofs held minus what the ledger owes its users,
 * `operatorSurplus`): the one guard of every payment to a node — per-call tokens (`cashu`) and prepaid keys'
 * creations and top-ups (`cashu-balance`, node-accounts.ts). Check and send are serialised in this process, so
 * two payments cannot both spend the same surplus here.
 */
export class SurplusGate {
  private gate: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: Pick<NodePayerDeps, 'wallet' | 'ledger'>) {}

  /**
   * A token of `amountMsat` (whole sats) from the primary mint, only when the surplus covers it.
   * @throws GatewayError `operator_wallet_insufficient` (surplus or the primary mint's sat proofs too small),
   *   and the wallet's send errors.
   */
  send(provider: string, amountMsat: number): Promise<string> {
    const run = this.gate.then(() => this.sendWithinSurplus(provider, amountMsat));
    this.gate = run.catch(() => undefined);
    return run;
  }

  private async sendWithinSurplus(provider: string, amountMsat: number): Promise<string> {
    const { wallet, ledger } = this.deps;
    const s = await operatorSurplus({ wallet, ledger });
    const poor = () =>
      new GatewayError('operator_wallet_insufficient', {
        details: { provider, needed_msat: amountMsat, surplus_msat: Math.max(0, s.surplusMsat) },
      });
    if (s.surplusMsat < amountMsat) throw poor();
    try {
      return (await wallet.send(amountMsat, { unit: 'sat' })).token;
    } catch (err) {
      // The surplus is spread over mints/units and the primary's sat proofs do not cover the token.
      if ((err as GatewayError).code === 'service_unavailable') throw poor();
      throw err;
    }
  }
}

export interface NodePayerDeps {
  wallet: WalletService;
  ledger: Pick<Ledger, 'totalUserBalancesMsat'>;
  log: Logger;
  /** The background retry of change redemption (tests pass short delays). */
  retry?: BackgroundRetry;
  /** Prices fetch (tests may pass their own); default global fetch. Unused when `prices` is given. */
  fetch?: typeof fetch;
  /** The nodes' prices (shared with auto pricing); default a table of this payer's own. */
  prices?: NodePrices;
  /** The surplus guard (shared with the prepaid keys); default one of this payer's own. */
  surplus?: SurplusGate;
}

export class NodePayer implements NodeCallPayer {
  readonly retry: BackgroundRetry;
  readonly prices: NodePrices;
  private readonly surplus: SurplusGate;

  constructor(private readonly deps: NodePayerDeps) {
    this.retry = deps.retry ?? new BackgroundRetry(deps.log, 'node change redemption');
    this.prices =
      deps.prices ??
      new NodePrices({ log: deps.log, ...(deps.fetch !== undefined ? { fetch: deps.fetch } : {}) });
    this.surplus = deps.surplus ?? new SurplusGate(deps);
  }

  /** The node's price of `model` (its `/v1/models`, cached). @throws GatewayError `upstream_error`. */
  price(p: Provider, model: string | undefined): Promise<NodePrice> {
    return this.prices.price(p, model);
  }

  /** A node's prices changed (it answered 402): read them again. */
  forgetPrices(p: Provider): void {
    this.prices.stale(p);
  }

  /**
   * Makes the token that pays `call` at node `p`: within the operator surplus, from the primary mint in sats.
   * @throws GatewayError `operator_wallet_insufficient` (surplus or the primary mint's proofs too small),
   *   `upstream_error` (the node's price is unknown), and the wallet's send errors.
   */
  async pay(p: Provider, call: NodeCall, atLeastMsat = 0): Promise<NodePayment> {
    const bound = nodeCallBoundMsat(await this.price(p, call.model), call);
    const amountMsat = Math.max(1, Math.ceil(Math.max(bound, atLeastMsat) / 1000)) * 1000;
    const token = await this.surplus.send(p.name, amountMsat);
    return new NodePayment(this, p.name, token, amountMsat, call.requestId);
  }

  /**
   * Redeems `token` (change, or our own token back): `redeemed`, `spent` (someone — the node — redeemed it
   * first), `retrying` (a transient failure: the background retry goes on, and calls `late` with its outcome),
   * or `failed` (it will never be redeemed here, e.g. change from a mint this node does not trust).
   */
  async redeem(
    provider: string,
    token: string,
    late: (outcome: 'redeemed' | 'spent' | 'failed') => void,
  ): Promise<'redeemed' | 'spent' | 'retrying' | 'failed'> {
    try {
      await this.deps.wallet.receive(token);
      return 'redeemed';
    } catch (err) {
      if ((err as GatewayError).code === 'token_already_spent') return 'spent';
      if (!transient(err)) {
        this.deps.log.error(
          { provider, code: (err as GatewayError).code, err: (err as Error).message },
          'node payment: token not redeemable',
        );
        return 'failed';
      }
      upstreamChangeRetriesTotal.labels({ provider }).inc();
      this.retry.schedule(`node-change:${provider}`, async () => {
        try {
          await this.deps.wallet.receive(token);
          late('redeemed');
        } catch (e) {
          if (transient(e)) throw e;
          late((e as GatewayError).code === 'token_already_spent' ? 'spent' : 'failed');
        }
      });
      return 'retrying';
    }
  }

  get log(): Logger {
    return this.deps.log;
  }
}

function transient(err: unknown): boolean {
  const code = (err as GatewayError).code;
  return code === 'mint_unavailable' || code === 'store_unavailable' || code === 'token_pending';
}

/** The face value of a token (whatever its mint: untrusted change has a value too), or 0 when unreadable. */
function tokenMsat(token: string): number {
  try {
    const meta = readTokenMeta(token);
    return isCashuUnit(meta.unit) ? toMsat(meta.amount, meta.unit) : 0;
  } catch {
    return 0;
  }
}

/** Why eCash sent to a node was lost (`gateway_upstream_lost_msats_total{reason}`). */
type LossReason = 'no_answer' | 'change_pending' | 'change_unredeemable';

/**
 * One payment to a node: the token sent, and what became of it. `settle` runs once, whichever way the call
 * ends (answer relayed, refused, node down, stream broken).
 */
export class NodePayment implements NodeCallPayment {
  private settled = false;

  constructor(
    private readonly payer: NodePayer,
    readonly provider: string,
    private readonly token: string,
    readonly amountMsat: number,
    private readonly requestId: string,
  ) {}

  /**
   * What a node's 402 says is missing (its NUT-18 `X-Cashu-Payment-Request`, msats), or undefined. The relay
   * then pays the node once more with this token's value plus the shortfall (at most RAISE_LIMIT times it).
   */
  static shortfallMsat(headers: Readonly<Record<string, string | string[]>>): number | undefined {
    const v = headers['x-cashu-payment-request'];
    const s = Array.isArray(v) ? v[0] : v;
    if (typeof s !== 'string' || !s.startsWith('creq')) return undefined;
    try {
      const req = decodePaymentRequest(s);
      const amount = req.amount?.toNumber();
      const unit = req.unit ?? 'sat';
      if (amount === undefined || amount <= 0 || !isCashuUnit(unit)) return undefined;
      return toMsat(amount, unit);
    } catch {
      return undefined;
    }
  }

  /** The request header that pays the call. */
  get headers(): Record<string, string> {
    return { 'x-cashu': this.token };
  }

  /**
   * Did the node refuse the token? A 402, or a 4xx that returned no token (the node never took ours: an
   * untrusted mint, a bad token). A 4xx WITH change is the node's answer to the call itself (it took the token
   * and gave it back): relayed like any provider's.
   */
  static refused(up: Pick<UpstreamResponse, 'status' | 'headers'>): boolean {
    if (up.status === 402) return true;
    return up.status >= 400 && up.status < 500 && up.status !== 429 && changeHeader(up.headers) === undefined;
  }

  /**
   * The call ends with the answer's head only (an error, a refusal, or no answer at all: `up` undefined): the
   * change from the head, else our token back.
   */
  settleHead(up: Pick<UpstreamResponse, 'headers'> | undefined): void {
    this.finish(up === undefined ? undefined : changeHeader(up.headers), false, pendingHeader(up?.headers));
  }

  /**
   * The answer as relayed to the user: without the node's change and cost (node-answer.ts); the payment settles
   * when the body ends (complete) or fails (broken). `onCost`: what the call cost the operator — the token less
   * the change the node returned — told once when the answer ends (the audit record's `upstream_msats`).
   */
  wrap(up: UpstreamResponse, onCost?: (msat: number) => void): UpstreamResponse {
    return nodeAnswer(up, (end) => {
      onCost?.(
        this.amountMsat - (end.change === undefined ? 0 : Math.min(tokenMsat(end.change), this.amountMsat)),
      );
      this.finish(end.change, end.complete, end.pendingMsat);
    });
  }

  /** Settles in the background (the answer is not held up); an unexpected failure is logged, never thrown. */
  private finish(change: string | undefined, complete: boolean, pendingMsat: number | undefined): void {
    this.settle(change, complete, pendingMsat).catch((err: unknown) => {
      this.payer.log.error(
        { requestId: this.requestId, provider: this.provider, err: (err as Error).message },
        'node payment: settling failed',
      );
    });
  }

  /**
   * What the token became: change redeemed (cost = token − change); no change → our token taken back, and if
   * the node had spent it, the node's price (answer complete) or a loss (answer broken).
   */
  private async settle(
    change: string | undefined,
    complete: boolean,
    pendingMsat: number | undefined,
  ): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    const { provider, amountMsat } = this;
    let changeMsat = 0;
    let lostMsat = 0;
    let reason: LossReason | undefined;
    if (change !== undefined) {
      changeMsat = Math.min(tokenMsat(change), amountMsat);
      const r = await this.payer.redeem(provider, change, (late) => {
        if (late !== 'redeemed') this.lost(changeMsat, 'change_unredeemable');
      });
      if (r === 'spent' || r === 'failed') {
        // Change this node cannot take (e.g. from a mint it does not trust): lost to the operator.
        lostMsat = changeMsat;
        changeMsat = 0;
        reason = 'change_unredeemable';
      }
    } else {
      const lossIfSpent = (): [number, LossReason] | undefined =>
        pendingMsat !== undefined
          ? // The node could not make change: the rest waits on the token's identity there.
            [Math.min(pendingMsat, amountMsat), 'change_pending']
          : complete
            ? undefined // the node's price took the whole token
            : [amountMsat, 'no_answer'];
      const r = await this.payer.redeem(provider, this.token, (late) => {
        if (late === 'redeemed') return;
        const loss = lossIfSpent();
        if (loss) this.lost(loss[0], loss[1]);
        else upstreamPaidMsatsTotal.labels({ provider }).inc(amountMsat);
      });
      if (r === 'redeemed' || r === 'retrying')
        changeMsat = amountMsat; // never spent: nothing paid
      else {
        const loss = lossIfSpent();
        if (loss) [lostMsat, reason] = loss;
      }
    }
    const costMsat = amountMsat - changeMsat - lostMsat;
    if (costMsat > 0) upstreamPaidMsatsTotal.labels({ provider }).inc(costMsat);
    if (lostMsat > 0 && reason !== undefined) this.lost(lostMsat, reason);
    this.payer.log.info(
      { requestId: this.requestId, provider, sentMsat: amountMsat, changeMsat, costMsat, lostMsat },
      'node paid',
    );
  }

  private lost(msat: number, reason: LossReason): void {
    if (msat <= 0) return;
    upstreamLostMsatsTotal.labels({ provider: this.provider, reason }).inc(msat);
    this.payer.log.warn(
      { requestId: this.requestId, provider: this.provider, lostMsat: msat, reason },
      'node payment: eCash sent to the node came back neither as an answer nor as change (operator loss)',
    );
  }
}
