import { createHash, randomBytes } from 'node:crypto';
import { getPubKeyFromPrivKey } from '@cashu/cashu-ts';
import { bolt11AmountMsat } from '../../core/wallet/bolt11.js';
import { blindSign, pointBytes, verifyProof } from './crypto.js';
import {
  fakeInvoice,
  freshPreimage,
  type LightningMode,
  nodeKeyFromSeed,
  nodePubkey,
  payOnFakeNetwork,
  preimageOnFakeNetwork,
} from './fake-lightning.js';
import { deriveKeyset, type MintKeyset, type MintUnit, planGenerations } from './keysets.js';
import { type MeltQuote, type MintState, type SignedOutput, saveState } from './state.js';

/**
 * The dev mint's protocol logic (NUT-00..07, 08 change, 09 restore, 12 DLEQ), independent of HTTP. Every
 * request is validated in full before any state changes, so a rejected request changes nothing; handlers
 * are synchronous, so no two requests interleave (the spent set is checked and written in one step).
 * Error codes follow cashubtc/nuts error_codes.md (current table: 10001 proof verification failed, 11001
 * spent, 11002 pending, 11003 output already signed, 11005 unbalanced, 12001 unknown keyset, …).
 */

export class MintError extends Error {
  constructor(
    readonly code: number,
    detail: string,
  ) {
    super(detail);
  }
}

export interface BlindedMessage {
  amount: number;
  id: string;
  B_: string;
}
export interface WireProof {
  amount: number;
  id: string;
  secret: string;
  C: string;
  witness?: unknown;
}

export interface MintCoreOptions {
  units: MintUnit[];
  inputFeePpk: number;
  /** Lightning fee reserve in ppk of the amount (at least 1 unit). */
  feeReservePpk: number;
  /**
   * The routing fee the fake backend actually charges, ppk of the amount (rounded up, never above the
   * reserve); default 0. What the reserve leaves over comes back as NUT-08 change.
   */
  lightningFeePpk?: number | undefined;
  /** Offer NUT-17 (`bolt11_mint_quote` over `GET /v1/ws`); default true. */
  nut17?: boolean | undefined;
  /** Offer NUT-09 restore (listed in the info); default true. The server answers 404 on restore without it. */
  nut09?: boolean | undefined;
  /** `auto`: mint quotes are paid on creation; `manual`: UNPAID until `payMintQuote` (dev-only endpoint). */
  mintQuotePayment?: 'auto' | 'manual' | undefined;
  dataFile?: string | undefined;
  /** Lifetime of mint quotes in seconds; default 3600. */
  mintQuoteTtlS?: number | undefined;
  /** Lifetime of melt quotes in seconds; default 3600. */
  meltQuoteTtlS?: number | undefined;
}

const MAX_IO = 1000;
const QUOTE_TTL_S = 3600;
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

function asInt(v: unknown, what: string): number {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
    throw new MintError(11006, `invalid ${what}`);
  return n;
}

/** An amount as the powers of two that sum to it, largest first (melt change, `DevMint.mintTokens`). */
export function splitPow2(amount: number): number[] {
  const out: number[] = [];
  for (let bit = 2 ** 52; bit >= 1; bit /= 2) if (Math.floor(amount / bit) % 2 === 1) out.push(bit);
  return out;
}

export class MintCore {
  readonly keysets = new Map<string, MintKeyset>();
  readonly infoPubkey: string;
  /** The fake Lightning node's key (from the seed, so a kept mint keeps it) and the payee of every invoice. */
  private readonly nodeKey: Uint8Array;
  readonly nodePubkey: string;
  lightningMode: LightningMode = 'pay';

  constructor(
    readonly state: MintState,
    readonly opts: MintCoreOptions,
  ) {
    state.generations = planGenerations(state.generations, opts.units, opts.inputFeePpk);
    for (const g of state.generations) {
      const ks = deriveKeyset(state.seedHex, g);
      this.keysets.set(ks.id, ks);
    }
    const infoKey = createHash('sha256').update(`${state.seedHex}|info`).digest();
    this.infoPubkey = hex(getPubKeyFromPrivKey(new Uint8Array(infoKey)));
    this.nodeKey = nodeKeyFromSeed(state.seedHex);
    this.nodePubkey = nodePubkey(this.nodeKey);
    this.persist();
  }

