import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreConnection } from '../../core/store/connection.js';
import type { WalletService } from '../../core/wallet/types.js';
import { createWallet } from '../../core/wallet/wallet.js';
import type { DevMint, StoreKind } from '../support/dev-mint.js';
import {
  captureLog,
  dropStore,
  proofsMsat,
  redeemElsewhere,
  startTestMint,
  testStore,
} from '../support/dev-mint.js';
import { type MintGate, mintGate, renamedToken } from '../support/mint-gate.js';
import { until } from '../support/until.js';

/**
 * A running gateway's recovery pass never decides an operation a live process is still performing
 * (RecoverOptions.ownerCheck, docs/wallet.md "Crash safety and recovery"). The case: process A journals a send and
 * its swap request is on its way to the mint (held here by a proxy, so the mint has not seen it: the inputs are
 * unspent); process B's pass runs meanwhile. Deciding A's fresh entry against the mint would roll it back and make
 * its inputs spendable again, and the mint would then perform the swap anyway: proofs the mint spent counted in
 * the wallet. Found in a two-gateway refund sweep, where the same race paid a Lightning refund and released its
 * hold. Both wallets share one store, as two gateway processes do.
 */

describe.each<StoreKind>(['sqlite', 'redis'])('recovery beside a live operation (%s store)', (kind) => {
  let mint: DevMint;
  let gate: MintGate;
  let conn: StoreConnection;
  let live: WalletService;
  let other: WalletService;

  beforeAll(async () => {
    mint = await startTestMint();
    gate = await mintGate(mint.url, '/v1/swap'); // holds the swap requests while held
    conn = testStore(kind);
    const open = () =>
      createWallet({ conn, mints: [gate.url], log: captureLog().log, mintTimeoutMs: 10_000 });
    live = await open();
    other = await open();
    // 4,000 sats in proofs of the proxied mint (the token names the mint the wallets trust).
    await live.receive(await renamedToken(await mint.mintTokens(4000, 'sat'), mint.url, gate.url));
  });
  afterAll(async () => {
    gate?.hold(false);
    await gate?.close();
    await mint?.close();
    if (conn) await dropStore(conn);
  });

  it("another process's pass leaves a fresh entry alone; the live send completes and every proof is real", async () => {
    const before = await proofsMsat(other);
    expect(before).toBe(4_000_000);
    gate.hold(true);
    const sending = live.send(1_000_000, { unit: 'sat' });
    await until('the send journalled and its swap on the way to the mint', () => gate.waiting() === 1);

    // The pass a running gateway makes: the entry is fresh, so it is not decided (old rule: rolled back here).
    const report = await other.recover({ ownerCheck: true });
    expect(report).toMatchObject({ examined: 0, rolledBack: 0, fresh: 1, liveOwners: 0 });
    expect(report.nextStaleInMs).toBeGreaterThan(0);

    gate.hold(false);
    const sent = await sending;
    expect(sent.amountMsat).toBe(1_000_000);
    // What the store holds is exactly what the mint says is ours: 4,000 - 1,000 sats, no spent proof among them.
    expect(await proofsMsat(other)).toBe(before - sent.amountMsat - sent.feeMsat);
    const report2 = await other.recover();
    expect(report2).toMatchObject({ examined: 0, fresh: 0 });
    // Every proof the store holds is unspent at the mint.
    const solvency = await other.checkSolvency(async () => 0);
    expect(solvency).toMatchObject({ proofsMsat: before - sent.amountMsat - sent.feeMsat, spentMsat: 0 });
    // The token is real: a separate wallet redeems it at the mint.
    const redeemed = await redeemElsewhere(mint.url, await renamedToken(sent.token, mint.url, mint.url));
    expect(redeemed).toBe(1000);
    // And the change left in the store is spendable at the mint: all of it goes out as one more token.
    const rest = await live.send(before - sent.amountMsat - sent.feeMsat, { unit: 'sat' });
    expect(rest.amountMsat).toBe(3_000_000);
  });
});
