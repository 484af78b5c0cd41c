import { createHash, randomBytes } from 'node:crypto';
import { PaymentRequest, setGlobalRequestOptions } from '@cashu/cashu-ts';
import { GatewayError } from '../errors.js';
import { decodeBolt11 } from './bolt11.js';
import { MintClients, newEntry, type WalletContext } from './context.js';
import { swapForeignToken } from './foreign-swap.js';
import { payoutClaimId, payoutId, payoutStartId } from './journal.js';
import { checkMintQuote, createMintQuote, mintPaidQuote, subscribeMintQuotes } from './mint-quote.js';
import { beat } from './owners.js';
import { receiveToken } from './receive.js';
import { recoverAll } from './recovery.js';
import { payInvoice, quoteInvoice, sendToken } from './send.js';
import { balances, checkSolvency } from './solvency.js';
import type { ProofStore } from './store/proof-store.js';
import { RedisProofStore } from './store/redis-store.js';
import { SqliteProofStore } from './store/sqlite-store.js';
import { hashSecrets, isCashuUnit, normalizeMint, readTokenMeta, toMsat, UNIT_MSAT } from './token-codec.js';
import type {
  CashuUnit,
  CreateWalletOptions,
  DecodedToken,
  OpenPayoutEntry,
  ReceiveReceipt,
  WalletService,
} from './types.js';

export type * from './types.js';

/**
 * Composition of the wallet service (see types.ts for the contract). One instance per process; call
 * `recover()` once before serving.
 */

