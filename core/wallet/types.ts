/**
 * The operator's Cashu wallet: the public contract the paid-call pipeline, the wallet routes and the operator
 * scripts code against. Implementation: `createWallet()` in `core/wallet/wallet.ts`.
 *
 * Money rules this contract guarantees (docs/wallet.md; docs/ledger.md, "Money rules"):
 * - amounts crossing this interface are integer millisatoshis (`…Msat`), except where a field says "in unit";
 * - `receive()` persists the new proofs and the receipt BEFORE it resolves; a credit is never visible for
 *   proofs we do not hold;
 * - `receive()` is idempotent by `tokenHash` across concurrent calls and processes: one swap, one receipt;
 * - every mint call is journalled first (NUT-13 deterministic outputs, counters persisted before use), so a
 *   crash between the mint's answer and our write is repaired by `recover()` (NUT-07 + NUT-09);
 * - errors are `GatewayError`s from `core/errors.ts` (see each method); no token, proof secret or seed is ever
 *   logged, returned in an error, or put in error details.
 */
import type { Logger } from '../log.js';
import type { StoreConnection } from '../store/connection.js';

/** Units the gateway accepts. Other units are refused with `unsupported_unit`. */
export type CashuUnit = 'sat' | 'msat';

/** What `decodeToken()` learns from a token without calling the mint. */
export interface DecodedToken {
  /** Normalised mint URL (lower-case host, no trailing slash). */
  mint: string;
  unit: CashuUnit;
  /** Face value, in `unit` (before the mint's input fee). */
  amount: number;
  /** Face value in msats. */
  amountMsat: number;
  /** Number of proofs: the swap's input fee is `ceil(proofs × input_fee_ppk / 1000)` in unit. */
  proofs: number;
  /** `cashuA` (v3, JSON) or `cashuB` (v4, CBOR). */
  version: 3 | 4;
  /** See {@link WalletService.tokenHash}. */
  tokenHash: string;
  /** From a mint not in CASHU_MINTS, accepted because FOREIGN_MINTS=swap: its value is swapped to the primary. */
  foreign?: boolean;
}

/** The result of redeeming one token; stored, and returned again for the same token. */
export interface ReceiveReceipt {
  /** Identity of the redeemed token (see {@link WalletService.tokenHash}). */
  tokenHash: string;
  mint: string;
  unit: CashuUnit;
  /** Face value of the token, in msats. */
  faceMsat: number;
  /** What the swap actually yielded after the mint's input fee, in msats: credit exactly this. */
  amountMsat: number;
  /** The mint's input fee paid to redeem, in msats (`faceMsat - amountMsat`). */
  feeMsat: number;
  /** Unix ms when the swap was committed to our store. */
  receivedAt: number;
  /**
   * The foreign mint the token came from when its value was swapped to the primary mint over Lightning
   * (FOREIGN_MINTS=swap); `mint` is then the primary and `feeMsat` the whole swap cost (input fee + fee reserve).
   */
  swappedFrom?: string;
}

export interface SendOptions {
  /** Mint to draw on; default the primary (first of CASHU_MINTS). Must be trusted. */
  mint?: string;
  /**
   * Unit of the token to make. Default: `sat` when the wallet holds enough sat proofs there (amount rounded
   * down to whole sats), otherwise `msat`.
   */
  unit?: CashuUnit;
  /** Encode as `cashuA` (v3) instead of the default `cashuB` (v4). */
  tokenVersion?: 3 | 4;
  /**
   * The token pays out this ledger hold: a payout record (token + hold) is written in the same atomic step
   * that settles the send, so a process killed before the hold is committed leaves the token to the recovery
   * pass instead of in memory only. The caller deletes it with `finishPayout` once the hold is committed.
   */
  payout?: Omit<PayoutRecord, 'token'>;
}