  private persist(): void {
    if (this.opts.dataFile) saveState(this.opts.dataFile, this.state);
  }

  activeKeyset(unit: MintUnit): MintKeyset {
    for (const ks of this.keysets.values()) if (ks.unit === unit && ks.active) return ks;
    throw new MintError(11013, `unit ${unit} is not supported`);
  }

  // ---------------------------------------------------------------- NUT-06 / 01 / 02
  info(): Record<string, unknown> {
    const methods = this.opts.units.map((unit) => ({
      method: 'bolt11',
      unit,
      min_amount: 1,
      max_amount: null,
    }));
    // NUT-05: melt quotes for invoices without an amount (`options.amountless.amount_msat`).
    const meltMethods = methods.map((m) => ({ ...m, options: { amountless: true } }));
    return {
      name: 'Dev mint (prepaid-model-gateway)',
      pubkey: this.infoPubkey,
      version: 'dev-mint/0.1.0',
      description: 'Loopback test mint with a fake Lightning backend. Not for real money.',
      contact: [],
      nuts: {
        '4': { methods, disabled: false },
        '5': { methods: meltMethods, disabled: false },
        '7': { supported: true },
        '8': { supported: true },
        ...(this.opts.nut09 === false ? {} : { '9': { supported: true } }),
        '12': { supported: true },
        ...(this.opts.nut17 === false
          ? {}
          : {
              '17': {
                supported: this.opts.units.map((unit) => ({
                  method: 'bolt11',
                  unit,
                  commands: ['bolt11_mint_quote'],
                })),
              },
            }),
      },
    };
  }

  /** NUT-17: called with the quote's view whenever a mint quote changes state (PAID, ISSUED). */
  onMintQuoteChange: ((view: MintQuoteView) => void) | null = null;

  private mintQuoteChanged(id: string): void {
    if (this.onMintQuoteChange) this.onMintQuoteChange(this.mintQuoteView(id));
  }

  keysetsInfo(): Record<string, unknown> {
    return {
      keysets: [...this.keysets.values()].map((k) => ({
        id: k.id,
        unit: k.unit,
        active: k.active,
        input_fee_ppk: k.inputFeePpk,
      })),
    };
  }

  keys(id?: string): Record<string, unknown> {
    const list = id === undefined ? [...this.keysets.values()].filter((k) => k.active) : [this.keysetOf(id)];
    return {
      keysets: list.map((k) => ({
        id: k.id,
        unit: k.unit,
        active: k.active,
        input_fee_ppk: k.inputFeePpk,
        keys: k.pubKeys,
      })),
    };
  }

  private keysetOf(id: unknown): MintKeyset {
    const ks = typeof id === 'string' ? this.keysets.get(id) : undefined;
    if (!ks) throw new MintError(12001, 'keyset is not known');
    return ks;
  }

  // ---------------------------------------------------------------- validation
  private checkOutputs(
    raw: unknown,
    opts: { blank?: boolean } = {},
  ): { outputs: BlindedMessage[]; unit?: MintUnit } {
    if (!Array.isArray(raw)) throw new MintError(11015, 'outputs must be an array');
    if (raw.length > MAX_IO) throw new MintError(11015, 'max outputs exceeded');
    const seen = new Set<string>();
    let unit: MintUnit | undefined;
    const outputs = raw.map((o: Record<string, unknown>) => {
      const ks = this.keysetOf(o?.id);
      if (!ks.active) throw new MintError(12002, 'keyset is inactive, cannot sign messages');
      if (unit !== undefined && unit !== ks.unit) throw new MintError(11009, 'outputs of multiple units');
      unit = ks.unit;
      const amount = asInt(o.amount, 'output amount');
      if (!opts.blank && !ks.privKeys[String(amount)]) throw new MintError(11006, 'output amount has no key');
      const B_ = typeof o.B_ === 'string' ? o.B_ : '';
      if (pointBytes(B_) === undefined) throw new MintError(10001, 'invalid blinded message');
      if (seen.has(B_)) throw new MintError(11008, 'duplicate outputs provided');
      seen.add(B_);
      if (this.state.signed.has(B_)) throw new MintError(11003, 'outputs already signed');
      return { amount, id: ks.id, B_ };
    });
    return unit === undefined ? { outputs } : { outputs, unit };
  }

