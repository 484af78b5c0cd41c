import { createHash, randomBytes } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bech32 } from '@scure/base';
import { bolt11SigningHash } from '../../core/wallet/bolt11.js';

/**
 * The dev mint's fake Lightning backend. Its invoices are real BOLT11 invoices (regtest, `lnbcrt…`): bech32 with
 * the amount in the human-readable part, a fresh random payment hash and payment secret each, a description, a
 * timestamp and an expiry, signed with a node key — so cashu-ts, the gateway's decoder (core/wallet/bolt11.ts)
 * and any BOLT11 reader take them. Nothing is ever sent over a network: mint quotes are paid the moment they are
 * created and melt invoices are "paid" at once (or held pending / failed, for tests, see `LightningMode`).
 */

/** `pay`: melts succeed; `pending`: melts stay PENDING (inputs pending); `fail`: the payment fails. */
export type LightningMode = 'pay' | 'pending' | 'fail';

/** BOLT 11 tagged-field codes the dev mint writes. */
const TAG = { paymentHash: 1, paymentSecret: 16, description: 13, expiry: 6 } as const;
const MSAT_PER = { '': 100_000_000_000n, m: 100_000_000n, u: 100_000n, n: 100n } as const;

export interface InvoiceFields {
  /** `lnbcrt` (regtest, the default), `lnbc`, `lntb`… */
  prefix?: string;
  /** null: an invoice without an amount. */
  amountMsat: bigint | null;
  paymentHash: Uint8Array;
  /** Omitted: no `s` field (legacy invoices, as the BOLT 11 examples). */
  paymentSecret?: Uint8Array;
  description: string;
  /** Unix seconds. */
  timestamp: number;
  /** Omitted: no `x` field (BOLT 11 default 3600 s). */
  expirySeconds?: number;
  /** 32-byte secp256k1 secret key of the issuing node. */
  nodeKey: Uint8Array;
}

/** The amount in the human-readable part: the largest multiplier that states it exactly (BOLT 11 "SHOULD"). */
function hrpAmount(msat: bigint): string {
  if (msat <= 0n) throw new Error('amountMsat must be positive');
  for (const [mult, per] of Object.entries(MSAT_PER)) if (msat % per === 0n) return `${msat / per}${mult}`;
  return `${msat * 10n}p`;
}

/** A non-negative integer as big-endian 5-bit words: exactly `len` of them, or as few as it needs. */
function intWords(n: number, len?: number): number[] {
  const words: number[] = [];
  for (let v = n; v > 0 || words.length === 0; v = Math.floor(v / 32)) words.unshift(v % 32);
  if (len !== undefined) {
    if (words.length > len) throw new Error('value does not fit');
    while (words.length < len) words.unshift(0);
  }
  return words;
}

function tagged(code: number, words: number[]): number[] {
  return [code, ...intWords(words.length, 2), ...words];
}

/** Encodes and signs a BOLT11 invoice (the tagged fields in the order p, s, d, x). */
export function encodeInvoice(f: InvoiceFields): string {
  const hrp = `${f.prefix ?? 'lnbcrt'}${f.amountMsat === null ? '' : hrpAmount(f.amountMsat)}`;
  const data = [
    ...intWords(f.timestamp, 7),
    ...tagged(TAG.paymentHash, bech32.toWords(f.paymentHash)),
    ...(f.paymentSecret ? tagged(TAG.paymentSecret, bech32.toWords(f.paymentSecret)) : []),
    ...tagged(TAG.description, bech32.toWords(new TextEncoder().encode(f.description))),
    ...(f.expirySeconds === undefined ? [] : tagged(TAG.expiry, intWords(f.expirySeconds))),
  ];
  // noble's "recovered" form is recovery byte ‖ r ‖ s; BOLT 11 wants r ‖ s ‖ recovery byte.
  const sig = secp256k1.sign(bolt11SigningHash(hrp, data), f.nodeKey, {
    prehash: false,
    format: 'recovered',
  });
  const signature = new Uint8Array(65);
  signature.set(sig.subarray(1), 0);
  signature[64] = sig[0] ?? 0;
  return bech32.encode(hrp, [...data, ...bech32.toWords(signature)], false);
}

