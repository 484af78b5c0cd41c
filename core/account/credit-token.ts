import { GatewayError } from '../errors.js';
import { ledgerRefusalToError } from '../ledger/errors.js';
import { resolveCredential } from '../ledger/keys.js';
import type { Credential, KeyLookup, KeyMeta, KeyRef, Ledger } from '../ledger/types.js';
import type { ReceiveReceipt, WalletService } from '../wallet/types.js';

/**
 * The ONE implementation of "an eCash token becomes balance": redeem it at its mint (`wallet.receive`,
 * journalled and idempotent by token hash), then credit the ledger (idempotent by token hash). Every caller
 * uses it: the auth stage (bearer token, X-Cashu), wallet create and top-up, and bearer tokens on the wallet
 * routes. No HTTP here.
 *
 * Failure contract:
 * - Refused before redeeming (malformed, untrusted mint, unit, spent, mint down): nothing moved.
 * - Redeemed, then the ledger refuses or is unreachable: the value is held by the operator under the token's
 *   receipt; calling `creditToken` again with the same token credits it (the receive returns the receipt).
 *   A top-up whose key vanished parks the value on the token's own identity instead (usable as a bearer
 *   credential or refunded with /v1/balance/refund), then reports the refusal.
 */

/**
 * The money bundle: the ledger and the wallet an account step acts with (`Money<L>` when a step reads only part of
 * the ledger, e.g. the surplus guard). Routes get it, or a 503, from `requireMoney` (core/routes/account.ts).
 */
export interface Money<L = Ledger> {
  ledger: L;
  wallet: WalletService;
}

/** Where the token's value goes. */
export type CreditTarget =
  /** The token's own identity (its hash): bearer tokens and X-Cashu. */
  | { kind: 'token' }
  /** A new API key made from the deposit (POST /v1/wallet/create; a retry returns the same key). */
  | { kind: 'new-key' }
  /** An existing key's account (top-up). */
  | { kind: 'account'; credential: Credential };

export interface CreditOutcome {
  receipt: ReceiveReceipt;
  /** The identity credited: the token hash, or the target key. */
  credential: Credential;
  /** msats added now (0 when the same token had already been credited there: a replay). */
  creditedMsat: number;
  /** Balance of the credited account after the credit. */
  balanceMsat: number;
  transactionId: string | null;
  /** For `new-key`: the key (plaintext returned once; MUST NOT be logged). */
  apiKey?: string;
  key?: KeyMeta;
}

export async function creditToken(money: Money, token: string, target: CreditTarget): Promise<CreditOutcome> {
  const { ledger, wallet } = money;
  // Refuse what cannot be money before the mint is asked (invalid_token, mint_not_trusted, unsupported_unit).
  wallet.decodeToken(token);
  const receipt = await wallet.receive(token, { creditIntent: creditIntentOf(target) });
  const { tokenHash, amountMsat } = receipt;

  if (target.kind === 'new-key') {
    const r = await ledger.createKeyFromDeposit({ tokenHash, amountMsat });
    if (!r.ok) throw ledgerRefusalToError(r);
    return {
      receipt,
      credential: { apiKey: r.apiKey },
      creditedMsat: r.replay ? 0 : amountMsat,
      balanceMsat: r.balanceMsat,
      transactionId: r.transactionId,
      apiKey: r.apiKey,
      key: r.key,
    };
  }

  const credential: Credential = target.kind === 'token' ? { tokenHash } : target.credential;
  const r = await ledger.credit({
    credential,
    tokenHash,
    amountMsat,
    kind: target.kind === 'token' ? 'deposit' : 'topup',
  });
  if (r.ok) {
    return {
      receipt,
      credential,
      creditedMsat: r.replay ? 0 : amountMsat,
      balanceMsat: r.balanceMsat,
      transactionId: r.transactionId,
    };
  }
  if (target.kind === 'account' && r.code !== 'token_credited_elsewhere')
    await park(ledger, tokenHash, amountMsat);
  throw ledgerRefusalToError(r);
}

/** The key vanished between the caller's check and the credit: keep the value on the token's own identity. */
async function park(ledger: Ledger, tokenHash: string, amountMsat: number): Promise<void> {
  const parked = await ledger.credit({ credential: { tokenHash }, tokenHash, amountMsat, kind: 'deposit' });
  if (!parked.ok && parked.code !== 'token_credited_elsewhere') {
    throw new GatewayError('internal_error', {
      message: 'The token was redeemed but could not be credited',
    });
  }
}

/**
 * Credits redeemed value to an account, idempotent by `tokenHash`; when the account's key is gone, the value
 * is parked on the token's own identity (visible to the operator's audit, refundable) instead of being lost.
 * A token already credited (to this account or, for a park, anywhere) is a replay, not an error.
 */
export async function creditOrPark(
  ledger: Ledger,
  credential: KeyLookup,
  tokenHash: string,
  amountMsat: number,
  kind: 'deposit' | 'topup',
): Promise<void> {
  const r = await ledger.credit({ credential, tokenHash, amountMsat, kind });
  if (r.ok || r.code === 'token_credited_elsewhere') return;
  if (r.code === 'invalid_api_key') return park(ledger, tokenHash, amountMsat);
  throw ledgerRefusalToError(r);
}

/**
 * Where a receive's value goes, as the wallet journals it with the receive (no secret: an account is named by its
 * store identity, never by its API key). `t`: the token's own identity; `k`: a new key from the deposit;
 * `a`: an existing account's key.
 */
type CreditIntent = { t: 1 } | { k: 1 } | { a: KeyRef['keyRef'] };

function creditIntentOf(target: CreditTarget): string | undefined {
  if (target.kind === 'token') return JSON.stringify({ t: 1 } satisfies CreditIntent);
  if (target.kind === 'new-key') return JSON.stringify({ k: 1 } satisfies CreditIntent);
  const r = resolveCredential(target.credential);
  if (r === null) return undefined; // answered invalid_api_key by the credit anyway
  return JSON.stringify({ a: { accountId: r.accountId, keyHash: r.keyHash } } satisfies CreditIntent);
}

/**
 * The wallet's recovery pass completed a receive whose caller never saw the outcome (core/wallet/types.ts
 * `ReceiptSettler`): the value is credited where that caller meant to, as `creditToken` would have. Idempotent by
 * token hash: the client presenting the same token again later finds it credited (a new key: the same key).
 */
export async function creditRecovered(
  ledger: Ledger,
  receipt: ReceiveReceipt,
  creditIntent: string,
): Promise<void> {
  const intent = JSON.parse(creditIntent) as Partial<Record<'t' | 'k' | 'a', unknown>>;
  const { tokenHash, amountMsat } = receipt;
  if (intent.k !== undefined) {
    const r = await ledger.createKeyFromDeposit({ tokenHash, amountMsat });
    if (!r.ok) throw ledgerRefusalToError(r);
    return;
  }
  if (intent.a !== undefined) {
    return creditOrPark(ledger, { keyRef: intent.a as KeyRef['keyRef'] }, tokenHash, amountMsat, 'topup');
  }
  const r = await ledger.credit({ credential: { tokenHash }, tokenHash, amountMsat, kind: 'deposit' });
  if (!r.ok && r.code !== 'token_credited_elsewhere') throw ledgerRefusalToError(r);
}