  /** Verifies inputs; returns their Ys, unit, total and input fee (NUT-02: ceil(sum of ppk / 1000)). */
  private checkInputs(raw: unknown): { ys: string[]; unit: MintUnit; total: number; fee: number } {
    if (!Array.isArray(raw) || raw.length === 0) throw new MintError(10001, 'no inputs');
    if (raw.length > MAX_IO) throw new MintError(11014, 'max inputs exceeded');
    const ys: string[] = [];
    let unit: MintUnit | undefined;
    let total = 0;
    let ppk = 0;
    const seen = new Set<string>();
    for (const p of raw as WireProof[]) {
      const ks = this.keysetOf(p?.id);
      if (unit !== undefined && unit !== ks.unit) throw new MintError(11009, 'inputs of multiple units');
      unit = ks.unit;
      const amount = asInt(p.amount, 'input amount');
      const priv = ks.privKeys[String(amount)];
      if (!priv || typeof p.secret !== 'string' || typeof p.C !== 'string' || p.secret.length > 512) {
        throw new MintError(10001, 'proof verification failed');
      }
      if (seen.has(p.secret)) throw new MintError(11007, 'duplicate inputs provided');
      seen.add(p.secret);
      const y = verifyProof(new TextEncoder().encode(p.secret), p.C, priv);
      if (y === undefined) throw new MintError(10001, 'proof verification failed');
      ys.push(y);
      total += amount;
      ppk += ks.inputFeePpk;
    }
    for (const y of ys) {
      const st = this.state.proofStates.get(y);
      if (st === 'SPENT') throw new MintError(11001, 'proofs already spent');
      if (st === 'PENDING') throw new MintError(11002, 'proofs are pending');
    }
    return { ys, unit: unit as MintUnit, total, fee: Math.ceil(ppk / 1000) };
  }

  private sign(o: BlindedMessage, amount = o.amount): SignedOutput & { amount: number } {
    const ks = this.keysetOf(o.id);
    const priv = ks.privKeys[String(amount)];
    if (!priv) throw new MintError(11006, 'output amount has no key');
    const B_ = pointBytes(o.B_);
    if (B_ === undefined) throw new MintError(10001, 'invalid blinded message');
    const sig = blindSign(B_, priv, ks.pubKeysUncompressed[String(amount)]!);
    const out = { id: ks.id, amount, C_: sig.C_, dleq: { e: sig.e, s: sig.s } };
    this.state.signed.set(o.B_, out);
    return out;
  }

  // ---------------------------------------------------------------- NUT-03 swap
  swap(body: Record<string, unknown>): Record<string, unknown> {
    const inputs = this.checkInputs(body.inputs);
    const { outputs, unit } = this.checkOutputs(body.outputs);
    if (outputs.length === 0) throw new MintError(11005, 'no outputs');
    if (unit !== inputs.unit) throw new MintError(11010, 'inputs and outputs not of same unit');
    const outTotal = outputs.reduce((s, o) => s + o.amount, 0);
    if (inputs.total - inputs.fee !== outTotal) {
      throw new MintError(
        11005,
        `transaction is not balanced: inputs ${inputs.total} - fee ${inputs.fee} != outputs ${outTotal}`,
      );
    }
    for (const y of inputs.ys) this.state.proofStates.set(y, 'SPENT');
    const signatures = outputs.map((o) => this.sign(o));
    this.persist();
    return { signatures };
  }

