import { createHash } from 'node:crypto';
import { injectWebSocketImpl } from '@cashu/cashu-ts';
import { WebSocket } from 'undici';
import { GatewayError } from '../errors.js';
import {
  counterCollector,
  crashPoint,
  DETERMINISTIC,
  newEntry,
  toStored,
  type WalletContext,
  whileRunning,
} from './context.js';
import { afterAmbiguousFailure, isStale, receiptFor, resolveOp } from './journal.js';
import { classifyMintFailure, mapMintError } from './mint-errors.js';
import type { JournalEntry } from './store/proof-store.js';
import type { LightningQuote, ReceiveReceipt } from './types.js';

/**
 * Lightning deposits into the wallet (NUT-04 bolt11, unit sat): a mint quote whose invoice someone pays, then
 * minting its value onto deterministic (NUT-13) outputs. The journal entry `mint:<hash>` is written with the
 * output counters before the mint is asked, so a crash between the mint's signatures and our write is
 * finished by recovery (quote ISSUED → NUT-09 restore of those counters), and it is also the cross-process
 * claim: one process mints a quote. The receipt is stored under the same hash, so minting is idempotent.
 */

/** The quote's invoice is not paid yet (mint code 20001): nothing was minted, nothing is journalled. */
export class QuoteNotPaidError extends Error {
  constructor() {
    super('mint quote is not paid');
    this.name = 'QuoteNotPaidError';
  }
}

/** The receipt key of a quote: never the quote id itself (the quote id is the mint's, not a secret of ours). */
export function mintQuoteHash(mint: string, quote: string): string {
  return createHash('sha256').update(`lightning-mint|${mint}|${quote}`).digest('hex');
}

function quoteView(
  q: { quote: string; request: string; state: string; expiry?: number | null },
  amountSats: number,
): LightningQuote {
  const state = q.state === 'ISSUED' ? 'ISSUED' : q.state === 'PAID' ? 'PAID' : 'UNPAID';
  return {
    quote: q.quote,
    request: q.request,
    amountSats,
    state,
    expiresAt: typeof q.expiry === 'number' ? q.expiry * 1000 : null,
  };
}

export async function createMintQuote(
  ctx: WalletContext,
  mint: string,
  amountSats: number,
): Promise<LightningQuote> {
  const client = await ctx.clients.get(mint, 'sat');
  try {
    return quoteView(await client.createMintQuoteBolt11(amountSats), amountSats);
  } catch (err) {
    throw mapMintError(err);
  }
}

export async function checkMintQuote(
  ctx: WalletContext,
  mint: string,
  quote: string,
  amountSats: number,
): Promise<LightningQuote> {
  const client = await ctx.clients.get(mint, 'sat');
  try {
    return quoteView(await client.checkMintQuoteBolt11(quote), amountSats);
  } catch (err) {
    throw mapMintError(err);
  }
}

/**
 * Mints a paid quote's `amountSats` into the proof store, once. Returns the receipt (also when an earlier
 * call or recovery already minted it). Throws QuoteNotPaidError while the quote is unpaid, `token_pending`
 * while another process holds the claim, `mint_unavailable` when the mint cannot be asked (the journal keeps
 * an ambiguous attempt for recovery).
 */
export async function mintPaidQuote(
  ctx: WalletContext,
  mint: string,
  quote: string,
  amountSats: number,
): Promise<ReceiveReceipt> {
  const hash = mintQuoteHash(mint, quote);
  const done = await ctx.store.getReceipt(hash);
  if (done) return done;
  const entry = newEntry(ctx, `mint:${hash}`, 'mint', mint, 'sat');
  entry.tokenHash = hash;
  entry.quote = quote;
  entry.faceMsat = amountSats * 1000;
  entry.inputTotal = amountSats;
  const existing = await ctx.store.claimOp(entry);
  if (existing) {
    if (isStale(ctx, existing)) {
      await resolveOp(ctx, existing).catch((err: unknown) => {
        throw mapMintError(err);
      });
      const receipt = await ctx.store.getReceipt(hash);
      if (receipt) return receipt;
    }
    throw new GatewayError('token_pending', { message: 'The Lightning deposit is being minted' });
  }
  // The claimed entry is this call's until it settles it: this process's recovery pass leaves it alone.
  return whileRunning(ctx, entry.id, () => mintClaimed(ctx, entry, mint, amountSats));
}

