import type { CashuUnit, LightningPayoutRecord, PayoutRecord, ReceiveReceipt } from '../types.js';

/**
 * The operator's proof store: proofs, NUT-13 counters, the operation journal and receive receipts, kept in
 * the ledger's backend (Redis or SQLite). Implementations MUST make each method atomic: a crash leaves either
 * the state before or after a call, never a mix. Proof material here is money: never log it.
 */

/** One proof we hold, as stored (amount in the keyset's unit). */
export interface StoredProof {
  /** hash_to_curve(secret), compressed hex: the proof's identity at the mint (NUT-07). */
  y: string;
  id: string;
  amount: number;
  secret: string;
  C: string;
  dleq?: { e: string; s: string; r?: string };
}

/** A pool is all proofs of one mint in one unit; every operation works on exactly one pool. */
export interface Pool {
  mint: string;
  unit: CashuUnit;
}

export interface CounterRange {
  keysetId: string;
  start: number;
  count: number;
}

/**
 * Write-ahead record of one mint operation. Written before the mint is called, with every deterministic
 * output counter the operation uses, and deleted in the same atomic step that stores the result.
 */
export interface JournalEntry {
  /**
   * `recv:<tokenHash>` (doubles as the cross-process claim on a token), `send:<uuid>`, `melt:<uuid>`,
   * `mint:<quote hash>` (the claim on a paid Lightning mint quote, see mint-quote.ts), `swap:<tokenHash>` (a
   * foreign-mint token being moved to the primary mint, see foreign-swap.ts; `mint` is the foreign mint),
   * `payout:<holdId>` (a token made for a ledger withdrawal hold and not yet handed out, see `payout`, or a
   * decided Lightning payout of a hold, see `lightning`), `payout-reclaim:<holdId>` (such a token's record claimed
   * to take the token back, see `WalletService.claimPayout`); `melt:<holdId>` for a melt paying out a hold.
   */
  id: string;
  kind: 'receive' | 'send' | 'melt' | 'mint' | 'swap' | 'payout';
  mint: string;
  unit: CashuUnit;
  createdAt: number;
  /** Fingerprint of the seed the counters belong to (recovery refuses another seed). */
  seedId: string;
  /** Ys of the inputs (receive: the token's proofs; send/melt: the reserved proofs, filled after reserve). */
  inputYs: string[];
  /** Sum of the inputs, in unit. */
  inputTotal: number;
  /** Counter ranges reserved for our outputs; empty until the outputs are prepared. */
  counters: CounterRange[];
  /** True once the request may have reached the mint. */
  submitted: boolean;
  /** Set when a live process gave up on an ambiguous answer: any process may recover it at once. */
  abandoned?: boolean;
  /**
   * When the mint call's answer was lost (timeout, reset), ms: the request may still be queued on its way to the
   * mint, so the entry is not rolled back on "nothing happened" until that can no longer be so (journal.ts).
   */
  ambiguousAt?: number;
  /** A melt the mint has answered for (PENDING seen): from then on an UNPAID quote means the payment failed. */
  seenAtMint?: boolean;
  /** The process instance that wrote the entry (absent: written by an offline tool or an older version). */
  owner?: EntryOwner;
  tokenHash?: string;
  /**
   * `lnstart:<holdId>` (kind `payout`): a Lightning payout's hold is being made or its invoice fetched, its melt not
   * journalled yet. Written before the hold and deleted once the melt is journalled (or the start given up): a
   * process that dies in between leaves this entry, and a recovery pass (once its owner is gone) aborts the hold
   * — without it, a hold that never expires stayed with nothing to decide it.
   */
  payoutStart?: { holdId: string; accountId: string };
  /** receive: where its caller credits the value (ReceiveOptions.creditIntent, opaque here; no secret). */
  creditIntent?: string;
  faceMsat?: number;
  quote?: string;
  /** swap: the primary mint's quote (paid by the foreign melt) and its amount in sats. */
  mintQuote?: string;
  mintAmount?: number;
  /**
   * swap: the NUT-08 fee change of the foreign melt, from the melt's answer (the signatures on our blank
   * outputs, unblinded), as a token of the foreign mint — bearer money of an untrusted mint: never log it.
   * `null`: the melt answered with no change. Absent: the answer was never seen (a crash or an ambiguous
   * answer): recovery then restores the change from `counters`, and only from a mint offering NUT-09.
   */
  meltChange?: string | null;
  /**
   * payout: the token made for a withdrawal hold, written in the same atomic step that settles the send (so
   * the token is never only in memory) and deleted once the hold is committed and the token handed out. A
   * payout record left behind is resolved by the recovery pass: token received back, hold aborted or, if the
   * hold was committed, the held amount credited back (core/account/pay-out.ts). Holds no reserved proofs.
   */
  payout?: PayoutRecord;
  /**
   * melt `melt:<holdId>`: the ledger hold this melt pays out (a user's Lightning refund), `paid` not set yet.
   * payout `payout:<holdId>`: the same with the mint's decision, written in the atomic step that settles the
   * melt, and deleted once the hold is committed (paid) or aborted (not paid). Holds no reserved proofs.
   */
  lightning?: LightningPayoutRecord;
}