  // ---------------------------------------------------------------- NUT-04 mint (bolt11)
  createMintQuote(body: Record<string, unknown>): MintQuoteView {
    const unit = this.unitOf(body.unit);
    const amount = asInt(body.amount, 'amount');
    if (amount <= 0) throw new MintError(11006, 'amount outside of limit range');
    const quote = randomBytes(16).toString('hex');
    const ttlS = this.opts.mintQuoteTtlS ?? QUOTE_TTL_S;
    // The payment hash is sha256 of a preimage the node keeps: paying the invoice reveals it (POST /dev/pay).
    const { preimage, paymentHash } = freshPreimage();
    const q = {
      quote,
      unit,
      amount,
      // A real BOLT11 invoice signed by this mint's node; it expires with the quote.
      request: fakeInvoice(unit === 'sat' ? amount * 1000 : amount, {
        nodeKey: this.nodeKey,
        description: `dev mint quote ${quote}`,
        expirySeconds: ttlS,
        paymentHash,
      }),
      preimage,
      // The fake Lightning backend: paid on creation, or left UNPAID until told (payMintQuote).
      state: this.opts.mintQuotePayment === 'manual' ? ('UNPAID' as const) : ('PAID' as const),
      expiry: Math.floor(Date.now() / 1000) + ttlS,
    };
    this.state.mintQuotes.set(q.quote, q);
    this.persist();
    return this.mintQuoteView(q.quote);
  }

  mintQuoteView(id: string): MintQuoteView {
    const q = this.state.mintQuotes.get(id);
    if (!q) throw new MintError(20007, 'quote is not known');
    // The preimage is the payer's proof of payment: never in the NUT-04 view.
    const { preimage: _preimage, ...view } = q;
    return {
      ...view,
      amount_paid: q.state === 'UNPAID' ? 0 : q.amount,
      amount_issued: q.state === 'ISSUED' ? q.amount : 0,
    };
  }

  /** The fake network's receiving side: pays our unpaid quote with this invoice; false when it is not ours. */
  receivePayment(invoice: string): boolean {
    for (const q of this.state.mintQuotes.values()) {
      if (q.request !== invoice) continue;
      if (q.state === 'UNPAID') {
        try {
          this.payMintQuote(q.quote);
        } catch {
          /* expired: the payment is not taken, as a real node would refuse it */
        }
      }
      return true;
    }
    return false;
  }

  /** DEV ONLY: pays the mint quote whose invoice this is (see payMintQuote). */
  payInvoice(invoice: unknown): MintQuoteView {
    for (const q of this.state.mintQuotes.values())
      if (q.request === invoice) return this.payMintQuote(q.quote);
    throw new MintError(20007, 'quote is not known');
  }

  /**
   * DEV ONLY: the fake Lightning backend receives the payment of a mint quote's invoice (UNPAID → PAID).
   * Paying a PAID or ISSUED quote changes nothing; an expired unpaid quote cannot be paid.
   */
  payMintQuote(id: string): MintQuoteView {
    const q = this.state.mintQuotes.get(id);
    if (!q) throw new MintError(20007, 'quote is not known');
    if (q.state === 'UNPAID') {
      if (q.expiry <= Math.floor(Date.now() / 1000)) throw new MintError(20007, 'quote is expired');
      q.state = 'PAID';
      this.persist();
      this.mintQuoteChanged(id);
    }
    // The payer's answer, as a Lightning wallet's pay call gives it: the preimage proves the payment.
    return { ...this.mintQuoteView(id), ...(q.preimage ? { payment_preimage: q.preimage } : {}) };
  }

  /** The preimage of one of our mint-quote invoices, once it is paid (the fake network's payer learns it). */
  paidPreimage(invoice: string): string | undefined {
    for (const q of this.state.mintQuotes.values())
      if (q.request === invoice && q.state !== 'UNPAID') return q.preimage;
    return undefined;
  }

