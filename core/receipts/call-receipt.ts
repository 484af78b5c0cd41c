import * as nip19 from 'nostr-tools/nip19';
import { finalizeEvent, verifyEvent } from 'nostr-tools/pure';

/**
 * Signed call receipts (docs/paying.md, "Receipts"): a caller that sends `Prefer: receipt` gets, with each paid
 * answer, what it was charged signed with the node's Nostr key (the key of its listing; `/v1/info.npub`). The
 * receipt is a Nostr event (NIP-01), never published: kind 9402, `created_at` the settlement time, tags
 * `["request", id]` and `["model", model]`, content the receipt's JSON. Any Nostr library checks it: the event id
 * is sha256 of its NIP-01 serialisation, the signature a BIP-340 Schnorr signature of that id by `pubkey`. On the
 * wire it is the event's JSON in base64url (no padding): the `X-Receipt` header, or a stream's `: x-receipt …`
 * comment (the last one before `data: [DONE]`).
 */

export const RECEIPT_KIND = 9402;

export interface CallReceipt {
  request_id: string;
  model: string;
  /** The usage dimensions charged (the normalised usage record), or the units of a unit-priced call. */
  usage: Record<string, unknown>;
  msats: number;
  /** The paying account's balance after the charge, msats. */
  balance_msats: number;
  /** Unix seconds of the settlement. */
  time: number;
}

export function signCallReceipt(secretKey: Uint8Array, r: CallReceipt): string {
  const event = finalizeEvent(
    {
      kind: RECEIPT_KIND,
      created_at: r.time,
      tags: [
        ['request', r.request_id],
        ['model', r.model],
      ],
      content: JSON.stringify(r),
    },
    secretKey,
  );
  return Buffer.from(JSON.stringify(event)).toString('base64url');
}

export type ReceiptCheck = { ok: true; receipt: CallReceipt; pubkey: string } | { ok: false; reason: string };

/**
 * Checks an encoded receipt against the node's key (`npub1…` or 64 hex): a valid signature by that key over an
 * event of the receipt kind whose tags agree with its content.
 */
export function verifyCallReceipt(encoded: string, nodeKey: string): ReceiptCheck {
  let pubkey = nodeKey;
  if (nodeKey.startsWith('npub1')) {
    try {
      const d = nip19.decode(nodeKey);
      if (d.type !== 'npub') return { ok: false, reason: 'not an npub' };
      pubkey = d.data;
    } catch {
      return { ok: false, reason: 'not an npub' };
    }
  }
  let event: Parameters<typeof verifyEvent>[0];
  try {
    event = JSON.parse(Buffer.from(encoded.trim(), 'base64url').toString('utf8')) as typeof event;
  } catch {
    return { ok: false, reason: 'not base64url JSON' };
  }
  if (event.kind !== RECEIPT_KIND) return { ok: false, reason: 'not a receipt event' };
  if (event.pubkey !== pubkey) return { ok: false, reason: "not signed by this node's key" };
  if (!verifyEvent(event)) return { ok: false, reason: 'the signature does not verify' };
  let receipt: CallReceipt;
  try {
    receipt = JSON.parse(event.content) as CallReceipt;
  } catch {
    return { ok: false, reason: 'the content is not JSON' };
  }
  const tag = (name: string) => event.tags.find((t) => t[0] === name)?.[1];
  if (
    tag('request') !== receipt.request_id ||
    tag('model') !== receipt.model ||
    event.created_at !== receipt.time
  ) {
    return { ok: false, reason: 'the tags do not match the content' };
  }
  return { ok: true, receipt, pubkey };
}

/** True when the request's `Prefer` header asks for a receipt (RFC 7240 preference `receipt`). */
export function wantsReceipt(prefer: string | undefined): boolean {
  return prefer !== undefined && /(^|[,;\s])receipt(\s*($|[,;=]))/i.test(prefer);
}
