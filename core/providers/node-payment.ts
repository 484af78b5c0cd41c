import { decodePaymentRequest } from '@cashu/cashu-ts';
import { operatorSurplus } from '../account/operator-withdrawal.js';
import { BackgroundRetry } from '../background-retry.js';
import { GatewayError } from '../errors.js';
import type { Ledger } from '../ledger/types.js';
import type { Logger } from '../log.js';
import { promptTokensUpperBound } from '../metering/prompt-bound.js';
import { upstreamChangeRetriesTotal, upstreamLostMsatsTotal, upstreamPaidMsatsTotal } from '../metrics.js';
import type { UpstreamResponse, UpstreamSink } from '../upstream/upstream-response.js';
import { isCashuUnit, readTokenMeta, toMsat } from '../wallet/token-codec.js';
import type { WalletService } from '../wallet/types.js';
import type { Provider } from './provider.js';

/**
 * Paying another Cashu-priced node (a providers-file entry with `"payment": "cashu"`, docs/providers.md): each
 * call routed there carries an `X-Cashu` token from the operator's wallet, sized to the node's price, and the
 * node's change comes back into the wallet.
 *
 * - Price: the node's own `GET /v1/models` (`pricing.prompt_msats` / `completion_msats` per 1,000 tokens,
 *   `request_msats`, `context_length`), cached for PRICE_TTL_MS and refetched after a 402. A 402 with a NUT-18
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

/** How long a node's prices are reused. */
export const PRICE_TTL_MS = 60_000;

/** A node's price of one model, from its `/v1/models`. */
export interface NodePrice {
  promptMsatPer1k: number;
  completionMsatPer1k: number;
  requestMsat: number;
  contextLength: number | undefined;
}

const MAX_TOKEN_FIELDS = ['max_tokens', 'max_completion_tokens', 'max_output_tokens'] as const;