export interface HeldProof extends StoredProof, Pool {
  /** Journal id of the operation holding it, or null when available. */
  reservedBy: string | null;
}

export interface SettleInput {
  /** Proofs of this op that the mint consumed: removed. */
  spentYs: string[];
  /** New proofs of ours (available). */
  add: StoredProof[];
  /** Receipt to store under receipt.tokenHash (receive only). */
  receipt?: ReceiveReceipt;
  /** A journal entry written in the same atomic step (a send's payout record, which outlives the send). */
  next?: JournalEntry;
  /**
   * The entry's own operation settling what the mint did (inputs spent, outputs signed): when another process
   * decided the entry first, `spentYs`, `add` and `receipt` are still applied — they are facts of the mint, and
   * the other process may have released the spent inputs into the pool or not restored these outputs — but
   * nothing is released and `next` is not written. Recovery passes leave it unset.
   */
  applyIfGone?: boolean;
}

/** A process instance writing journal entries: who decides an entry is judged by it (core/wallet/owners.ts). */
export interface EntryOwner {
  /** Random per process start. */
  id: string;
  /** Stable across restarts of the same instance (INSTANCE_NAME): a restarted gateway finishes its predecessor's. */
  name: string;
  startedAt: number;
}

/** An instance's heartbeat as the store keeps it. */
export interface OwnerBeat extends EntryOwner {
  beatAt: number;
}

export interface ProofStore {
  readonly kind: 'redis' | 'sqlite';
  /** Applies migrations / loads scripts. Idempotent. */
  init(): Promise<void>;
  /** Stores `value` under `key` unless present; returns what is stored. */
  metaSetIfAbsent(key: string, value: string): Promise<string>;
  /** Atomically reserves `n` counters of a keyset; returns the first. */
  reserveCounters(keysetId: string, n: number): Promise<number>;
  advanceCounter(keysetId: string, minNext: number): Promise<void>;
  counters(): Promise<Record<string, number>>;
  getReceipt(tokenHash: string): Promise<ReceiveReceipt | null>;
  /** Inserts the entry unless its id exists; returns null on success, else the existing entry. */
  claimOp(entry: JournalEntry): Promise<JournalEntry | null>;
  /** Writes the entry, creating it if absent (a payout's start entry). */
  putOp(entry: JournalEntry): Promise<void>;
  /**
   * Rewrites the entry only while it is there; false (nothing written) when another process settled or deleted it
   * meanwhile. How an operation updates its own entry: it never brings back an entry someone else decided.
   */
  updateOp(entry: JournalEntry): Promise<boolean>;
  getOp(id: string): Promise<JournalEntry | null>;
  listOps(): Promise<JournalEntry[]>;
  /** Deletes the entry; true when it existed (atomic: of two concurrent callers, one gets true). */
  deleteOp(id: string): Promise<boolean>;
  /**
   * Moves the entry under `fromId` to `entry.id`, written as `entry`, when it is still there; true when moved.
   * Atomic against `deleteOp(fromId)`: of a move and a delete at once, exactly one finds the entry.
   */
  moveOp(fromId: string, entry: JournalEntry): Promise<boolean>;
  /**
   * Atomically picks available proofs of `entry`'s pool (largest first) until their sum covers
   * `target + ceil(count × feePpk / 1000)`, marks them reserved by `entry.id` and writes the entry (with
   * inputYs/inputTotal filled). Returns the proofs, or null (nothing changed) when the pool cannot cover it.
   */
  reserveProofs(entry: JournalEntry, target: number, feePpk: number): Promise<StoredProof[] | null>;
  /**
   * Compare-and-settle, atomically and only while the entry `entry.id` is there with the `submitted` the caller
   * read (a rollback decided on "not sent yet" never applies once its owner sent the request): removes `spentYs`, adds `add` to
   * the op's pool, releases the op's other reserved proofs, stores the receipt (if any), deletes the journal entry
   * and writes `next` (if any); true. When the entry is gone (another process decided it), changes nothing and
   * answers false (but see `SettleInput.applyIfGone`). Rolling back is `settleOp(entry, {spentYs: [], add: []})`.
   * Of two processes settling one entry at once, exactly one gets true.
   */
  settleOp(entry: JournalEntry, input: SettleInput): Promise<boolean>;
  listProofs(): Promise<HeldProof[]>;
  /** Records the instance's heartbeat (`beat.beatAt`). */
  beat(beat: OwnerBeat): Promise<void>;
  /** Every instance heartbeat recorded (and not forgotten). */
  owners(): Promise<OwnerBeat[]>;
  /** Forgets an instance's heartbeat (a clean stop: its entries are anyone's at once). */
  forgetOwner(id: string): Promise<void>;
}