export interface SendResult {
  /** The bearer token. Secret: never log it. */
  token: string;
  /** Value of the token, in msats: the requested amount rounded DOWN to the unit. */
  amountMsat: number;
  /** The mint's input fee the operator paid to make the token, in msats (not taken from `amountMsat`). */
  feeMsat: number;
  mint: string;
  unit: CashuUnit;
}

export interface PaymentRequestOptions {
  /** Amount asked for, in msats; rounded UP to the unit. Omit for "any amount". */
  amountMsat?: number;
  /** Unit asked for; default `sat`. */
  unit?: CashuUnit;
  /** Free text shown by the payer's wallet. */
  description?: string;
}

export interface BalanceLine {
  mint: string;
  unit: CashuUnit;
  /** Sum of proofs held (available + reserved by an operation in flight), in unit. */
  amount: number;
  amountMsat: number;
  /** Part of `amount` reserved by sends/payouts in flight, in unit. */
  reserved: number;
  proofs: number;
}

export interface SolvencyReport {
  /** Value of our proofs the mints report UNSPENT, in msats. */
  proofsMsat: number;
  /** Value of our proofs the mints report PENDING (in-flight melts), in msats; not counted as funds. */
  pendingMsat: number;
  /** Value of proofs we hold that the mints report SPENT (should be 0; signals a bug), in msats. */
  spentMsat: number;
  /** What `totalUserBalancesMsat()` returned. */
  userBalancesMsat: number;
  /** `proofsMsat >= userBalancesMsat`. */
  solvent: boolean;
  perMint: Array<{
    mint: string;
    unit: CashuUnit;
    unspentMsat: number;
    pendingMsat: number;
    spentMsat: number;
  }>;
}

export interface InvoicePayment {
  /** Amount the invoice asked for, in msats. */
  amountMsat: number;
  /** Lightning fee actually paid plus the mint's input fee, in msats. */
  feeMsat: number;
  /** Lightning preimage, when the mint reports one. */
  preimage: string | null;
  mint: string;
  unit: CashuUnit;
  quote: string;
}

/** What a receive's caller will do with the value (see `ReceiptSettler`). */
export interface ReceiveOptions {
  /**
   * Where the caller credits the value, opaque to the wallet (core/account/credit-token.ts writes and reads it; it
   * must hold no secret). Journalled with the receive: when the caller never learns the outcome (its process died,
   * or the mint's answer was lost and a later recovery pass decides the swap), the pass hands the receipt and this
   * intent to `CreateWalletOptions.receipts`, so the value is credited without waiting for the client to present
   * the token again.
   */
  creditIntent?: string;
}

/**
 * Credits the value of a receive a recovery pass completed (core/account/credit-token.ts `creditRecovered`):
 * idempotent by the receipt's token hash, as every credit is (the client presenting the same token again later
 * finds it credited). Throws when the ledger cannot take it: logged; the client's own retry still credits it.
 */
export type ReceiptSettler = (receipt: ReceiveReceipt, creditIntent: string) => Promise<void>;

export interface RecoveryReport {
  /** Journal entries examined. */
  examined: number;
  /** Receives completed from the journal (receipt written, proofs restored via NUT-09). */
  receivesCompleted: number;
  /** Of those, receives whose value the pass credited where their caller meant to (`ReceiveOptions.creditIntent`). */
  receiptsCredited: number;
  /** Operations rolled back (the mint never saw them; reserved proofs released). */
  rolledBack: number;
  /** Sends / payouts whose outputs were restored. */
  outputsRestored: number;
  /** Entries left for a later pass (mint unreachable, or still pending at the mint). */
  deferred: number;
  /** Payout records of payouts nobody finished, resolved (token back in our proofs, hold undone). */
  payoutsResolved: number;
  /**
   * `ownerCheck`: entries not examined because a live process may still be working on them — this process's own
   * entries neither abandoned nor `claimStaleAfterMs` old, and every entry of a live neighbour (`liveOwners`).
   */
  fresh: number;
  /** `ownerCheck`: of `fresh`, the entries of other live instances sharing the store (left to them). */
  liveOwners: number;
  /** `ownerCheck` with fresh entries: in how many ms the youngest of this process's own counts as stale. */
  nextStaleInMs?: number;
}