function parseSeed(hex: string): Uint8Array {
  if (!/^[0-9a-fA-F]+$/.test(hex) || (hex.length !== 64 && hex.length !== 128)) {
    throw new GatewayError('internal_error', { message: 'CASHU_SEED must be 64 or 128 hex characters' });
  }
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

/** A valid BOLT11 invoice (core/wallet/bolt11.ts), trimmed; 400 otherwise, before the mint is asked anything. */
function checkInvoice(invoice: unknown): string {
  if (typeof invoice !== 'string' || decodeBolt11(invoice.trim()) === undefined) {
    throw new GatewayError('invalid_request', { message: 'Not a Lightning invoice' });
  }
  return invoice.trim();
}

export function openProofStore(conn: CreateWalletOptions['conn']): ProofStore {
  return conn.kind === 'redis' ? new RedisProofStore(conn) : new SqliteProofStore(conn.db);
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the wallet's composition root: its context and operations built in dependency order
export async function createWallet(opts: CreateWalletOptions): Promise<WalletService> {
  if (opts.mints.length === 0)
    throw new GatewayError('internal_error', { message: 'No trusted mint (CASHU_MINTS)' });
  const mints = [...new Set(opts.mints.map(normalizeMint))];
  const store = openProofStore(opts.conn);
  await store.init();
  // The seed is shared by every process on this store (journal entries of one may be recovered by another).
  const seedHex = opts.seed ?? (await store.metaSetIfAbsent('seed', randomBytes(64).toString('hex')));
  const seed = parseSeed(seedHex);
  const seedId = createHash('sha256').update(seed).digest('hex').slice(0, 16);
  const timeout = opts.mintTimeoutMs ?? 15_000;
  setGlobalRequestOptions({ requestTimeout: timeout });
  const ctx: WalletContext = {
    store,
    log: opts.log.child({ component: 'wallet' }),
    mints,
    seedId,
    clients: new MintClients(seed, store),
    staleAfterMs: opts.claimStaleAfterMs ?? timeout * 2,
    ownerDeadAfterMs: opts.instance?.deadAfterMs ?? opts.claimStaleAfterMs ?? timeout * 2,
    running: new Set(),
    ...(opts.instance
      ? { owner: { id: opts.instance.id, name: opts.instance.name, startedAt: Date.now() } }
      : {}),
  };
  // This instance's heartbeat (owners.ts): recorded before any entry names it, then kept fresh.
  let beating: NodeJS.Timeout | undefined;
  if (ctx.owner) {
    await beat(ctx);
    const every = opts.instance?.heartbeatMs ?? Math.max(100, Math.floor(ctx.ownerDeadAfterMs / 3));
    beating = setInterval(() => {
      beat(ctx).catch((err: unknown) => ctx.log.warn({ err }, 'wallet heartbeat failed'));
    }, every);
    beating.unref();
  }
  const inflight = new Map<string, Promise<ReceiveReceipt>>();

  function assertTrusted(mint: string): string {
    const m = normalizeMint(mint);
    if (!mints.includes(m)) throw new GatewayError('mint_not_trusted');
    return m;
  }

  const foreignPolicy = opts.foreignMints ?? { mode: 'refuse', maxFeePercent: 5, maxSats: 100_000 };

  function decodeToken(token: string): DecodedToken {
    const meta = readTokenMeta(token);
    const foreign = !mints.includes(meta.mint);
    if (foreign && foreignPolicy.mode !== 'swap') throw new GatewayError('mint_not_trusted');
    if (!isCashuUnit(meta.unit)) throw new GatewayError('unsupported_unit');
    return {
      mint: meta.mint,
      unit: meta.unit,
      amount: meta.amount,
      amountMsat: toMsat(meta.amount, meta.unit),
      proofs: meta.proofs,
      version: meta.version,
      tokenHash: hashSecrets(meta.secrets),
      ...(foreign ? { foreign: true } : {}),
    };
  }

  async function pickUnit(mint: string, amountMsat: number): Promise<CashuUnit> {
    const lines = (await balances(ctx)).filter((l) => l.mint === mint);
    const free = (u: CashuUnit) =>
      lines.filter((l) => l.unit === u).reduce((s, l) => s + l.amount - l.reserved, 0);
    const sats = Math.floor(amountMsat / 1000);
    if (sats >= 1 && free('sat') > sats) return 'sat';
    return free('msat') > amountMsat ? 'msat' : 'sat';
  }

  const service: WalletService = {
    mints,
    decodeToken,
    tokenHash: (token) => hashSecrets(readTokenMeta(token).secrets),
    async receive(token, o = {}) {
      const d = decodeToken(token);
      const running = inflight.get(d.tokenHash);
      if (running) return running;
      const p = (
        d.foreign
          ? swapForeignToken(ctx, token, d, foreignPolicy)
          : receiveToken(ctx, token, d, o.creditIntent)
      ).finally(() => inflight.delete(d.tokenHash));
      inflight.set(d.tokenHash, p);
      return p;
    },
    async send(amountMsat, o = {}) {
      if (!Number.isSafeInteger(amountMsat) || amountMsat <= 0) {
        throw new GatewayError('invalid_request', { message: 'amountMsat must be a positive integer' });
      }
      const mint = assertTrusted(o.mint ?? (mints[0] as string));
      const unit = o.unit ?? (await pickUnit(mint, amountMsat));
      return sendToken(ctx, amountMsat, mint, unit, o.tokenVersion ?? 4, o.payout);
    },
    finishPayout: (holdId) => store.deleteOp(payoutId(holdId)),
    async claimPayout(holdId) {
      const entry = await store.getOp(payoutId(holdId));
      if (entry?.payout && (await store.moveOp(entry.id, { ...entry, id: payoutClaimId(holdId) })))
        return entry.payout;
      // Claimed before (a pass that died after its claim), or gone: finished, its token handed out.
      return (await store.getOp(payoutClaimId(holdId)))?.payout ?? null;
    },
    async endPayoutClaim(holdId) {
      await Promise.all([store.deleteOp(payoutClaimId(holdId)), store.deleteOp(payoutId(holdId))]);
    },
    async openPayouts() {
      const open: OpenPayoutEntry[] = [];
      for (const e of await store.listOps()) {
        const l = e.lightning;
        if (l === undefined || (e.kind !== 'melt' && e.kind !== 'payout')) continue;
        const state = l.paid === undefined ? 'pending' : l.paid ? 'paid' : 'failed';
        open.push({ holdId: l.holdId, accountId: l.accountId, sinceMs: e.createdAt, state });
      }
      return open.sort((a, b) => a.sinceMs - b.sinceMs);
    },
    createPaymentRequest(o = {}) {
      const unit = o.unit ?? 'sat';
      const amount = o.amountMsat === undefined ? undefined : Math.ceil(o.amountMsat / UNIT_MSAT[unit]);
      const req = new PaymentRequest([], undefined, amount, unit, [...mints], o.description, true);
      return req.toEncodedCreqA();
    },
    recover: (o) =>
      recoverAll(ctx, opts.payouts && { settle: opts.payouts, wallet: service }, o, opts.receipts),
    balances: () => balances(ctx),
    checkSolvency: (total) => checkSolvency(ctx, total),
    async payInvoice(invoice, o = {}) {
      const mint = assertTrusted(o.mint ?? (mints[0] as string));
      return payInvoice(ctx, checkInvoice(invoice), mint, o.unit ?? 'sat', {
        ...(o.quote ? { quote: o.quote } : {}),
        ...(o.hold ? { hold: o.hold } : {}),
      });
    },
    async quoteInvoice(invoice, o = {}) {
      const mint = assertTrusted(o.mint ?? (mints[0] as string));
      return quoteInvoice(ctx, checkInvoice(invoice), mint, o.unit ?? 'sat', o.amountMsat);
    },
    async startPayout(holdId, accountId) {
      const entry = newEntry(ctx, payoutStartId(holdId), 'payout', mints[0] as string, 'sat');
      await store.putOp({ ...entry, payoutStart: { holdId, accountId } });
    },
    payoutStarted: async (holdId) => (await store.getOp(payoutStartId(holdId))) !== null,
    async endPayoutStart(holdId) {
      await store.deleteOp(payoutStartId(holdId));
    },
    async getLightningPayout(holdId) {
      const decided = await store.getOp(payoutId(holdId));
      if (decided?.lightning) return decided.lightning;
      return (await store.getOp(`melt:${holdId}`))?.lightning ?? null;
    },
    async createLightningQuote(amountSats) {
      if (!Number.isSafeInteger(amountSats) || amountSats <= 0) {
        throw new GatewayError('invalid_request', { message: 'amountSats must be a positive integer' });
      }
      return createMintQuote(ctx, mints[0] as string, amountSats);
    },
    checkLightningQuote: (quote, amountSats) => checkMintQuote(ctx, mints[0] as string, quote, amountSats),
    mintLightningQuote: (quote, amountSats) => mintPaidQuote(ctx, mints[0] as string, quote, amountSats),
    watchLightningQuotes: (quotes, onChange, onError) =>
      subscribeMintQuotes(ctx, mints[0] as string, quotes, onChange, onError),
    async close() {
      inflight.clear();
      if (beating) clearInterval(beating);
      // A clean stop: what this process left is anyone's at once (owners.ts).
      if (ctx.owner) await store.forgetOwner(ctx.owner.id).catch(() => undefined);
      await ctx.clients.closeSockets();
    },
  };
  return service;
}
