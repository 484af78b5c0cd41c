import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.js';
import type { StoreConnection } from '../../core/store/connection.js';
import type { WalletService } from '../../core/wallet/types.js';
import { createWallet } from '../../core/wallet/wallet.js';
import { type DevMint, dropStore, startTestMint, testStore } from '../support/dev-mint.js';
import { type MintGate, mintGate, renamedToken } from '../support/mint-gate.js';
import { until } from '../support/until.js';

/**
 * A melt or a swap of this process still on its way to the mint past the journal's stale age (a loaded machine):
 * this process's own recovery pass leaves the entry to the call at work on it. Before, the pass saw the inputs
 * unspent and the mint's quote unpaid and rolled the melt back (its payout record "not paid", so the ledger would
 * release the hold), and then the mint paid the invoice: the operator paid a refund the user kept. Both stores,
 * a real dev mint behind a gate that holds the request.
 */
const STALE_MS = 300;

describe.each(['sqlite', 'redis'] as const)('an own operation in flight past the stale age (%s)', (kind) => {
  const opened: { conn: StoreConnection; wallet: WalletService; mint: DevMint; gates: MintGate[] }[] = [];
  afterAll(async () => {
    for (const o of opened) {
      await o.wallet.close();
      await dropStore(o.conn);
      for (const g of o.gates) await g.close();
      await o.mint.close();
    }
  });

  /**
   * The call's request is held at the gate (so its entry, written before the request left, is in the store) and
   * the stale age has passed since: the entry is older than `claimStaleAfterMs`.
   */
  async function pastStaleAge(gate: MintGate): Promise<void> {
    await until('the request held at the gate', () => gate.waiting() === 1, 10_000, 10);
    const heldAt = Date.now();
    await until('the entry past its stale age', () => Date.now() > heldAt + STALE_MS, 5_000, 20);
  }

  async function setUp(path: string) {
    const mint = await startTestMint({ meltQuoteTtlS: 120 });
    const gate = await mintGate(mint.url, path);
    const conn = testStore(kind);
    const wallet = await createWallet({
      conn,
      mints: [gate.url],
      log: createLogger('silent'),
      // Stale after 300 ms: the held request outlives it.
      claimStaleAfterMs: STALE_MS,
      instance: { id: `own-${kind}-${path}`, name: 'own-inflight', deadAfterMs: 10_000 },
    });
    opened.push({ conn, wallet, mint, gates: [gate] });
    await wallet.receive(await renamedToken(await mint.mintTokens(1000), mint.url, gate.url));
    return { mint, gate, wallet };
  }

  it("a hold's melt held on its way: the pass leaves it; the mint pays it; the record says paid", async () => {
    const { mint, gate, wallet } = await setUp('/v1/melt/bolt11');
    gate.hold(true);
    const invoice = mint.invoice(100_000);
    const hold = { holdId: 'own-h1', accountId: 'own-a1' };
    await wallet.startPayout(hold.holdId, hold.accountId);
    const paying = wallet.payInvoice(invoice, { hold } as never);
    await pastStaleAge(gate);
    const pass = await wallet.recover({ ownerCheck: true });
    expect(pass).toMatchObject({ rolledBack: 0, outputsRestored: 0 });
    expect(pass.fresh).toBeGreaterThanOrEqual(1);
    expect((await wallet.getLightningPayout(hold.holdId))?.paid).toBeUndefined();
    gate.hold(false);
    const paid = await paying;
    expect(paid.amountMsat).toBe(100_000);
    expect(mint.meltQuoteState(invoice)).toBe('PAID');
    expect(await wallet.getLightningPayout(hold.holdId)).toMatchObject({ paid: true });
    // The call over, a pass finds nothing of it left to decide.
    expect(await wallet.recover({ ownerCheck: true })).toMatchObject({ rolledBack: 0 });
  });

  it('a send whose swap is held on its way: the pass leaves it; the token is the only owner of its proofs', async () => {
    const { gate, wallet } = await setUp('/v1/swap');
    const before = (await wallet.balances()).reduce((s, l) => s + l.amount, 0);
    gate.hold(true);
    const sending = wallet.send(300_000);
    await pastStaleAge(gate);
    expect(await wallet.recover({ ownerCheck: true })).toMatchObject({ rolledBack: 0, outputsRestored: 0 });
    gate.hold(false);
    const sent = await sending;
    // The wallet keeps what it had less the token: the pass restored none of the token's proofs into it.
    const after = (await wallet.balances()).reduce((s, l) => s + l.amount, 0);
    expect(before - after).toBe(300 + Math.round(sent.feeMsat / 1000));
  });
});
