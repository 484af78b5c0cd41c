import {
  AmountError,
  CTSError,
  isMintOperationError,
  type SwapPreview,
  type Token,
  type Wallet,
} from '@cashu/cashu-ts';
import { GatewayError, isGatewayError } from '../errors.js';
import {
  counterCollector,
  crashPoint,
  DETERMINISTIC,
  newEntry,
  proofY,
  toStored,
  type WalletContext,
  whileRunning,
} from './context.js';
import { proofDleqValid } from './dleq.js';
import { afterAmbiguousFailure, isStale, receiptFor, resolveOp } from './journal.js';
import { classifyMintFailure, isMintTransportError, mapMintError } from './mint-errors.js';
import { cleanToken } from './token-codec.js';
import type { DecodedToken, ReceiveReceipt } from './types.js';

/**
 * Redeeming one token. The journal entry `recv:<tokenHash>` is both the write-ahead record and the claim
 * that makes concurrent redemptions of the same token (in any process) wait for one swap.
 */

const POLL_MS = 100;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function mapPrepareError(err: unknown): GatewayError {
  if (isGatewayError(err)) return err;
  if (err instanceof AmountError) return new GatewayError('token_amount_too_small', { cause: err });
  if (isMintTransportError(err) || isMintOperationError(err)) return mapMintError(err);
  // cashu-ts validation (invalid DLEQ, unknown keyset, wrong unit for its keyset, …): not valid money.
  if (err instanceof CTSError) return new GatewayError('invalid_token', { cause: err });
  return mapMintError(err);
}

async function waitForReceipt(ctx: WalletContext, tokenHash: string, opId: string): Promise<ReceiveReceipt> {
  const deadline = Date.now() + ctx.staleAfterMs;
  while (Date.now() < deadline) {
    const receipt = await ctx.store.getReceipt(tokenHash);
    if (receipt) return receipt;
    const op = await ctx.store.getOp(opId);
    if (!op) {
      const again = await ctx.store.getReceipt(tokenHash);
      if (again) return again;
      // The other attempt ended without a credit (its error went to its caller); let ours run.
      throw new RetryClaim();
    }
    if (isStale(ctx, op)) throw new RetryClaim();
    await sleep(POLL_MS);
  }
  throw new GatewayError('token_pending', {
    message: 'The eCash token is being redeemed; try again shortly',
  });
}

class RetryClaim extends Error {}

export async function receiveToken(
  ctx: WalletContext,
  token: string,
  d: DecodedToken,
  creditIntent?: string,
): Promise<ReceiveReceipt> {
  const opId = `recv:${d.tokenHash}`;
  for (let attempt = 0; attempt < 4; attempt++) {
    const done = await ctx.store.getReceipt(d.tokenHash);
    if (done) return done;
    const entry = newEntry(ctx, opId, 'receive', d.mint, d.unit);
    entry.tokenHash = d.tokenHash;
    if (creditIntent !== undefined) entry.creditIntent = creditIntent;
    entry.faceMsat = d.amountMsat;
    entry.inputTotal = d.amount;
    const existing = await ctx.store.claimOp(entry);
    // The claimed entry is this call's until it settles it: this process's recovery pass leaves it alone.
    if (!existing) return await whileRunning(ctx, opId, () => redeemClaimed(ctx, token, d, entry));
    if (isStale(ctx, existing)) {
      const outcome = await resolveOp(ctx, existing).catch((err: unknown) => {
        throw mapMintError(err);
      });
      const receipt = await ctx.store.getReceipt(d.tokenHash);
      if (receipt) return receipt;
      if (outcome === 'deferred') throw new GatewayError('token_pending');
      continue;
    }
    try {
      return await waitForReceipt(ctx, d.tokenHash, opId);
    } catch (err) {
      if (!(err instanceof RetryClaim)) throw err;
    }
  }
  throw new GatewayError('token_pending');
}

