import { randomBytes } from 'node:crypto';

/**
 * The dev mint's fake Lightning backend. Invoices are BOLT11-looking strings whose human-readable part
 * carries the amount exactly as BOLT11 does (`lnbcrt<amount><multiplier>1<data>`), so cashu-ts and any
 * BOLT11 amount parser read the right value; the data part is random bech32 characters (no signature, no
 * payment hash). Nothing is ever sent over a network: mint quotes are paid the moment they are created and
 * melt invoices are "paid" at once (or held pending / failed, for tests, see `LightningMode`).
 */

const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

/** `pay`: melts succeed; `pending`: melts stay PENDING (inputs pending); `fail`: the payment fails. */
export type LightningMode = 'pay' | 'pending' | 'fail';

/** A fake invoice for `amountMsat` (> 0). Use `n` (0.1 sat) when possible, else `p` (0.1 msat). */
export function fakeInvoice(amountMsat: number): string {
  if (!Number.isSafeInteger(amountMsat) || amountMsat <= 0)
    throw new Error('amountMsat must be a positive integer');
  const hrpAmount = amountMsat % 100 === 0 ? `${amountMsat / 100}n` : `${amountMsat * 10}p`;
  const bytes = randomBytes(52);
  let data = '';
  for (const b of bytes) data += BECH32[b & 31];
  return `lnbcrt${hrpAmount}1${data}`;
}

const MULTIPLIER_MSAT: Record<string, bigint> = { m: 100_000_000n, u: 100_000n, n: 100n };

/**
 * The amount of a BOLT11(-looking) invoice in msats; `null` for an amountless invoice.
 * @throws Error when the string is not BOLT11-shaped.
 */
export function invoiceAmountMsat(invoice: string): bigint | null {
  const s = invoice.toLowerCase();
  const sep = s.lastIndexOf('1');
  if (!s.startsWith('ln') || sep < 3 || sep === s.length - 1) throw new Error('not a bolt11 invoice');
  const m = /^ln[a-z]+?(\d*)([munp]?)$/.exec(s.slice(0, sep));
  if (!m) throw new Error('not a bolt11 invoice');
  const digits = m[1] ?? '';
  const mult = m[2] ?? '';
  if (digits === '') return null;
  if (digits.startsWith('0')) throw new Error('invalid bolt11 amount');
  const n = BigInt(digits);
  if (mult === '') return n * 100_000_000_000n;
  if (mult === 'p') {
    if (n % 10n !== 0n) throw new Error('invalid bolt11 amount');
    return n / 10n;
  }
  return n * (MULTIPLIER_MSAT[mult] ?? 0n);
}

/**
 * The dev mints of one process share a fake Lightning network: when one mint's melt "pays" an invoice that
 * another dev mint issued for an unpaid mint quote (a mint started with `mintQuotePayment: 'manual'`), that
 * quote becomes PAID — as a real payment between two mints would. A foreign-mint swap (FOREIGN_MINTS=swap)
 * between two dev mints in the same process therefore runs end to end with the primary's quotes left unpaid
 * until the foreign mint pays them. Dev and tests only; nothing leaves the process.
 */
const network = new Set<(invoice: string) => boolean>();

/** Registers a mint's "receive a payment" handler; returns the function that removes it. */
export function joinFakeNetwork(receive: (invoice: string) => boolean): () => void {
  network.add(receive);
  return () => network.delete(receive);
}

/** Dev mints in other processes (`npm run mint:dev -- --peer <url>`) whose `POST /dev/pay` gets our payments. */
const remotePeers = new Set<string>();

export function addFakeNetworkPeer(url: string): void {
  remotePeers.add(url.replace(/\/+$/, ''));
}

/**
 * Delivers a payment to whichever mint issued the invoice: one in this process at once, else every remote
 * peer is told (in the background; a peer that did not issue the invoice answers 400 and nothing happens).
 */
export function payOnFakeNetwork(invoice: string): boolean {
  for (const receive of network) if (receive(invoice)) return true;
  for (const peer of remotePeers) {
    fetch(`${peer}/dev/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ invoice }),
    }).catch(() => undefined);
  }
  return false;
}
