import { type DevMint, startDevMint } from '../../scripts/mint/index.js';
import type { RunningTarget } from './types.js';

/**
 * The `-l402` gateway targets: every call paid from ONE L402 balance instead of an `sk-` key, so the table
 * shows what the L402 door costs per call against the same store's `sk-` row. A dev mint in the bench process
 * (quotes paid only when paid) is the gateway's mint; the bench asks an unpaid call for its 402, pays the
 * L402 invoice through the dev mint (which answers the preimage, as a Lightning wallet does), and presents
 * `Authorization: L402 <macaroon>:<preimage>` on every call. The invoice is L402_MIN_SATS (1e7 sats), far more
 * than a run spends: the balance is never the limit, as the `sk-` keys' funding is not.
 */

export const L402_FUNDING_SATS = 10_000_000;

export interface L402Door {
  /** The gateway's extra environment: the dev mint as its only mint, the invoice size. */
  env: Record<string, string>;
  /** Pays the gateway's L402 challenge once: the target's calls then carry the credential. */
  pay(target: RunningTarget): Promise<RunningTarget>;
  close(): Promise<void>;
}

export async function openL402Door(): Promise<L402Door> {
  const mint: DevMint = await startDevMint({ port: 0, mintQuotePayment: 'manual' });
  return {
    env: { CASHU_MINTS: mint.url, L402_MIN_SATS: String(L402_FUNDING_SATS), PAYMENT_DOORS: 'cashu,l402' },
    async pay(target) {
      const url = `${target.baseUrl}/v1/chat/completions`;
      const body = JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] });
      const unpaid = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      await unpaid.arrayBuffer();
      const www = unpaid.headers.get('www-authenticate') ?? '';
      const m = /L402 macaroon="([^"]+)", invoice="([^"]+)"/.exec(www);
      if (unpaid.status !== 402 || !m) throw new Error(`no L402 challenge (status ${unpaid.status})`);
      const { preimage } = await mint.payInvoice(m[2]!);
      const headers = { authorization: `L402 ${m[1]}:${preimage}` };
      // The first use credits the balance (the mint says paid): checked here, outside the measured window.
      const first = await fetch(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body,
      });
      await first.arrayBuffer();
      if (first.status !== 200) throw new Error(`the paid L402 call answered ${first.status}`);
      return { ...target, headers: () => headers };
    },
    close: () => mint.close(),
  };
}
