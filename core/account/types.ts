import type { KeyMeta } from '../ledger/types.js';

/**
 * The account layer's types (lightning-deposits.ts and refund-sweep.ts are the implementation): what the plugin
 * contract (core/service-types.ts `Services.lightning`, `Services.refundSweep`), the payment doors and the routes
 * name without importing the implementation, which moves money through the ledger.
 */

export type DepositStatus = 'pending' | 'paid' | 'issued' | 'expired';

export interface DepositRecord {
  idHash: string;
  /** `door`: an invoice an unpaid call was offered (L402, MPP: core/doors/), credited to `doorIdentity`. */
  kind: 'create' | 'topup' | 'door';
  quote: string;
  request: string;
  amountSats: number;
  /** Unix ms, or null when the mint gives none. */
  expiresAt: number | null;
  createdAt: number;
  status: DepositStatus;
  name?: string | null;
  topupApiKey?: string;
  /** `door` records: the token-hash identity the invoice's value is credited to (from its payment hash). */
  doorIdentity?: string;
  creditedMsat?: number;
  /** Once issued: the hash identity of the minted proofs, from which the `create` key is derived (status()
   *  reads the key back from it, without asking the mint again). */
  receiptHash?: string;
  attempts: number;
  nextAttemptAt: number;
}

export interface DepositView {
  status: DepositStatus;
  amountSats: number;
  expiresAt: number | null;
  request: string;
  creditedMsat?: number;
  /** create only, once issued: the key (a repeat of createKeyFromDeposit returns the same one). */
  apiKey?: string;
}

/** Lightning deposits the server finishes (`Services.lightning`; lightning-deposits.ts, docs/wallet.md). */
export interface LightningDeposits {
  init(): Promise<void>;
  /** A new deposit: asks the primary mint for a quote and persists the record. Returns the capability id. */
  create(input: {
    kind: 'create' | 'topup';
    amountSats: number;
    name?: string | null;
    topupApiKey?: string;
  }): Promise<{ id: string; record: DepositRecord }>;
  /**
   * An invoice offered through a payment door (core/doors/), keyed by its payment hash and credited to
   * `identity` once paid.
   */
  openDoor(input: {
    amountSats: number;
    identity: (paymentHash: string) => string;
  }): Promise<{ record: DepositRecord; paymentHash: string }>;
  /**
   * Names another identity to credit a door invoice to while it is not credited yet; the record as it now is, or
   * null when no such invoice was offered.
   */
  retargetDoor(paymentHash: string, identity: string): Promise<DepositRecord | null>;
  /**
   * Finishes the door invoice with this payment hash now: null when no such invoice was offered here; `failed`:
   * the attempt failed (mint unreachable). `checkMint: false` only reads the record.
   */
  finishDoor(
    paymentHash: string,
    o?: { checkMint?: boolean },
  ): Promise<{ record: DepositRecord; failed: boolean } | null>;
  /** The deposit the capability `id` names (null when unknown), finished first if it is due. */
  status(id: string, kind?: DepositRecord['kind']): Promise<DepositView | null>;
  /** Moves one record as far as it can go now: expired, or minted and credited (issued). */
  finish(rec: DepositRecord): Promise<DepositRecord>;
  /** One pass over the due records; returns how many became issued or expired. */
  watchOnce(limit?: number): Promise<number>;
  /** Runs watchOnce every `everyMs` (never two passes at once) until stop(). */
  start(everyMs?: number): void;
  stop(): Promise<void>;
}

/** The expired-key sweep (`Services.refundSweep`; refund-sweep.ts): refunds expired keys to their address. */
export interface RefundSweep {
  /** A key's refund address was set: its job is due at its expiry (replacing any earlier one). */
  schedule(key: KeyMeta): Promise<void>;
  start(): void;
  stop(): Promise<void>;
  /** One pass: claims the due jobs and works on each. Returns how many were claimed. */
  tick(max?: number): Promise<number>;
}