/** A dev node key derived from a seed (the mint's, so a mint kept in a data file keeps its node key). */
export function nodeKeyFromSeed(seed: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(`${seed}|lightning-node`).digest());
}

/** The compressed public key (hex) of a node key: the payee every invoice it signs recovers to. */
export function nodePubkey(nodeKey: Uint8Array): string {
  return Buffer.from(secp256k1.getPublicKey(nodeKey, true)).toString('hex');
}

/**
 * A fresh preimage and its payment hash (sha256), as a Lightning node makes them for an invoice it issues: the
 * payer learns the preimage only by paying (the dev mint's `POST /dev/pay` answers it, as a wallet's pay call
 * does), so it proves the payment (L402, MPP).
 */
export function freshPreimage(): { preimage: string; paymentHash: Uint8Array } {
  const preimage = randomBytes(32);
  return {
    preimage: preimage.toString('hex'),
    paymentHash: new Uint8Array(createHash('sha256').update(preimage).digest()),
  };
}

/** The node key of invoices made outside any mint (`fakeInvoice` without one): a payee elsewhere on the network. */
const elsewhere = nodeKeyFromSeed(randomBytes(32).toString('hex'));

/**
 * A fresh regtest invoice for `amountMsat` (> 0): random payment hash and secret, timestamp now, signed with
 * `nodeKey` (default: a node elsewhere on the fake network, one per process).
 */
export function fakeInvoice(
  amountMsat: number,
  opts: { nodeKey?: Uint8Array; description?: string; expirySeconds?: number; paymentHash?: Uint8Array } = {},
): string {
  if (!Number.isSafeInteger(amountMsat) || amountMsat <= 0)
    throw new Error('amountMsat must be a positive integer');
  return encodeInvoice({
    amountMsat: BigInt(amountMsat),
    paymentHash: opts.paymentHash ?? randomBytes(32),
    paymentSecret: randomBytes(32),
    description: opts.description ?? 'dev mint fake Lightning',
    timestamp: Math.floor(Date.now() / 1000),
    expirySeconds: opts.expirySeconds ?? 3600,
    nodeKey: opts.nodeKey ?? elsewhere,
  });
}

/**
 * The dev mints of one process share a fake Lightning network: when one mint's melt "pays" an invoice that
 * another dev mint issued for an unpaid mint quote (a mint started with `mintQuotePayment: 'manual'`), that
 * quote becomes PAID — as a real payment between two mints would. A foreign-mint swap (FOREIGN_MINTS=swap)
 * between two dev mints in the same process therefore runs end to end with the primary's quotes left unpaid
 * until the foreign mint pays them. Dev and tests only; nothing leaves the process.
 */
const network = new Set<(invoice: string) => boolean>();

/** The preimage lookups of the mints in this process (an issuing node tells the payer its invoice's preimage). */
const preimages = new Set<(invoice: string) => string | undefined>();

/**
 * Registers a mint's "receive a payment" handler (and, optionally, how it tells a paid invoice's preimage);
 * returns the function that removes them.
 */
export function joinFakeNetwork(
  receive: (invoice: string) => boolean,
  preimageOf?: (invoice: string) => string | undefined,
): () => void {
  network.add(receive);
  if (preimageOf) preimages.add(preimageOf);
  return () => {
    network.delete(receive);
    if (preimageOf) preimages.delete(preimageOf);
  };
}

/** The preimage a payment of `invoice` revealed, when a dev mint of this process issued it and it is paid. */
export function preimageOnFakeNetwork(invoice: string): string | undefined {
  for (const lookup of preimages) {
    const p = lookup(invoice);
    if (p !== undefined) return p;
  }
  return undefined;
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