export interface RecoverOptions {
  /**
   * Decide only the entries whose owner is gone (core/wallet/owners.ts): written by an instance whose heartbeat is
   * stale or missing, or by this instance's predecessor (same instance name, earlier start); this process's own
   * entries only once abandoned or `claimStaleAfterMs` old; entries with no owner by the age rule. A live
   * neighbour's entry is left alone and counted (`liveOwners`): deciding it against the mint while its owner is
   * mid-operation (its melt or swap not yet at the mint) would roll back what the mint then performs — proofs
   * spent at the mint back in the wallet, a paid Lightning refund's hold released. Every pass of a gateway uses
   * this (start, WALLET_RECOVERY_MS, the console's action). Off (every entry): a tool run while no gateway uses
   * the store.
   */
  ownerCheck?: boolean;
}

/**
 * The wallet service. One per process; all methods are safe to call concurrently, and from several processes
 * sharing one Redis store.
 */
export interface WalletService {
  /** Trusted mints, normalised; the first is the primary (change and withdrawals). */
  readonly mints: readonly string[];

  /**
   * Parses a `cashuA…` (v3) or `cashuB…` (v4) token without contacting the mint.
   * @throws GatewayError `invalid_token` (malformed), `mint_not_trusted`, `unsupported_unit`.
   */
  decodeToken(token: string): DecodedToken;

  /**
   * The token's identity: lower-case hex `sha256("cashu-token-v1:" + sorted(proof secrets).join(","))`.
   * Stable across v3/v4 encodings of the same proofs and independent of memo/DLEQ. The ledger treats it as
   * opaque: it is the bearer-token account id and the idempotency key of a credit.
   * @throws GatewayError `invalid_token`.
   */
  tokenHash(token: string): string;

  /**
   * Redeems a token by swapping it at its (trusted) mint for fresh proofs of ours, verifying DLEQ proofs
   * when present, and persists proofs + receipt before resolving. Idempotent by tokenHash: a repeat or
   * concurrent call returns the same receipt (one swap).
   * @throws GatewayError `invalid_token` (malformed, invalid proof or DLEQ, unknown keyset),
   *   `mint_not_trusted`, `unsupported_unit`, `token_already_spent` (spent by someone else),
   *   `token_pending` (pending at the mint, or being redeemed by another process right now),
   *   `token_amount_too_small` (worth nothing after the input fee), `mint_unavailable` (nothing credited;
   *   a retry with the same token is safe), `store_unavailable`.
   */
  receive(token: string, opts?: ReceiveOptions): Promise<ReceiveReceipt>;

  /**
   * Makes a token worth `amountMsat` rounded down to the unit, drawing on the operator's proofs (reserved
   * atomically; input fees paid by the operator). Used for X-Cashu change and withdrawals.
   * @throws GatewayError `invalid_request` (amount < 1 unit), `mint_not_trusted`,
   *   `service_unavailable` (the operator's proofs at that mint/unit do not cover it),
   *   `mint_unavailable`, `store_unavailable`.
   */
  send(amountMsat: number, opts?: SendOptions): Promise<SendResult>;

  /**
   * A NUT-18 `creqA…` payment request naming the trusted mints, for the NUT-24 `X-Cashu` header on 402.
   */
  createPaymentRequest(opts?: PaymentRequestOptions): string;

  /**
   * Start-up recovery: finishes or rolls back every journalled operation a crash left behind (NUT-07 state
   * check + NUT-09 restore of our deterministic outputs), and hands payout records at least `claimStaleAfterMs` old
   * to the `payouts` settler. Call once before serving; safe to call again. Entries whose mint (or, for a
   * payout record, the ledger) is unreachable stay in the journal for the next pass.
   */
  recover(opts?: RecoverOptions): Promise<RecoveryReport>;

  /** Proofs held per mint and unit, from the store (no mint call). */
  balances(): Promise<BalanceLine[]>;

