import { afterAll, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../core/errors.js';
import type { StoreConnection } from '../../core/store/connection.js';
import type { WalletService } from '../../core/wallet/types.js';
import { createWallet } from '../../core/wallet/wallet.js';
import {
  captureLog,
  type DevMint,
  dropStore,
  proofsMsat,
  redeemElsewhere,
  startTestMint,
  testStore,
} from '../support/dev-mint.js';
import { type MintGate, mintGate, renamedToken } from '../support/mint-gate.js';
import { until } from '../support/until.js';

/**
 * An operation whose entry another process decides first. Process B judges process A gone (A's heartbeat late:
 * a loaded machine; here B's `deadAfterMs` is 1 ms) and decides A's journal entry against the mint while A is
 * still at work on it. Whatever the order, the entry is settled once (compare-and-settle: `settleOp` answers
 * false to the second) and what the mint did ends up in the pool. Seen in the payout chaos harness under load:
 * B restored a send's outputs (the token's proofs among them) while A handed the same token out — a token that
 * no longer redeemed once the gateway spent those proofs, and proofs the pool listed that the mint had spent.
 * Both stores, a real dev mint behind a gate.
 */

async function outcome<T>(p: Promise<T>): Promise<T | Error> {
  return p.then(
    (v) => v,
    (e: unknown) => e as Error,
  );
}

describe.each(['sqlite', 'redis'] as const)('an entry decided by another process first (%s)', (kind) => {
  const opened: { conn: StoreConnection; wallets: WalletService[]; mint: DevMint; gate: MintGate }[] = [];
  afterAll(async () => {
    for (const o of opened) {
      o.gate.hold(false);
      for (const w of o.wallets) await w.close();
      await dropStore(o.conn);
      await o.gate.close();
      await o.mint.close();
    }
  });

  /** A (live, the operation's owner) and B (judges every other owner gone) on one store, behind one gate. */
  async function setUp(path: string, answers: boolean, fund = true) {
    const mint = await startTestMint();
    const gate = await mintGate(mint.url, path, { answers });
    const conn = testStore(kind);
    const tag = `${kind}-${path.replaceAll('/', '')}-${answers}`;
    const a = await createWallet({
      conn,
      mints: [gate.url],
      log: captureLog().log,
      instance: { id: `a-${tag}`, name: 'a', deadAfterMs: 60_000 },
    });
    const b = await createWallet({
      conn,
      mints: [gate.url],
      log: captureLog().log,
      // A swap's "nothing happened yet" stops counting as "may still arrive" 200 ms after it was written.
      claimStaleAfterMs: 200,
      instance: { id: `b-${tag}`, name: 'b', deadAfterMs: 1 },
    });
    opened.push({ conn, wallets: [a, b], mint, gate });
    if (fund) await a.receive(await renamedToken(await mint.mintTokens(4000, 'sat'), mint.url, gate.url));
    return { mint, gate, a, b };
  }

  it('a send the mint performed, decided by B before A settles: the token is not handed out; its proofs stay ours', async () => {
    const { mint, gate, a, b } = await setUp('/v1/swap', true);
    const before = await proofsMsat(a);
    gate.hold(true);
    const sending = outcome(a.send(1_000_000, { unit: 'sat' }));
    await until('the swap performed and its answer held', () => gate.waiting() === 1, 10_000, 10);
    // B sees the inputs spent and restores every output of the swap: the change and the token's proofs.
    expect(await b.recover({ ownerCheck: true })).toMatchObject({ outputsRestored: 1 });
    gate.hold(false);
    const err = await sending;
    expect(isGatewayError(err) && err.code).toBe('service_unavailable');
    // Nothing left journalled; every proof the store holds is unspent at the mint, and nothing left the pool
    // but the swap's input fee (the token was not handed out).
    expect(await b.recover({ ownerCheck: true })).toMatchObject({ examined: 0 });
    const after = await proofsMsat(a);
    expect(before - after).toBeLessThan(1_000_000);
    expect(await a.checkSolvency(async () => 0)).toMatchObject({
      proofsMsat: after,
      spentMsat: 0,
      pendingMsat: 0,
    });
    // And all of it is spendable: it goes out as one token a separate wallet redeems.
    const rest = await a.send(after, { unit: 'sat' });
    expect(await redeemElsewhere(mint.url, await renamedToken(rest.token, gate.url, mint.url))).toBe(
      after / 1000,
    );
  });

  it('a send B rolled back before its swap reached the mint: the spent inputs leave the pool, the outputs join it', async () => {
    const { gate, a, b } = await setUp('/v1/swap', false);
    const before = await proofsMsat(a);
    gate.hold(true);
    const sending = outcome(a.send(1_000_000, { unit: 'sat' }));
    await until('the swap held on its way', () => gate.waiting() === 1, 10_000, 10);
    const heldAt = Date.now();
    await until('past B’s "may still arrive" age', () => Date.now() > heldAt + 300, 5_000, 20);
    // B: inputs unspent at the mint, the request no longer expected: rolled back, inputs released to the pool.
    expect(await b.recover({ ownerCheck: true })).toMatchObject({ rolledBack: 1 });
    expect(await proofsMsat(a)).toBe(before);
    gate.hold(false); // the mint performs the swap after all
    const err = await sending;
    expect(isGatewayError(err) && err.code).toBe('service_unavailable');
    const after = await proofsMsat(a);
    expect(before - after).toBeLessThan(1_000_000);
    expect(await a.checkSolvency(async () => 0)).toMatchObject({ proofsMsat: after, spentMsat: 0 });
  });

  it('a receive the mint performed, decided by B before A settles: one receipt, the value stored once', async () => {
    const { mint, gate, a, b } = await setUp('/v1/swap', true, false);
    const token = await renamedToken(await mint.mintTokens(2000, 'sat'), mint.url, gate.url);
    gate.hold(true);
    const receiving = outcome(a.receive(token));
    await until('the swap performed and its answer held', () => gate.waiting() === 1, 10_000, 10);
    expect(await b.recover({ ownerCheck: true })).toMatchObject({ receivesCompleted: 1 });
    gate.hold(false);
    const receipt = await receiving;
    if (receipt instanceof Error) throw receipt;
    expect(receipt.amountMsat).toBeGreaterThan(0);
    expect(await proofsMsat(a)).toBe(receipt.amountMsat);
    expect(await a.checkSolvency(async () => 0)).toMatchObject({
      proofsMsat: receipt.amountMsat,
      spentMsat: 0,
    });
  });
});
