import { describe, expect, it } from 'vitest';
import { creditToken, type Money } from '../../core/account/credit-token.js';
import { payOut } from '../../core/account/pay-out.js';
import { GatewayError } from '../../core/errors.js';
import { redeemElsewhere, type StoreKind } from '../support/dev-mint.js';
import { until } from '../support/until.js';
import { balancedAfterEach, moneyRigPerSuite } from './support/money-rig.js';

/**
 * Fault injection at every step of the two money steps (core/account/), on SQLite and Redis, with the real
 * ledger, the real wallet and the dev mint: whatever fails, a token is either delivered AND debited, or taken
 * back AND not debited; a redeemed token is credited once (now or on retry); the ledger's conservation check and the wallet's
 * solvency hold after every test.
 */

type Fault = { method: string; when: 'before' | 'after'; error?: unknown; times?: number };

/** The real object with `method` failing once (before calling it, or after it ran: an ambiguous failure). */
function faulty<T extends object>(real: T, fault: Fault | undefined): T {
  let left = fault?.times ?? 1;
  return new Proxy(real, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      if (fault === undefined || prop !== fault.method) return v.bind(target);
      return async (...args: unknown[]) => {
        if (left > 0 && fault.when === 'before') {
          left--;
          throw fault.error ?? new GatewayError('store_unavailable');
        }
        const out = await v.apply(target, args);
        if (left > 0 && fault.when === 'after') {
          left--;
          throw fault.error ?? new GatewayError('store_unavailable');
        }
        return out;
      };
    },
  });
}