  /**
   * Asks the mints (NUT-07) which of our proofs are unspent and compares their value with the users' total.
   * Read-only. @throws GatewayError `mint_unavailable`.
   */
  checkSolvency(totalUserBalancesMsat: () => Promise<number>): Promise<SolvencyReport>;

  /**
   * Pays a Lightning invoice from the operator's proofs (NUT-05 melt at `opts.mint`, default primary;
   * NUT-08 change kept). `opts.quote`: a melt quote `quoteInvoice` made for this invoice (else one is made).
   * `opts.hold`: the melt pays out this ledger hold (a user's Lightning refund): the melt's journal entry
   * names the hold, and the entry that settles it is replaced, in the same atomic step, by a Lightning payout
   * record saying whether the invoice was paid and what it cost (`getLightningPayout`), whichever process or
   * recovery pass decides it. The payout must have been started (`startPayout`, before the hold): the melt goes
   * on only if it removes that start entry itself, so a recovery pass that took the start over (to abort the hold
   * of an owner it judged gone) and this melt never both act. @throws GatewayError `invalid_request` (bad
   * invoice), `service_unavailable` (insufficient proofs, the payment pending at the mint, or the start taken over
   * or absent: nothing paid), `mint_unavailable`.
   */
  payInvoice(
    invoice: string,
    opts?: { mint?: string; unit?: CashuUnit; quote?: MeltQuoteInfo; hold?: PayoutHold },
  ): Promise<InvoicePayment>;

  /**
   * A NUT-05 melt quote for the invoice (no money moves): what the mint asks to pay it, fee reserve included.
   * `amountMsat`: what to pay an invoice that names no amount (NUT-05 `amountless`; a multiple of 1000 for a sat
   * wallet); refused beside an invoice that names one. @throws GatewayError `invalid_request` (bad invoice, an
   * amount missing or extra, or the mint refused it), `mint_unavailable`.
   */
  quoteInvoice(
    invoice: string,
    opts?: { mint?: string; unit?: CashuUnit; amountMsat?: number },
  ): Promise<MeltQuoteInfo>;

  /**
   * The Lightning payout of a hold (see `payout`'s `opts.hold`): `paid` undefined while the melt is undecided
   * (its journal entry is open), true or false once decided; null when there is none (never started, or
   * finished with `finishPayout`).
   */
  getLightningPayout(holdId: string): Promise<LightningPayoutRecord | null>;

  /**
   * A Lightning payout is starting (core/account/lightning-refund.ts): journalled BEFORE its hold is made, so that a
   * process that dies before its melt is journalled leaves something a recovery pass decides (its hold aborted, once
   * the owner is gone; see `PayoutStart`).
   */
  startPayout(holdId: string, accountId: string): Promise<void>;
  /** Whether the payout's start entry is still there (false: a recovery pass gave it up: do not melt). */
  payoutStarted(holdId: string): Promise<boolean>;
  /** The start entry is done with (its melt journalled, or the start given up). */
  endPayoutStart(holdId: string): Promise<void>;

  /**
   * Lightning deposit, step 1: a NUT-04 bolt11 mint quote for `amountSats` at the primary mint; its `request`
   * is the invoice to pay. @throws GatewayError `mint_unavailable`.
   */
  createLightningQuote(amountSats: number): Promise<LightningQuote>;

  /** The quote's state at the primary mint (UNPAID / PAID / ISSUED). @throws GatewayError `mint_unavailable`. */
  checkLightningQuote(quote: string, amountSats: number): Promise<LightningQuote>;

