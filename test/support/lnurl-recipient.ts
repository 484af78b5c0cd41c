import { Wallet } from '@cashu/cashu-ts';
import { afterAll, beforeAll } from 'vitest';
import { type DevMint, startTestMint } from './dev-mint.js';
import { LnurlServer } from './lnurl-server.js';

/**
 * The far end of a refund to a Lightning address, for the enclosing describe block: the recipient's own mint
 * (its quotes are paid only when a melt pays their invoice, the fake Lightning network), a wallet at it, and an
 * LNURL-pay server handing out that wallet's invoices. Started before the block's tests, closed after; read the
 * fields inside hooks and tests.
 */
export function lnurlRecipientPerSuite(): {
  readonly mint: DevMint;
  readonly wallet: Wallet;
  readonly lnurl: LnurlServer;
} {
  let started: { mint: DevMint; wallet: Wallet; lnurl: LnurlServer } | undefined;
  beforeAll(async () => {
    const mint = await startTestMint({ mintQuotePayment: 'manual' });
    const wallet = new Wallet(mint.url, { unit: 'sat' });
    await wallet.loadMint();
    const lnurl = new LnurlServer(wallet);
    started = { mint, wallet, lnurl };
    await lnurl.start();
  });
  afterAll(async () => {
    await started?.lnurl.close();
    await started?.mint.close();
  });
  const get = () => {
    if (!started) throw new Error('the LNURL recipient is not started');
    return started;
  };
  return {
    get mint() {
      return get().mint;
    },
    get wallet() {
      return get().wallet;
    },
    get lnurl() {
      return get().lnurl;
    },
  };
}
