import { describe, expect, it } from 'vitest';
import type { Ledger } from '../../../core/ledger/types.js';
import { admitInput, type Ctx, fund, holdInput, rid, T0 } from './conformance.js';

async function admitAt(ledger: Ledger, apiKey: string, msat: number, expiresInMs: number, now: number) {
  return ledger.admit(admitInput(apiKey, { maxMsat: msat, minMsat: msat, expiresInMs, now }));
}

/** The admit of `msat` for `expiresInMs` at `now` succeeds, reserving `msat`. */
async function expectAdmitted(
  ledger: Ledger,
  apiKey: string,
  msat: number,
  expiresInMs: number,
  now: number,
) {
  expect(await admitAt(ledger, apiKey, msat, expiresInMs, now)).toMatchObject({
    ok: true,
    reservedMsat: msat,
  });
}

/**
 * Lease expiry as admit sees it. The Redis admit skips its sweep query while a stored lower bound of the
 * next lease expiry lies ahead; these cases would catch a bound that is too high (a stale bound after the
 * earliest lease finished, a shorter lease added later, a withdrawal hold's lease).
 */
export function leaseSuite(name: string, ctx: Ctx): void {
  /** A fresh store's ledger and a key funded with 1,000 msat on it. */
  async function fundedKey(): Promise<{ ledger: Ledger; apiKey: string }> {
    const { ledger } = await ctx.open();
    return { ledger, apiKey: (await fund(ledger, 1000)).apiKey };
  }

  describe(`${name}: lease expiry at admit`, () => {
    it('releases a later lease after the earliest one finished', async () => {
      const { ledger, apiKey } = await fundedKey();
      const a = await admitAt(ledger, apiKey, 100, 1000, T0); // expires T0+1000
      const b = await admitAt(ledger, apiKey, 900, 1500, T0 + 500); // expires T0+2000, takes the rest
      expect(a.ok && b.ok).toBe(true);
      if (!a.ok) return;
      await ledger.release({ accountId: a.accountId, requestId: a.requestId, now: T0 + 600 });
      // Past a's old expiry, b still open: only a's 100 is free.
      expect(await admitAt(ledger, apiKey, 200, 1000, T0 + 1200)).toMatchObject({
        ok: false,
        code: 'payment_required',
      });
      // b ran out at T0+2000: this admit releases it and gets the money.
      await expectAdmitted(ledger, apiKey, 1000, 1000, T0 + 2000);
    });

    it('releases a shorter lease added after a longer one', async () => {
      const { ledger, apiKey } = await fundedKey();
      expect((await admitAt(ledger, apiKey, 100, 60_000, T0)).ok).toBe(true);
      expect((await admitAt(ledger, apiKey, 900, 1000, T0 + 1)).ok).toBe(true);
      await expectAdmitted(ledger, apiKey, 900, 1000, T0 + 1001);
    });

    it("releases an expired withdrawal hold's lease", async () => {
      const { ledger, apiKey } = await fundedKey();
      expect((await admitAt(ledger, apiKey, 100, 60_000, T0)).ok).toBe(true);
      const h = await ledger.holdWithdrawal(
        holdInput(apiKey, { holdId: rid(), amountMsat: 900, expiresInMs: 1000, now: T0 + 1 }),
      );
      expect(h.ok).toBe(true);
      expect((await admitAt(ledger, apiKey, 900, 1000, T0 + 500)).ok).toBe(false);
      await expectAdmitted(ledger, apiKey, 900, 1000, T0 + 1001);
    });
  });
}