  /**
   * Lightning deposit, step 2: mints a paid quote onto deterministic outputs, exactly once across processes
   * and crashes (journalled; `recover()` finishes a mint whose answer was lost). The receipt's `tokenHash`
   * identifies the deposit (credit it like a token). @throws QuoteNotPaidError (mint-quote.ts) while unpaid,
   * GatewayError `token_pending` (another process is minting it), `mint_unavailable`.
   */
  /**
   * NUT-17: calls `onChange` with each of these primary-mint quotes' state as the mint pushes it (current state
   * first). Resolves to the canceller, or null when the mint offers no `bolt11_mint_quote` subscription.
   */
  watchLightningQuotes?(
    quotes: string[],
    onChange: (quote: string, state: 'UNPAID' | 'PAID' | 'ISSUED') => void,
    onError: (err: Error) => void,
  ): Promise<(() => void) | null>;
  mintLightningQuote(quote: string, amountSats: number): Promise<ReceiveReceipt>;

  /**
   * The Lightning payouts of ledger holds not finished yet (a melt undecided at the mint, or decided and its hold
   * not yet settled), from the journal, oldest first: the open-payouts metric and the console.
   */
  openPayouts(): Promise<OpenPayoutEntry[]>;

  /**
   * Deletes the payout record of a committed hold, just before its token is handed out. false: the record was
   * already gone (a recovery pass resolved it: the token was taken back), so the token MUST NOT be handed out.
   */
  finishPayout(holdId: string): Promise<boolean>;

  /**
   * Claims a payout's record to take its token back (a recovery pass, or the payout's own undo): the record is
   * moved from `payout:<holdId>` to `payout-reclaim:<holdId>` atomically against the owner's `finishPayout`, which
   * answers false from then on, so the token is never handed out. Returns the record when this call claimed it or
   * an earlier claim did (a pass that died after its claim: the steps after it are idempotent); null when there is
   * none: the owner finished it (the token was handed out) or it was settled.
   */
  claimPayout(holdId: string): Promise<PayoutRecord | null>;

  /** Deletes a payout's record, claimed or not, once its token is back and its hold settled. */
  endPayoutClaim(holdId: string): Promise<void>;

  /** Releases timers and mint connections (not the store connection, which the caller owns). */
  close(): Promise<void>;
}

/**
 * Resolves a payout record nobody finished (core/account/pay-out.ts `settlePayout`): needs the ledger, which
 * the wallet does not know, so the one who builds both supplies it. Throws to leave the record for a later
 * pass.
 */
/** A Lightning payout whose process died before its melt was journalled: its hold is to be aborted. */
export interface PayoutStart {
  holdId: string;
  accountId: string;
  started: true;
}

export type PayoutSettler = (
  record: PayoutRecord | LightningPayoutRecord | PayoutStart,
  wallet: WalletService,
) => Promise<void>;

/** A NUT-04 bolt11 mint quote at the primary mint (unit sat). */
export interface LightningQuote {
  /** The mint's quote id. */
  quote: string;
  /** The BOLT11 invoice to pay. */
  request: string;
  amountSats: number;
  state: 'UNPAID' | 'PAID' | 'ISSUED';
  /** Unix ms, or null when the mint gives no expiry. */
  expiresAt: number | null;
}

/** An open Lightning payout as the journal shows it (`WalletService.openPayouts`). */
export interface OpenPayoutEntry {
  holdId: string;
  accountId: string;
  /** When its journal entry was written, ms. */
  sinceMs: number;
  /** `pending`: the melt is not decided; `paid` / `failed`: decided, the hold being settled. */
  state: 'pending' | 'paid' | 'failed';
}