/** What the call asks of the node, for its bound. */
export interface NodeCall {
  requestId: string;
  model: string | undefined;
  path: string;
  body: unknown;
  rawBytes: number;
}

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
    const b = (call.body ?? {}) as Record<string, unknown>;
    const set = MAX_TOKEN_FIELDS.map((f) => b[f]).find(
      (v): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0,
    );
    if (set !== undefined) maxTokens = set;
    else if (price.contextLength !== undefined && price.contextLength > 0) {
      maxTokens = Math.max(price.contextLength - pb, 0);
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

export interface NodePayerDeps {
  wallet: WalletService;
  ledger: Pick<Ledger, 'totalUserBalancesMsat'>;
  log: Logger;
  /** The background retry of change redemption (tests pass short delays). */
  retry?: BackgroundRetry;
  /** Prices fetch (tests may pass their own); default global fetch. */
  fetch?: typeof fetch;
}

export class NodePayer {
  private readonly prices = new Map<string, { at: number; models: Map<string, NodePrice> }>();
  private gate: Promise<unknown> = Promise.resolve();
  readonly retry: BackgroundRetry;

  constructor(private readonly deps: NodePayerDeps) {
    this.retry = deps.retry ?? new BackgroundRetry(deps.log, 'node change redemption');
  }

  /** The node's price of `model` (its `/v1/models`, cached). @throws GatewayError `upstream_error`. */
  async price(p: Provider, model: string | undefined): Promise<NodePrice> {
    let hit = this.prices.get(p.name);
    if (hit === undefined || Date.now() - hit.at > PRICE_TTL_MS) {
      hit = { at: Date.now(), models: await this.fetchPrices(p) };
      this.prices.set(p.name, hit);
    }
    const price = model === undefined ? undefined : hit.models.get(model);
    if (price === undefined) {
      throw new GatewayError('upstream_error', {
        message: `The node ${p.name} lists no price for the model ${model ?? ''}`,
        details: { provider: p.name },
      });
    }
    return price;
  }

  /** Forgets a node's prices (it answered 402: they changed). */
  forgetPrices(p: Provider): void {
    this.prices.delete(p.name);
  }

  private async fetchPrices(p: Provider): Promise<Map<string, NodePrice>> {
    const f = this.deps.fetch ?? fetch;
    let items: unknown;
    try {
      const res = await f(`${p.spec.baseUrl}/models`, {
        headers: { accept: 'application/json', ...p.spec.headers },
        signal: AbortSignal.timeout(Math.min(p.spec.timeoutMs, 10_000)),
      });
      if (!res.ok) throw new Error(`status ${res.status}`);
      items = ((await res.json()) as { data?: unknown }).data;
    } catch (err) {
      throw new GatewayError('upstream_error', {
        message: `The node ${p.name} did not list its prices (${(err as Error).message})`,
        details: { provider: p.name },
      });
    }
    const models = new Map<string, NodePrice>();
    for (const item of Array.isArray(items) ? items : []) {
      const m = item as { id?: unknown; context_length?: unknown; pricing?: Record<string, unknown> };
      const pr = m.pricing;
      if (typeof m.id !== 'string' || pr === undefined || pr === null) continue;
      const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
      const prompt = num(pr.prompt_msats);
      const completion = num(pr.completion_msats);
      const request = num(pr.request_msats);
      // A null price (no fresh BTC price at the node) leaves the model unpriced: not paid blind.
      if (prompt === undefined || completion === undefined || request === undefined) continue;
      models.set(m.id, {
        promptMsatPer1k: prompt,
        completionMsatPer1k: completion,
        requestMsat: request,
        contextLength: num(m.context_length),
      });
    }
    return models;
  }

  /**
   * Makes the token that pays `call` at node `p`: within the operator surplus, from the primary mint in sats.
   * @throws GatewayError `operator_wallet_insufficient` (surplus or the primary mint's proofs too small),
   *   `upstream_error` (the node's price is unknown), and the wallet's send errors.
   */
  async pay(p: Provider, call: NodeCall, atLeastMsat = 0): Promise<NodePayment> {
    const bound = nodeCallBoundMsat(await this.price(p, call.model), call);
    const amountMsat = Math.max(1, Math.ceil(Math.max(bound, atLeastMsat) / 1000)) * 1000;
    const run = this.gate.then(() => this.sendWithinSurplus(p, amountMsat));
    this.gate = run.catch(() => undefined);
    const token = await run;
    return new NodePayment(this, p.name, token, amountMsat, call.requestId);
  }

  private async sendWithinSurplus(p: Provider, amountMsat: number): Promise<string> {
    const { wallet, ledger } = this.deps;
    const s = await operatorSurplus({ wallet, ledger });
    const poor = () =>
      new GatewayError('operator_wallet_insufficient', {
        details: { provider: p.name, needed_msat: amountMsat, surplus_msat: Math.max(0, s.surplusMsat) },
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

/**
 * The node's own answer headers this gateway does not pass on: its change, and its cost (what the operator
 * pays is not the user's business; this gateway's settle stage states the user's own cost).
 */
const NODE_HEADERS = new Set(['x-cashu', 'x-cashu-change', 'x-node-cost']);

/** A JSON answer without the node's `x-node-cost` block (a body that is not a JSON object passes unchanged). */
function withoutNodeCost(body: Buffer): Buffer {
  try {
    const doc = JSON.parse(body.toString('utf8')) as unknown;
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc) || !('x-node-cost' in doc)) return body;
    delete (doc as Record<string, unknown>)['x-node-cost'];
    return Buffer.from(JSON.stringify(doc));
  } catch {
    return body;
  }
}

const COST_COMMENT = Buffer.from(': x-node-cost ');
const CHANGE_COMMENT = Buffer.from(': x-cashu ');
/** Why eCash sent to a node was lost (`gateway_upstream_lost_msats_total{reason}`). */
type LossReason = 'no_answer' | 'change_pending' | 'change_unredeemable';

const CHANGE_PENDING_COMMENT = Buffer.from(': x-cashu-change ');
const LF = 0x0a;
const COLON = 0x3a;

/**
 * One payment to a node: the token sent, and what became of it. `settle` runs once, whichever way the call
 * ends (answer relayed, refused, node down, stream broken).
 */
export class NodePayment {
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
   * The answer as relayed to the user: without the change header, and for a stream without the change comment;
   * the payment settles when the body ends (complete) or fails (broken).
   */
  wrap(up: UpstreamResponse): UpstreamResponse {
    const ct = up.headers['content-type'];
    const sse = typeof ct === 'string' && ct.includes('text/event-stream');
    const json = !sse && typeof ct === 'string' && /\bjson\b/i.test(ct);
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(up.headers)) {
      if (k === 'content-length' && json) continue; // the node's cost block is taken out of the body
      if (!NODE_HEADERS.has(k)) headers[k] = v;
    }
    const headChange = changeHeader(up.headers);
    const headPending = pendingHeader(up.headers);
    const filter = sse ? new ChangeCommentFilter() : undefined;
    const held: Buffer[] | undefined = json ? [] : undefined;
    const payment = this;
    return {
      status: up.status,
      headers,
      get finished() {
        return up.finished;
      },
      pause: () => up.pause(),
      resume: () => up.resume(),
      abort() {
        up.abort();
        payment.finish(headChange ?? filter?.change, false, headPending ?? filter?.pending);
      },
      pipe(sink: UpstreamSink) {
        up.pipe({
          onData(chunk) {
            if (held !== undefined) {
              held.push(chunk);
              return;
            }
            const out = filter ? filter.push(chunk) : chunk;
            if (out.length > 0) sink.onData(out);
          },
          onEnd() {
            const rest = held !== undefined ? withoutNodeCost(Buffer.concat(held)) : filter?.end();
            if (rest !== undefined && rest.length > 0) sink.onData(rest);
            payment.finish(headChange ?? filter?.change, true, headPending ?? filter?.pending);
            sink.onEnd();
          },
          onError(err) {
            payment.finish(headChange ?? filter?.change, false, headPending ?? filter?.pending);
            sink.onError(err);
          },
        });
      },
    };
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

function changeHeader(h: Readonly<Record<string, string | string[]>> | undefined): string | undefined {
  const v = h?.['x-cashu'];
  const s = Array.isArray(v) ? v[0] : v;
  return typeof s === 'string' && s.startsWith('cashu') ? s.trim() : undefined;
}

function pendingHeader(h: Readonly<Record<string, string | string[]>> | undefined): number | undefined {
  const v = h?.['x-cashu-change'];
  const s = Array.isArray(v) ? v[0] : v;
  if (typeof s !== 'string') return undefined;
  const m = /msat=(\d+)/.exec(s);
  return m ? Number(m[1]) : 0;
}

/**
 * Removes the node's change comment lines (`: x-cashu <token>`, `: x-cashu-change …`) and its cost comment
 * (`: x-node-cost {…}`), with the blank line after each, from an SSE body, passing every other byte through as it arrives: only a comment line (one starting with
 * `:`) is held until its end.
 */
export class ChangeCommentFilter {
  change: string | undefined;
  pending: number | undefined;
  private atLineStart = true;
  private comment: Buffer[] | null = null;
  private dropBlank = false;

  push(chunk: Buffer): Buffer {
    const out: Buffer[] = [];
    let i = 0;
    while (i < chunk.length) {
      if (this.comment !== null) {
        const nl = chunk.indexOf(LF, i);
        if (nl < 0) {
          this.comment.push(chunk.subarray(i));
          break;
        }
        this.comment.push(chunk.subarray(i, nl + 1));
        i = nl + 1;
        const line = Buffer.concat(this.comment);
        this.comment = null;
        this.atLineStart = true;
        if (!this.take(line)) out.push(line);
        continue;
      }
      if (this.atLineStart && this.dropBlank) {
        this.dropBlank = false;
        if (chunk[i] === LF) {
          i++;
          continue;
        }
        if (chunk[i] === 0x0d && chunk[i + 1] === LF) {
          i += 2;
          continue;
        }
      }
      if (this.atLineStart && chunk[i] === COLON) {
        this.comment = [];
        continue;
      }
      const nl = chunk.indexOf(LF, i);
      if (nl < 0) {
        out.push(chunk.subarray(i));
        this.atLineStart = false;
        break;
      }
      out.push(chunk.subarray(i, nl + 1));
      this.atLineStart = true;
      i = nl + 1;
    }
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }

  /** The body ended: a comment line without its newline is passed on (or taken). */
  end(): Buffer | undefined {
    if (this.comment === null) return undefined;
    const line = Buffer.concat(this.comment);
    this.comment = null;
    return this.take(line) ? undefined : line;
  }

  /** A change (or the node's cost) comment line: remembered, and dropped (true) with the blank line after it. */
  private take(line: Buffer): boolean {
    if (startsWith(line, COST_COMMENT)) {
      // The node's cost block: the operator's business, not relayed.
    } else if (startsWith(line, CHANGE_PENDING_COMMENT)) {
      const m = /msat=(\d+)/.exec(line.toString('utf8'));
      this.pending = m ? Number(m[1]) : 0;
    } else if (startsWith(line, CHANGE_COMMENT)) {
      this.change = line.subarray(CHANGE_COMMENT.length).toString('utf8').trim();
    } else return false;
    this.dropBlank = true;
    return true;
  }
}

function startsWith(b: Buffer, prefix: Buffer): boolean {
  return b.length >= prefix.length && b.subarray(0, prefix.length).equals(prefix);
}
