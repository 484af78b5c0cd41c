import { describe, expect, it } from 'vitest';
import type { Ledger, RateLimits } from '../../../core/ledger/types.js';
import { admitInput, BIG, type Ctx, fund, settleInput, T0 } from './conformance.js';

async function burst(ledger: Ledger, apiKey: string, n: number, msat: number, limits: RateLimits = BIG) {
  return Promise.all(
    Array.from({ length: n }, () =>
      ledger.admit(
        admitInput(apiKey, { maxMsat: msat, minMsat: msat, expiresInMs: 60_000, limits, now: T0 }),
      ),
    ),
  );
}

/** Concurrency: the money rules hold when many admits race for the same balance. */
export function raceSuite(name: string, ctx: Ctx): void {
  describe(`${name}: races`, () => {
    it('1,000 concurrent admits against a balance affording exactly 100 → exactly 100 succeed', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 100 * 37);
      const results = await burst(ledger, k.apiKey, 1000, 37);
      expect(results.filter((r) => r.ok)).toHaveLength(100);
      expect(results.filter((r) => !r.ok && r.code === 'payment_required')).toHaveLength(900);
      const info = await ledger.getKeyInfo({ apiKey: k.apiKey });
      expect(info?.account).toMatchObject({ balanceMsat: 3700, reservedMsat: 3700 });
      expect(info?.availableMsat).toBe(0);
      // settle every winner concurrently at its full reservation: the balance ends at exactly zero
      const settled = await Promise.all(
        results.flatMap((r) =>
          r.ok
            ? [ledger.settle(settleInput(r, { costMsat: 37, promptTokens: 1, completionTokens: 1, now: T0 }))]
            : [],
        ),
      );
      expect(settled.every((s) => s.ok && s.overrunMsat === 0)).toBe(true);
      expect((await ledger.getKeyInfo({ apiKey: k.apiKey }))?.account).toMatchObject({
        balanceMsat: 0,
        reservedMsat: 0,
        spentMsat: 3700,
        requests: 100,
      });
    });

    it('children racing their parent never overspend the shared balance nor their own limits', async () => {
      const { ledger } = await ctx.open();
      const parent = await fund(ledger, 1000);
      const ch = await ledger.createChildKeys({
        parent: { apiKey: parent.apiKey },
        count: 4,
        feePerKeyMsat: 0,
        balanceLimitMsat: 200,
        now: T0,
      });
      if (!ch.ok) throw new Error(ch.code);
      const all = [parent.apiKey, ...ch.apiKeys];
      const results = await Promise.all(all.map((key) => burst(ledger, key, 100, 10)));
      const wins = results.map((rs) => rs.filter((r) => r.ok).length);
      expect(wins.reduce((a, b) => a + b, 0)).toBe(100);
      for (const w of wins.slice(1)) expect(w).toBeLessThanOrEqual(20);
      const info = await ledger.getKeyInfo({ apiKey: parent.apiKey });
      expect(info?.account).toMatchObject({ balanceMsat: 1000, reservedMsat: 1000 });
      for (const c of info?.children ?? []) expect(c.usage.reservedMsat).toBeLessThanOrEqual(200);
    });

    it('rate limits are exact under concurrency (requests per minute, concurrent requests)', async () => {
      const { ledger } = await ctx.open();
      const k = await fund(ledger, 1_000_000);
      const rpm = await burst(ledger, k.apiKey, 100, 1, { ...BIG, requestsPerMinute: 25 });
      expect(rpm.filter((r) => r.ok)).toHaveLength(25);
      const refused = rpm.find((r) => !r.ok);
      const minute = Math.floor(T0 / 60_000);
      expect(refused).toEqual({
        ok: false,
        code: 'rate_limit_exceeded',
        rateLimit: { type: 'requests_per_minute', limit: 25, remaining: 0, resetUnix: (minute + 1) * 60 },
      });
      const oks = rpm.flatMap((r) => (r.ok ? [r] : []));
      expect(oks.map((r) => r.rateLimit.remaining).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 25 }, (_, i) => i),
      );
      await Promise.all(oks.map((r) => ledger.release({ accountId: r.accountId, requestId: r.requestId })));
      const k2 = await fund(ledger, 1_000_000);
      const conc = await burst(ledger, k2.apiKey, 50, 1, { ...BIG, concurrent: 7 });
      expect(conc.filter((r) => r.ok)).toHaveLength(7);
      expect(
        conc.filter(
          (r) => !r.ok && r.code === 'rate_limit_exceeded' && r.rateLimit.type === 'concurrent_requests',
        ),
      ).toHaveLength(43);
      const first = conc.find((r) => r.ok);
      if (first?.ok) await ledger.release({ accountId: first.accountId, requestId: first.requestId });
      const again = await burst(ledger, k2.apiKey, 5, 1, { ...BIG, concurrent: 7 });
      expect(again.filter((r) => r.ok)).toHaveLength(1);
    });
  });
}