export interface CreateWalletOptions {
  /** The money store shared with the ledger; the wallet keeps its own keys/tables in it. */
  conn: StoreConnection;
  /** Trusted mint URLs (CASHU_MINTS); the first is the primary. At least one. */
  mints: string[];
  /**
   * NUT-13 seed: 64 hex chars (32 bytes) or a BIP-39 style 128-hex seed (CASHU_SEED). When absent, one is
   * generated once and kept in the store (all processes sharing the store share it).
   */
  seed?: string | undefined;
  log: Logger;
  /** Per-request timeout for mint calls, ms (default 15 000). */
  mintTimeoutMs?: number;
  /**
   * How long a journalled receive may belong to a live process before another process treats it as left by a
   * crash and recovers it (default 2 × mintTimeoutMs). Meanwhile a second caller with the same token waits.
   */
  claimStaleAfterMs?: number;
  /** eCash from mints not in `mints`: refused (default) or swapped to the primary mint over Lightning. */
  foreignMints?: ForeignMintPolicy;
  /**
   * Resolves payout records left behind (a process killed between making a withdrawal token and committing
   * its hold). `recover()` hands it every record at least `claimStaleAfterMs` old; without it, such records
   * stay in the journal (counted as deferred) until a wallet that has one runs.
   */
  payouts?: PayoutSettler;
  /** Credits receives a recovery pass completed for a caller that never saw the outcome (see ReceiveOptions). */
  receipts?: ReceiptSettler;
  /**
   * This process as the owner of the journal entries it writes (core/wallet/owners.ts): `id` new at every start,
   * `name` stable across restarts (INSTANCE_NAME). The wallet records a heartbeat in the store every
   * `heartbeatMs` (default deadAfterMs / 3) and forgets it at close; an instance whose heartbeat is older than
   * `deadAfterMs` (default claimStaleAfterMs) is gone. Without it entries carry no owner (offline tools).
   */
  instance?: { id: string; name: string; deadAfterMs?: number; heartbeatMs?: number };
}

/** FOREIGN_MINTS, FOREIGN_MINT_MAX_FEE_PERCENT, FOREIGN_MINT_MAX_SATS. */
export interface ForeignMintPolicy {
  mode: 'refuse' | 'swap';
  /** A swap whose quoted fees (input fee + Lightning fee reserve) exceed this share of the face is refused. */
  maxFeePercent: number;
  /** Largest foreign token accepted, in sats. */
  maxSats: number;
}

/** A ledger hold a payout pays out (the part of a payout record that names it). */
export interface PayoutHold {
  /** The ledger hold: `ownedId(kind)`, so its owner process is in it (core/ledger/owner.ts); a Lightning
   *  refund's hold names no process (it must outlive a crash until its melt is decided). */
  holdId: string;
  accountId: string;
  /** The amount held (and debited by a commit), msats: what a credit-back returns. */
  heldMsat: number;
  /**
   * The credential the hold was made with, to credit the account back if the hold was committed but the token
   * not handed out. It may be an API key: kept here only while the payout is open, never logged. Anyone who can
   * read this store can already read the proofs and the seed, which are worth more.
   */
  credential: { apiKey: string } | { tokenHash: string } | { keyRef: { accountId: string; keyHash: string } };
}

/** What a payout record needs to undo a payout nobody finished (the `payout` of a journal entry, store/proof-store.ts). */
export interface PayoutRecord extends PayoutHold {
  /** The token (bearer money: never log it). */
  token: string;
}

/** A NUT-05 melt quote (`quoteInvoice`). */
export interface MeltQuoteInfo {
  quote: string;
  mint: string;
  unit: CashuUnit;
  /** What the invoice asks, msats (in whole units of `unit`). */
  amountMsat: number;
  /** The Lightning fee reserve the mint wants on top, msats; what the payment does not use comes back as change. */
  feeReserveMsat: number;
}

/**
 * A Lightning payout of a ledger hold (`payout` with `opts.hold`), kept in the wallet journal from before the
 * melt until the hold is committed or aborted (core/account/lightning-refund.ts): on the melt's entry while the
 * mint has not decided, then as its own `payout:<holdId>` entry with the decision.
 */
export interface LightningPayoutRecord extends PayoutHold {
  quote: string;
  mint: string;
  /** The invoice's amount, msats. */
  amountMsat: number;
  feeReserveMsat: number;
  /** undefined: the melt is not decided yet; true: the invoice is paid; false: it was not (nothing left the proofs). */
  paid?: boolean;
  /** Paid: the Lightning fee the mint charged plus its input fee, msats (what the proofs lost beyond the amount). */
  feeMsat?: number;
  preimage?: string | null;
}