  mint(body: Record<string, unknown>): Record<string, unknown> {
    const q = typeof body.quote === 'string' ? this.state.mintQuotes.get(body.quote) : undefined;
    if (!q) throw new MintError(20007, 'quote is not known');
    if (q.state === 'ISSUED') throw new MintError(20002, 'quote has already been issued');
    if (q.state === 'UNPAID') throw new MintError(20001, 'quote request is not paid');
    const { outputs, unit } = this.checkOutputs(body.outputs);
    if (unit !== q.unit) throw new MintError(11010, 'outputs not of the quote unit');
    if (outputs.reduce((s, o) => s + o.amount, 0) !== q.amount)
      throw new MintError(11005, 'outputs do not sum to the quote amount');
    const signatures = outputs.map((o) => this.sign(o));
    q.state = 'ISSUED';
    this.persist();
    this.mintQuoteChanged(q.quote);
    return { signatures };
  }

  // ---------------------------------------------------------------- NUT-05 melt (bolt11) + NUT-08 change
  createMeltQuote(body: Record<string, unknown>): Record<string, unknown> {
    const unit = this.unitOf(body.unit);
    const request = typeof body.request === 'string' ? body.request : '';
    const invoiceMsat = bolt11AmountMsat(request);
    if (invoiceMsat === undefined) throw new MintError(11012, 'request is not a bolt11 invoice');
    // NUT-05 amountless: an invoice without an amount is paid the `options.amountless.amount_msat` the wallet names.
    const options = body.options as { amountless?: { amount_msat?: unknown } } | undefined;
    const named = options?.amountless?.amount_msat;
    let msat: bigint;
    if (invoiceMsat === null) {
      if (named === undefined)
        throw new MintError(11011, 'amountless invoice needs options.amountless.amount_msat');
      const n = typeof named === 'number' || typeof named === 'string' ? Number(named) : Number.NaN;
      if (!Number.isSafeInteger(n) || n <= 0)
        throw new MintError(11006, 'amount_msat must be a positive integer');
      msat = BigInt(n);
    } else {
      if (named !== undefined)
        throw new MintError(11011, 'options.amountless is for invoices without an amount');
      msat = invoiceMsat;
    }
    if (msat > BigInt(Number.MAX_SAFE_INTEGER)) throw new MintError(11006, 'amount outside of limit range');
    const msatN = Number(msat);
    const amount = unit === 'sat' ? Math.ceil(msatN / 1000) : msatN;
    const q: MeltQuote = {
      quote: randomBytes(16).toString('hex'),
      unit,
      amount,
      fee_reserve: Math.max(1, Math.ceil((amount * this.opts.feeReservePpk) / 1_000_000)),
      request,
      state: 'UNPAID',
      expiry: Math.floor(Date.now() / 1000) + (this.opts.meltQuoteTtlS ?? QUOTE_TTL_S),
      payment_preimage: null,
    };
    this.state.meltQuotes.set(q.quote, q);
    this.persist();
    return this.meltQuoteView(q.quote);
  }

  meltQuoteView(id: string): Record<string, unknown> {
    const q = this.state.meltQuotes.get(id);
    if (!q) throw new MintError(20007, 'quote is not known');
    if (q.state === 'PENDING' && this.lightningMode !== 'pending') this.settlePending(q);
    const { pendingYs: _y, pendingOutputs: _o, pendingInputsTotal: _t, pendingInputFee: _f, ...view } = q;
    return view;
  }

  melt(body: Record<string, unknown>): Record<string, unknown> {
    const q = typeof body.quote === 'string' ? this.state.meltQuotes.get(body.quote) : undefined;
    if (!q) throw new MintError(20007, 'quote is not known');
    if (q.state === 'PAID') throw new MintError(20006, 'invoice already paid');
    if (q.state === 'PENDING') throw new MintError(20005, 'quote is pending');
    // NUT-05: the quote is valid until its expiry; a melt that arrives later is refused (a wallet that lost the
    // answer to its melt relies on this to roll back once the quote has expired).
    if (q.expiry <= Math.floor(Date.now() / 1000)) throw new MintError(20007, 'quote is expired');
    const inputs = this.checkInputs(body.inputs);
    if (inputs.unit !== q.unit) throw new MintError(11010, 'inputs not of the quote unit');
    const { outputs } =
      body.outputs === undefined ? { outputs: [] } : this.checkOutputs(body.outputs, { blank: true });
    if (inputs.total - inputs.fee < q.amount + q.fee_reserve) {
      throw new MintError(11005, 'inputs do not cover amount + fee_reserve + input fee');
    }
    if (this.lightningMode === 'fail') throw new MintError(20004, 'lightning payment failed');
    for (const y of inputs.ys) this.state.proofStates.set(y, 'PENDING');
    q.state = 'PENDING';
    q.pendingYs = inputs.ys;
    q.pendingOutputs = outputs;
    q.pendingInputsTotal = inputs.total;
    q.pendingInputFee = inputs.fee;
    if (this.lightningMode === 'pay') this.settlePending(q);
    this.persist();
    return this.meltQuoteView(q.quote);
  }

