import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditToken, type Money } from '../../core/account/credit-token.js';
import { payOut } from '../../core/account/pay-out.js';
import { createLedger } from '../../core/ledger/index.js';
import type { Ledger } from '../../core/ledger/types.js';
import type { WalletService } from '../../core/wallet/types.js';
import { crashRigPerSuite } from '../support/crash-rig.js';
import { proofsMsat, type StoreKind } from '../support/dev-mint.js';
import { runChild } from '../wallet/crash-recovery-suite.js';
import { balancedAfterEach, recoveringWallet } from './support/money-rig.js';

/**
 * A payout killed between `wallet.send` (the token exists) and the end of the money step
 * (core/account/pay-out.ts), in a REAL child process on the same store, killed by the wallet's crash hook:
 * the payout record the send wrote atomically lets the next recovery pass take the token back into the
 * operator's proofs and undo the hold (aborted, or credited back when the commit had applied). The account
 * ends exactly where it started, nothing is held, solvency and the ledger's conservation check pass, and a second pass finds
 * nothing to do. On SQLite (one file shared by both processes) and Redis (one prefix).
 */

describe.each(['sqlite', 'redis'] as const)('payOut killed mid-way (%s)', (kind: StoreKind) => {
  const { mint, conn, childEnv } = crashRigPerSuite(kind, 'payout-crash-');
  let ledger: Ledger;
  let wallet: WalletService;

  beforeAll(async () => {
    ledger = await createLedger(conn, {});
    // A payout a live process is still making (younger than the claim lease) is not touched.
    wallet = await recoveringWallet(conn, mint.url, ledger, 600_000);
    await wallet.receive(await mint.mintTokens(5_000));
  });
  balancedAfterEach(() => ({ ledger, wallet }), { solvent: true, spentMsat: 0 });
  afterAll(async () => {
    await wallet?.close();
    await ledger?.close();
  });

  async function newKey(sats: number): Promise<string> {
    const money: Money = { ledger, wallet };
    return (await creditToken(money, await mint.mintTokens(sats), { kind: 'new-key' })).apiKey!;
  }
  const account = async (apiKey: string) => (await ledger.getKeyInfo({ apiKey }))!.account;

  it.each([
    ['payout-after-send', 'before the commit: the hold is aborted'],
    ['payout-after-commit', 'after the commit: the debited hold is credited back'],
  ])('killed at %s (%s): token back in the operator proofs, balance unchanged', async (point) => {
    const apiKey = await newKey(50);
    const operatorBefore = await proofsMsat(wallet);
    const child = await runChild(
      { ...childEnv, CRASH_OP: 'pay-out', CRASH_ARG: '20000', WALLET_TEST_CRASH_AT: point },
      apiKey,
    );
    expect(child.signal).toBe('SIGKILL');
    expect(child.out).not.toContain('survived');

    // The token was made (the operator's proofs shrank by it) and lives only in the payout record.
    expect(await proofsMsat(wallet)).toBe(operatorBefore - 20_000);
    if (point === 'payout-after-send') expect((await account(apiKey)).reservedMsat).toBe(20_000);
    else expect((await account(apiKey)).balanceMsat).toBe(30_000);
    // A young record belongs to a payout that may still finish: not examined.
    expect(await wallet.recover()).toMatchObject({ examined: 0, payoutsResolved: 0 });

    // The restarted process: the record (seconds old by now) is older than its 1 ms claim lease.
    const restarted = await recoveringWallet(conn, mint.url, ledger, 1);
    expect(await restarted.recover()).toMatchObject({ examined: 1, payoutsResolved: 1, deferred: 0 });
    const a = await account(apiKey);
    expect(a.balanceMsat).toBe(50_000);
    expect(a.reservedMsat).toBe(0);
    expect((await ledger.getKeyInfo({ apiKey }))!.availableMsat).toBe(50_000);
    expect(await proofsMsat(restarted)).toBe(operatorBefore);

    // A second pass is a no-op: nothing examined, nothing credited twice.
    expect(await restarted.recover()).toMatchObject({ examined: 0, payoutsResolved: 0 });
    expect((await account(apiKey)).balanceMsat).toBe(50_000);
    expect(await proofsMsat(restarted)).toBe(operatorBefore);
    await restarted.close();
  });

  it('a recovery pass that resolves the record of a slow live payout stops its token from being handed out', async () => {
    const apiKey = await newKey(50);
    const operatorBefore = await proofsMsat(wallet);
    const other = await recoveringWallet(conn, mint.url, ledger, 0);
    // Between the commit and finishPayout, another process's pass finds the record old enough and resolves it.
    const slow = new Proxy(wallet, {
      get(t, p) {
        const v = Reflect.get(t, p);
        if (p !== 'finishPayout' || typeof v !== 'function') return typeof v === 'function' ? v.bind(t) : v;
        return async (holdId: string) => {
          expect(await other.recover()).toMatchObject({ payoutsResolved: 1 });
          return v.call(t, holdId);
        };
      },
    });
    await expect(
      payOut(
        { ledger, wallet: slow },
        { credential: { apiKey }, amountMsat: 20_000, kind: 'withdrawal', expiresInMs: 60_000 },
      ),
    ).rejects.toMatchObject({ code: 'service_unavailable' });
    // Committed, then credited back by the pass: the user has the whole balance, the operator the token.
    expect((await account(apiKey)).balanceMsat).toBe(50_000);
    expect((await account(apiKey)).reservedMsat).toBe(0);
    expect(await proofsMsat(wallet)).toBe(operatorBefore);
    await other.close();
  });
});
