import { beforeAll, describe, expect, it } from 'vitest';
import { creditToken } from '../../core/account/credit-token.js';
import { drainPayoutRetries, payOut } from '../../core/account/pay-out.js';
import { GatewayError } from '../../core/errors.js';
import type { Ledger } from '../../core/ledger/types.js';
import type { StoreKind } from '../support/dev-mint.js';
import { moneyRigPerSuite, recoveringWallet } from './support/money-rig.js';

/**
 * Shutdown drain of the payout settlements waiting in the background (core/server.ts calls
 * `drainPayoutRetries` after the pipeline closed, before the stores close): with the store back, the drain
 * applies them at once; with the store still away, it gives up within the grace and the payout record left in
 * the journal lets the next recovery pass finish the job. On SQLite and Redis.
 */

describe.each(['sqlite', 'redis'] as const)('payout retries at shutdown (%s)', (kind: StoreKind) => {
  const { mint, conn, ledger, wallet } = moneyRigPerSuite(kind);
  let down = false;
  /** The ledger with commit and abort failing (nothing applied) while `down`. */
  let flaky: Ledger;

  beforeAll(async () => {
    flaky = new Proxy(ledger, {
      get(t, p) {
        const v = Reflect.get(t, p);
        if (typeof v !== 'function') return v;
        if (p !== 'commitWithdrawal' && p !== 'abortWithdrawal') return v.bind(t);
        return async (...args: unknown[]) => {
          if (down) throw new GatewayError('store_unavailable');
          return v.apply(t, args);
        };
      },
    });
  });

  const total = async () => (await wallet.balances()).reduce((s, l) => s + l.amountMsat, 0);
  async function failedPayout(): Promise<{ apiKey: string; operatorBefore: number }> {
    const apiKey = (await creditToken({ ledger, wallet }, await mint.mintTokens(50), { kind: 'new-key' }))
      .apiKey!;
    const operatorBefore = await total();
    down = true;
    await expect(
      payOut(
        { ledger: flaky, wallet },
        { credential: { apiKey }, amountMsat: 20_000, kind: 'withdrawal', expiresInMs: 60_000 },
      ),
    ).rejects.toMatchObject({ code: 'store_unavailable' });
    // The mint answered, so the token is already back in the operator's proofs; the hold could not be
    // aborted: that part of the settlement waits in the background (the payout record stays meanwhile).
    expect((await ledger.getKeyInfo({ apiKey }))!.account.reservedMsat).toBe(20_000);
    expect(await total()).toBe(operatorBefore);
    return { apiKey, operatorBefore };
  }

  it('with the store back, the drain settles the waiting payout at once', async () => {
    const { apiKey, operatorBefore } = await failedPayout();
    down = false;
    expect(await drainPayoutRetries(5_000)).toBe(0);
    // No waiting: the drain itself aborted the hold.
    const k = (await ledger.getKeyInfo({ apiKey }))!;
    expect(k.account.reservedMsat).toBe(0);
    expect(k.availableMsat).toBe(50_000);
    expect(await total()).toBe(operatorBefore);
    expect(await drainPayoutRetries(5_000)).toBe(0);
  });

  it('with the store still away, what is left is finished by the next recovery pass from its record', async () => {
    const { apiKey, operatorBefore } = await failedPayout();
    expect(await drainPayoutRetries(300)).toBe(1);
    down = false;
    // Nothing runs it in the background any more: the next process's recovery pass does.
    expect((await ledger.getKeyInfo({ apiKey }))!.account.reservedMsat).toBe(20_000);
    const next = await recoveringWallet(conn, mint.url, ledger, 0);
    expect(await next.recover()).toMatchObject({ examined: 1, payoutsResolved: 1 });
    const k = (await ledger.getKeyInfo({ apiKey }))!;
    expect(k.account.reservedMsat).toBe(0);
    expect(k.availableMsat).toBe(50_000);
    expect(await total()).toBe(operatorBefore);
    expect((await ledger.checkConservation()).breaches).toEqual([]);
    expect((await wallet.checkSolvency(() => ledger.totalUserBalancesMsat())).solvent).toBe(true);
    await next.close();
  });
});