  /** The routing fee the fake backend charges for paying this quote (never more than its reserve). */
  private routingFee(q: MeltQuote): number {
    const fee = Math.ceil((q.amount * (this.opts.lightningFeePpk ?? 0)) / 1_000_000);
    return Math.min(fee, q.fee_reserve);
  }

  /** Resolves a pending melt per the Lightning mode: pay (spend inputs, sign change) or fail (release). */
  private settlePending(q: MeltQuote): void {
    const ys = q.pendingYs ?? [];
    if (this.lightningMode === 'fail') {
      for (const y of ys) this.state.proofStates.delete(y);
      q.state = 'UNPAID';
    } else {
      for (const y of ys) this.state.proofStates.set(y, 'SPENT');
      q.state = 'PAID';
      payOnFakeNetwork(q.request);
      // A dev mint of this process issued it: the payer learns its real preimage, as over Lightning.
      q.payment_preimage = preimageOnFakeNetwork(q.request) ?? randomBytes(32).toString('hex');
      // The fake routing fee (lightningFeePpk, default 0) is taken from the reserve; the rest of the
      // overpayment comes back as NUT-08 change on as many of the blank outputs as it needs.
      q.fee_paid = this.routingFee(q);
      const overpaid = (q.pendingInputsTotal ?? 0) - (q.pendingInputFee ?? 0) - q.amount - q.fee_paid;
      const amounts = splitPow2(overpaid);
      const blanks = q.pendingOutputs ?? [];
      q.change = blanks.slice(0, amounts.length).map((o, i) => this.sign(o, amounts[i] as number));
    }
    delete q.pendingYs;
    delete q.pendingOutputs;
    delete q.pendingInputsTotal;
    delete q.pendingInputFee;
    this.persist();
  }

  // ---------------------------------------------------------------- NUT-07 / NUT-09
  checkState(body: Record<string, unknown>): Record<string, unknown> {
    const Ys = Array.isArray(body.Ys) ? (body.Ys as unknown[]) : [];
    if (Ys.length > MAX_IO) throw new MintError(11014, 'too many Ys');
    return {
      states: Ys.map((Y) => ({
        Y,
        state: this.state.proofStates.get(String(Y)) ?? 'UNSPENT',
        witness: null,
      })),
    };
  }

  restore(body: Record<string, unknown>): Record<string, unknown> {
    const raw = Array.isArray(body.outputs) ? (body.outputs as BlindedMessage[]) : [];
    if (raw.length > MAX_IO) throw new MintError(11015, 'max outputs exceeded');
    const outputs: BlindedMessage[] = [];
    const signatures: SignedOutput[] = [];
    for (const o of raw) {
      const s = typeof o?.B_ === 'string' ? this.state.signed.get(o.B_) : undefined;
      if (!s) continue;
      outputs.push({ amount: s.amount, id: s.id, B_: o.B_ });
      signatures.push(s);
    }
    return { outputs, signatures };
  }

  private unitOf(u: unknown): MintUnit {
    if (typeof u === 'string' && (this.opts.units as string[]).includes(u)) return u as MintUnit;
    throw new MintError(11013, 'unit in request is not supported');
  }
}

export type MintQuoteView = Record<string, unknown>;
