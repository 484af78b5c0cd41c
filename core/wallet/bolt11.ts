import { createHash } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bech32 } from '@scure/base';
import { decode } from 'light-bolt11-decoder';

/**
 * BOLT11 invoices, read in one place: every amount the gateway checks before paying an invoice (the operator
 * withdrawal, a refund to a Lightning address) and every invoice the dev mint melts goes through `decodeBolt11`.
 * The fields come from `light-bolt11-decoder` (bech32 checksum, amount multipliers, tagged fields); that library
 * does not check signatures, so the signature is checked here: the payee's key must be recoverable from it, and
 * equal the `n` field when there is one (BOLT 11, "Requirements" for a reader). Anything else is not an invoice.
 */

/** What a valid invoice carries. Amounts in msats; hex strings lowercase. */
export interface Bolt11Invoice {
  /** `lnbc`, `lntb`, `lntbs`, `lnbcrt` or `lnsb`. */
  prefix: string;
  /** null: the invoice has no amount (the payer chooses). */
  amountMsat: bigint | null;
  paymentHash: string;
  /** The payee's node key (33-byte compressed), recovered from the signature. */
  payee: string;
  /** Unix seconds. */
  timestamp: number;
  /** Seconds after `timestamp` (BOLT 11 default 3600 without an `x` field). */
  expirySeconds: number;
  description: string | undefined;
}

/**
 * The longest string read as an invoice: what a QR code holds in alphanumeric mode, which BOLT11 invoices are
 * made to fit. Longer input is refused before any decoding.
 */
const MAX_INVOICE_CHARS = 7089;
/** A signature is 104 five-bit words (64 bytes r‖s and one recovery byte). */
const SIGNATURE_WORDS = 104;
const TIMESTAMP_WORDS = 7;

/** The decoded invoice, or undefined for anything that is not a valid BOLT11 invoice. Never throws. */
export function decodeBolt11(invoice: string): Bolt11Invoice | undefined {
  if (typeof invoice !== 'string' || invoice.length > MAX_INVOICE_CHARS) return undefined;
  try {
    const sections = decode(invoice).sections as ReadonlyArray<{
      name: string;
      letters?: string;
      value?: unknown;
    }>;
    const first = (name: string, ok: (v: unknown) => boolean = () => true) =>
      sections.find((s) => s.name === name && ok(s.value));
    const network = first('coin_network')?.letters;
    const amount = first('amount');
    const timestamp = first('timestamp')?.value;
    // BOLT 11: the first `p` (and `n`) field of the right length counts; one of another length is skipped.
    const paymentHash = first('payment_hash', (v) => typeof v === 'string' && v.length === 64)?.value;
    const payeeField = first('payee', (v) => typeof v === 'string' && v.length === 66)?.value;
    const expiry = first('expiry')?.value;
    const description = first('description')?.value;
    // The amount is a positive integer without leading zeros.
    if (amount && (typeof amount.value !== 'string' || /^0/.test(amount.letters ?? '0'))) return undefined;
    if (typeof network !== 'string' || typeof timestamp !== 'number' || typeof paymentHash !== 'string') {
      return undefined;
    }
    const payee = recoverPayee(invoice);
    if (payee === undefined || (payeeField !== undefined && payeeField !== payee)) return undefined;
    return {
      prefix: `ln${network}`,
      amountMsat: amount ? BigInt(amount.value as string) : null,
      paymentHash,
      payee,
      timestamp,
      expirySeconds: typeof expiry === 'number' ? expiry : 3600,
      description: typeof description === 'string' ? description : undefined,
    };
  } catch {
    return undefined;
  }
}

/**
 * The amount of a BOLT11 invoice in msats; null for a valid invoice without an amount; undefined when the string
 * is not a valid BOLT11 invoice (bad checksum, mixed case, bad signature, sub-msat or out-of-range amount…).
 */
export function bolt11AmountMsat(invoice: string): bigint | null | undefined {
  return decodeBolt11(invoice)?.amountMsat;
}

/**
 * What an invoice's signature signs (BOLT 11): SHA-256 of the human-readable part's UTF-8 bytes followed by the
 * data part before the signature, its 5-bit words packed into bytes and padded with zero bits to a byte boundary.
 */
export function bolt11SigningHash(hrp: string, dataWords: readonly number[]): Uint8Array {
  const bytes: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const w of dataWords) {
    acc = ((acc << 5) | w) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((acc >> bits) & 0xff);
    }
  }
  if (bits > 0) bytes.push((acc << (8 - bits)) & 0xff);
  return createHash('sha256').update(hrp, 'utf8').update(Uint8Array.from(bytes)).digest();
}

/** The payee's compressed key (hex) recovered from the signature; undefined when it cannot be recovered. */
function recoverPayee(invoice: string): string | undefined {
  const { prefix, words } = bech32.decode(invoice as `${string}1${string}`, MAX_INVOICE_CHARS);
  if (words.length < TIMESTAMP_WORDS + SIGNATURE_WORDS) return undefined;
  const data = words.slice(0, -SIGNATURE_WORDS);
  const sig = bech32.fromWords(words.slice(-SIGNATURE_WORDS));
  const recovery = sig[64] ?? 4;
  if (recovery > 3) return undefined;
  // noble's "recovered" form puts the recovery byte first; BOLT 11 puts it last.
  const recovered = new Uint8Array(65);
  recovered[0] = recovery;
  recovered.set(sig.subarray(0, 64), 1);
  const hash = bolt11SigningHash(prefix, data);
  const key = secp256k1.recoverPublicKey(recovered, hash, { prehash: false });
  return Buffer.from(key).toString('hex');
}