async function mintClaimed(
  ctx: WalletContext,
  entry: JournalEntry,
  mint: string,
  amountSats: number,
): Promise<ReceiveReceipt> {
  const quote = entry.quote as string;
  const counters = counterCollector();
  let client: Awaited<ReturnType<typeof ctx.clients.get>>;
  let preview: Awaited<ReturnType<typeof client.prepareMint>>;
  try {
    client = await ctx.clients.get(mint, 'sat');
    preview = await client.prepareMint(
      'bolt11',
      amountSats,
      { quote },
      { onCountersReserved: counters.on },
      DETERMINISTIC,
    );
  } catch (err) {
    await ctx.store.deleteOp(entry.id);
    throw mapMintError(err);
  }
  entry.counters = counters.ranges;
  entry.submitted = true;
  if (!(await ctx.store.updateOp(entry))) {
    // Rolled back by another process meanwhile (it judged this one gone): nothing was sent to the mint.
    throw new GatewayError('token_pending', { message: 'The Lightning deposit is being minted' });
  }
  let proofs: Awaited<ReturnType<typeof client.completeMint>>;
  try {
    proofs = await client.completeMint(preview);
  } catch (err) {
    if (classifyMintFailure(err) !== 'ambiguous') {
      await ctx.store.deleteOp(entry.id);
      const code = (err as { code?: unknown }).code;
      if (code === 20001) throw new QuoteNotPaidError();
      throw mapMintError(err);
    }
    const receipt = await afterAmbiguousFailure(ctx, entry, err);
    if (receipt) return receipt;
    throw mapMintError(err);
  }
  crashPoint('after-mint');
  const add = proofs.map(toStored);
  const receipt = receiptFor(entry, add);
  // The mint signed these outputs: they and the receipt are stored even if another process decided the entry first.
  await ctx.store.settleOp(entry, { spentYs: [], add, receipt, applyIfGone: true });
  ctx.log.info(
    { mint, amountMsat: receipt.amountMsat, proofs: add.length },
    'wallet minted a paid Lightning quote',
  );
  return receipt;
}

// cashu-ts opens NUT-17 WebSockets with the global WebSocket, which Node 20 lacks: undici's (a dependency
// already, the same implementation Node 22 exposes globally) stands in.
injectWebSocketImpl(WebSocket as unknown as typeof globalThis.WebSocket);

/**
 * NUT-17: reports state changes of these mint quotes as the mint pushes them (the current state first). Returns
 * the canceller, or null when the mint does not offer `bolt11_mint_quote` subscriptions (then callers poll).
 * Throws GatewayError `mint_unavailable` when the mint cannot be reached.
 */
export async function subscribeMintQuotes(
  ctx: WalletContext,
  mint: string,
  quotes: string[],
  onChange: (quote: string, state: LightningQuote['state']) => void,
  onError: (err: Error) => void,
): Promise<(() => void) | null> {
  const client = await ctx.clients.get(mint, 'sat');
  const nut17 = client.getMintInfo().isSupported(17);
  const offered =
    nut17.supported &&
    (nut17.params ?? []).some(
      (p) => p.method === 'bolt11' && p.unit === 'sat' && p.commands.includes('bolt11_mint_quote'),
    );
  if (!offered) return null;
  try {
    return await client.on.mintQuoteUpdates(quotes, (q) => onChange(q.quote, quoteView(q, 0).state), onError);
  } catch (err) {
    throw mapMintError(err);
  }
}
