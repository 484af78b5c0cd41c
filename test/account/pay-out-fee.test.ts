import { describe, expect, it } from 'vitest';
import { creditToken, type Money } from '../../core/account/credit-token.js';
import { payOut } from '../../core/account/pay-out.js';
import { GatewayError } from '../../core/errors.js';
import type { StoreKind } from '../support/dev-mint.js';
import { balancedAfterEach, moneyRigPerSuite } from './support/money-rig.js';

/**
 * payOut on a mint that charges an input fee (100 ppk: 1 sat per swap of up to 10 proofs). When a token that
 * will not be handed out is taken back, the operator pays the take-back's fee: the account gets back the FULL
 * amount its hold debited, never the fee-reduced value of the take-back. On SQLite and Redis.
 *
 * Amounts: a 50-sat deposit is minted as 32+16+2 (3 proofs → 1 sat fee): 49 000 msat on the key. A 20-sat
 * payout token is 16+4 (2 proofs): taking it back yields 19 sats, and the user must still get 20 000 back.
 */

describe.each(['sqlite', 'redis'] as const)('payOut on a fee-charging mint (%s)', (kind: StoreKind) => {
  const { mint, ledger, wallet } = moneyRigPerSuite(kind, { inputFeePpk: 100 });
  balancedAfterEach(() => ({ ledger, wallet }), { solvent: true, spentMsat: 0 });

  /** `method` of `real` runs, then throws as if its answer was lost. */
  function answerLost<T extends object>(real: T, method: string): T {
    return new Proxy(real, {
      get(t, p) {
        const v = Reflect.get(t, p);
        if (typeof v !== 'function') return v;
        if (p !== method) return v.bind(t);
        return async (...args: unknown[]) => {
          await v.apply(t, args);
          throw new GatewayError(method === 'send' ? 'mint_unavailable' : 'store_unavailable');
        };
      },
    });
  }
  async function newKey(): Promise<string> {
    const money: Money = { ledger, wallet };
    const r = await creditToken(money, await mint.mintTokens(50), { kind: 'new-key' });
    expect(r.creditedMsat).toBe(49_000);
    return r.apiKey!;
  }
  const req = (apiKey: string) => ({
    credential: { apiKey },
    amountMsat: 20_000,
    kind: 'withdrawal' as const,
    expiresInMs: 60_000,
  });
  const key = async (apiKey: string) => (await ledger.getKeyInfo({ apiKey }))!;

  it('the commit applied but its answer was lost: the whole 20 000 held is credited back, not 19 000', async () => {
    const apiKey = await newKey();
    await expect(
      payOut({ ledger: answerLost(ledger, 'commitWithdrawal'), wallet }, req(apiKey)),
    ).rejects.toMatchObject({ code: 'store_unavailable' });
    const k = await key(apiKey);
    expect(k.availableMsat).toBe(49_000);
    expect(k.account.balanceMsat).toBe(49_000);
    expect(k.account.reservedMsat).toBe(0);
  });

  it('the mint made the token but send failed afterwards: token taken back from its record, hold aborted', async () => {
    const apiKey = await newKey();
    const before = (await wallet.balances()).reduce((s, l) => s + l.amountMsat, 0);
    await expect(payOut({ ledger, wallet: answerLost(wallet, 'send') }, req(apiKey))).rejects.toMatchObject({
      code: 'mint_unavailable',
    });
    const k = await key(apiKey);
    expect(k.availableMsat).toBe(49_000);
    expect(k.account.reservedMsat).toBe(0);
    // The token came back: the operator is short only the two swaps' input fees (1 sat each here).
    const after = (await wallet.balances()).reduce((s, l) => s + l.amountMsat, 0);
    expect(before - after).toBe(2_000);
  });
});