describe.each(['sqlite', 'redis'] as const)('money steps under injected faults (%s)', (kind: StoreKind) => {
  const { mint, ledger, wallet } = moneyRigPerSuite(kind);
  balancedAfterEach(() => ({ ledger, wallet }));

  const steps = (l: Fault | undefined, w: Fault | undefined): Money => ({
    ledger: faulty(ledger, l),
    wallet: faulty(wallet, w),
  });
  /** The money steps with the ledger's `method` failing once, `when` (before it ran, or after). */
  const ledgerFault = (method: string, when: Fault['when']): Money => steps({ method, when }, undefined);
  /** creditToken of `token` to its own identity, through `money` (by default without a fault). */
  const creditOwn = (token: string, money = steps(undefined, undefined)) =>
    creditToken(money, token, { kind: 'token' });
  const available = async (apiKey: string) => (await ledger.getKeyInfo({ apiKey }))!.availableMsat;
  /** Resolves once background retries released what the key had reserved (throws after 5 s). */
  async function reservedAfterRetries(apiKey: string): Promise<number> {
    const reserved = async () => (await ledger.getKeyInfo({ apiKey }))!.account.reservedMsat;
    await until('the reservation released by the retries', async () => (await reserved()) === 0, 5_000, 50);
    return reserved();
  }
  async function newKey(sats: number): Promise<string> {
    const r = await creditToken(steps(undefined, undefined), await mint.mintTokens(sats), {
      kind: 'new-key',
    });
    return r.apiKey!;
  }

  describe('creditToken', () => {
    /** A token of `sats` whose credit to its own identity through `money` failed: 503 store_unavailable. */
    async function refusedCredit(sats: number, money: Money): Promise<string> {
      const token = await mint.mintTokens(sats);
      await expect(creditOwn(token, money)).rejects.toMatchObject({ code: 'store_unavailable' });
      return token;
    }

    it('mint down before the swap: refused, nothing credited; the same token credits once later', async () => {
      const token = await mint.mintTokens(100);
      mint.setOutage(503);
      await expect(creditOwn(token)).rejects.toMatchObject({
        code: 'mint_unavailable',
      });
      mint.setOutage(null);
      const hash = wallet.tokenHash(token);
      expect(await ledger.getKeyInfo({ tokenHash: hash })).toBeNull();
      const r = await creditOwn(token);
      expect(r.creditedMsat).toBe(100_000);
      expect((await ledger.getKeyInfo({ tokenHash: hash }))!.availableMsat).toBe(100_000);
    });

    it('the store throws after the swap: 503, and the retry credits exactly once', async () => {
      const token = await refusedCredit(70, ledgerFault('credit', 'before'));
      const again = await creditOwn(token);
      expect(again.creditedMsat).toBe(70_000);
      const replay = await creditOwn(token);
      expect(replay.creditedMsat).toBe(0);
      expect((await ledger.getKeyInfo({ tokenHash: wallet.tokenHash(token) }))!.availableMsat).toBe(70_000);
    });

    it('the credit applied but its answer was lost: the retry is a replay, not a second credit', async () => {
      const token = await refusedCredit(40, ledgerFault('credit', 'after'));
      const again = await creditOwn(token);
      expect(again.creditedMsat).toBe(0);
      expect((await ledger.getKeyInfo({ tokenHash: wallet.tokenHash(token) }))!.availableMsat).toBe(40_000);
    });

    it('top-up of a key that vanished: the value is parked on the token identity, not lost', async () => {
      const apiKey = await newKey(10);
      await ledger.deleteKey({ credential: { apiKey } });
      const token = await mint.mintTokens(30);
      await expect(
        creditToken(steps(undefined, undefined), token, { kind: 'account', credential: { apiKey } }),
      ).rejects.toMatchObject({ code: 'invalid_api_key' });
      expect((await ledger.getKeyInfo({ tokenHash: wallet.tokenHash(token) }))!.availableMsat).toBe(30_000);
    });

    it('a new key from a token the store failed to record: the retry returns the same key once', async () => {
      const token = await mint.mintTokens(25);
      await expect(
        creditToken(ledgerFault('createKeyFromDeposit', 'after'), token, { kind: 'new-key' }),
      ).rejects.toMatchObject({ code: 'store_unavailable' });
      const r = await creditToken(steps(undefined, undefined), token, { kind: 'new-key' });
      expect(r.creditedMsat).toBe(0);
      expect(await available(r.apiKey!)).toBe(25_000);
    });
  });

  describe('payOut', () => {
    const req = (apiKey: string, amountMsat: number) => ({
      credential: { apiKey },
      amountMsat,
      kind: 'withdrawal' as const,
      expiresInMs: 60_000,
    });

    /** A key holding 50 sats whose payout of 20,000 msats through `money` is refused with `code`. */
    async function refusedPayout(money: Money, code: string): Promise<string> {
      const apiKey = await newKey(50);
      await expect(payOut(money, req(apiKey, 20_000))).rejects.toMatchObject({ code });
      return apiKey;
    }

    it('no fault: the token is delivered and debited', async () => {
      const apiKey = await newKey(50);
      const r = await payOut(steps(undefined, undefined), req(apiKey, 20_000));
      expect(r.balanceMsat).toBe(30_000);
      expect(await redeemElsewhere(mint.url, r.token)).toBe(20);
    });

    it('the mint fails while making the token: hold aborted, nothing debited', async () => {
      const apiKey = await refusedPayout(
        steps(undefined, { method: 'send', when: 'before', error: new GatewayError('mint_unavailable') }),
        'mint_unavailable',
      );
      expect(await available(apiKey)).toBe(50_000);
    });

    it('the token is worth another amount than held: taken back, hold aborted, nothing debited', async () => {
      const apiKey = await newKey(50);
      const lying = faulty(wallet, undefined);
      const w = new Proxy(lying, {
        get(t, p, r) {
          if (p !== 'send') return Reflect.get(t, p, r);
          return async (amountMsat: number, o: object) => {
            const sent = await wallet.send(amountMsat, o);
            return { ...sent, amountMsat: sent.amountMsat + 1000 };
          };
        },
      });
      const before = await wallet.checkSolvency(() => ledger.totalUserBalancesMsat());
      await expect(payOut({ ledger, wallet: w }, req(apiKey, 20_000))).rejects.toMatchObject({
        code: 'internal_error',
      });
      expect(await available(apiKey)).toBe(50_000);
      const after = await wallet.checkSolvency(() => ledger.totalUserBalancesMsat());
      // The token was received back into the operator's proofs (minus nothing: the dev mint has no fee here).
      expect(after.proofsMsat).toBe(before.proofsMsat);
    });

    it('the store refuses the commit (the hold expired): token taken back, nothing debited', async () => {
      const apiKey = await newKey(50);
      const refusing = new Proxy(ledger, {
        get(t, p, r) {
          if (p !== 'commitWithdrawal') return Reflect.get(t, p, r).bind?.(t) ?? Reflect.get(t, p, r);
          return async (ref: { accountId: string; holdId: string }) => {
            await ledger.abortWithdrawal(ref);
            return ledger.commitWithdrawal(ref);
          };
        },
      });
      await expect(payOut({ ledger: refusing, wallet }, req(apiKey, 20_000))).rejects.toBeInstanceOf(
        GatewayError,
      );
      expect(await available(apiKey)).toBe(50_000);
    });

    it('the commit throws before it applied: token taken back, hold aborted, nothing debited', async () => {
      const apiKey = await refusedPayout(ledgerFault('commitWithdrawal', 'before'), 'store_unavailable');
      expect(await available(apiKey)).toBe(50_000);
      expect((await ledger.getKeyInfo({ apiKey }))!.account.reservedMsat).toBe(0);
    });

    it('the hold applied but its answer was lost: it is released in the background, nothing debited', async () => {
      const apiKey = await refusedPayout(ledgerFault('holdWithdrawal', 'after'), 'store_unavailable');
      expect(await reservedAfterRetries(apiKey)).toBe(0);
      expect(await available(apiKey)).toBe(50_000);
    });

    it('the mint fails and the abort fails too: the hold is released in the background', async () => {
      const ledgerDown = faulty(ledger, { method: 'abortWithdrawal', when: 'before' });
      const mintDown = faulty(wallet, {
        method: 'send',
        when: 'before',
        error: new GatewayError('mint_unavailable'),
      });
      const apiKey = await refusedPayout({ ledger: ledgerDown, wallet: mintDown }, 'mint_unavailable');
      expect(await reservedAfterRetries(apiKey)).toBe(0);
      expect(await available(apiKey)).toBe(50_000);
    });

    it('the store stays away after an unknown commit: the take-back and abort finish in the background', async () => {
      const ledgerDown = faulty(faulty(ledger, { method: 'commitWithdrawal', when: 'before' }), {
        method: 'abortWithdrawal',
        when: 'before',
      });
      const apiKey = await refusedPayout({ ledger: ledgerDown, wallet }, 'store_unavailable');
      // Not debited, and the hold does not wait for its lease: the retry aborts it within a second or two.
      expect(await reservedAfterRetries(apiKey)).toBe(0);
      expect(await available(apiKey)).toBe(50_000);
    });

    it('the commit applied but its answer was lost: token taken back and the value credited back', async () => {
      const apiKey = await refusedPayout(ledgerFault('commitWithdrawal', 'after'), 'store_unavailable');
      // Debited by the commit, credited back from the taken-back token: the user keeps the whole balance.
      expect(await available(apiKey)).toBe(50_000);
    });
  });
});
