import { describe, expect, it } from 'vitest';
import { type PaidStore, paidGatewayPerSuite } from '../support/paid-gateway.js';

describe.each<PaidStore>(['sqlite', 'redis'])('paid harness on %s', (store) => {
  const h = paidGatewayPerSuite({ store }, { auditEachTest: false });

  it('starts with a ledger of the chosen store, a recovered wallet on the dev mint, and a clean audit', async () => {
    expect(h.ledger.kind).toBe(store);
    expect(h.wallet.mints).toEqual([h.mint.url]);
    const token = await h.mintToken(10);
    expect(token.startsWith('cashu')).toBe(true);
    const w = await h.newWallet();
    expect(w.mint.mintUrl).toBe(h.mint.url);
    await h.auditOk();
  });
});