/**
 * The token decoded by `client` with each proof's DLEQ checked here (core/wallet/dleq.ts, libsecp256k1) and left
 * out of what cashu-ts is handed, so that cashu-ts does not check it again in pure JS (≈ 20 ms of CPU a proof,
 * against well under a millisecond here). A proof whose DLEQ is invalid refuses the token as cashu-ts does
 * (`invalid_token`); a proof of a keyset or amount the client does not know keeps its DLEQ, and cashu-ts
 * refuses it or, after the keys are reloaded, checks it. The swap spends these proofs: their DLEQ has no use
 * after it.
 */
function dleqChecked(client: Wallet, token: string): Token {
  const decoded = client.decodeToken(token);
  const proofs = decoded.proofs.map((p) => {
    if (p.dleq === undefined) return p;
    let key: string | undefined;
    try {
      // The keyset's keys by amount, as cashu-ts looks them up (`keys[amount.toString()]`).
      key = (client.keyChain.getKeyset(p.id).keys as Record<string, string>)[p.amount.toString()];
    } catch {
      key = undefined;
    }
    if (key === undefined) return p;
    if (!proofDleqValid(p, key)) throw new CTSError('Token contains a proof with an invalid DLEQ');
    const { dleq: _checked, ...rest } = p;
    return rest;
  });
  return { ...decoded, proofs };
}

async function redeemClaimed(
  ctx: WalletContext,
  token: string,
  d: DecodedToken,
  entry: ReturnType<typeof newEntry>,
): Promise<ReceiveReceipt> {
  const counters = counterCollector();
  let preview: SwapPreview;
  let client: Awaited<ReturnType<typeof ctx.clients.get>>;
  try {
    client = await ctx.clients.get(d.mint, d.unit);
    try {
      preview = await client.prepareSwapToReceive(
        dleqChecked(client, cleanToken(token)),
        { onCountersReserved: counters.on },
        DETERMINISTIC,
      );
    } catch (err) {
      // A keyset the cached keychain does not know yet: reload the mint's keys once.
      if (!(err instanceof CTSError) || err instanceof AmountError || isMintTransportError(err)) throw err;
      ctx.clients.refresh(d.mint, d.unit);
      client = await ctx.clients.get(d.mint, d.unit);
      counters.ranges.length = 0;
      preview = await client.prepareSwapToReceive(
        dleqChecked(client, cleanToken(token)),
        { onCountersReserved: counters.on },
        DETERMINISTIC,
      );
    }
    if (preview.amount.isZero()) throw new GatewayError('token_amount_too_small');
  } catch (err) {
    await ctx.store.deleteOp(entry.id);
    throw mapPrepareError(err);
  }
  entry.inputYs = preview.inputs.map((p) => proofY(p.secret));
  entry.counters = counters.ranges;
  entry.submitted = true;
  if (!(await ctx.store.updateOp(entry))) {
    // Rolled back by another process meanwhile (it judged this one gone): nothing was sent to the mint.
    throw new GatewayError('token_pending', {
      message: 'The eCash token is being redeemed; try again shortly',
    });
  }

  let keep: Awaited<ReturnType<typeof client.completeSwap>>['keep'];
  try {
    ({ keep } = await client.completeSwap(preview));
  } catch (err) {
    const kind = classifyMintFailure(err);
    if (kind !== 'ambiguous') {
      await ctx.store.deleteOp(entry.id);
      throw mapMintError(err);
    }
    // The mint may have swapped: settle from the journal now if it answers, else leave it for recovery.
    const receipt = await afterAmbiguousFailure(ctx, entry, err);
    if (receipt) return receipt;
    throw mapMintError(err);
  }
  crashPoint('after-swap');
  const add = keep.map(toStored);
  const receipt = receiptFor(entry, add);
  // The mint signed these outputs: they and the receipt are stored even if another process decided the entry first.
  await ctx.store.settleOp(entry, { spentYs: [], add, receipt, applyIfGone: true });
  ctx.log.info(
    {
      mint: d.mint,
      unit: d.unit,
      amountMsat: receipt.amountMsat,
      feeMsat: receipt.feeMsat,
      proofs: add.length,
    },
    'wallet received token',
  );
  return receipt;
}
