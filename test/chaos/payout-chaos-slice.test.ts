import { describe, expect, it } from 'vitest';
import { runPayoutChaos } from '../../scripts/chaos/payouts.js';

/**
 * The slice of `npm run chaos -- --payouts` the test command runs (12 s of traffic per store): two gateway processes
 * on one store pay keys out — refunds to each key's Lightning address, token withdrawals, key closes, the
 * expired-key sweep — while the mint's Lightning is held pending then paid or failed, melts are queued in front of
 * the mint, gateways are killed -9 and replaced, and the holds' clock jumps past the old 5-minute expiry. Afterwards
 * no address was paid beyond what its key was debited (at most once, never paid and kept), nothing is held, the
 * ledger is conserved, the wallet is solvent and every token handed out redeems (scripts/chaos/payouts.ts).
 */
// The two stores' runs are independent (each its own processes, store, mints and addresses) and run side by side.
describe('payout chaos slice', () => {
  it.concurrent.each(['sqlite', 'redis'] as const)(
    'on %s: every payout at most once, none paid and kept; conserved, solvent, nothing held',
    async (store) => {
      const report = await runPayoutChaos({ store, seconds: 12, processes: 2, keys: 9, faultEveryMs: 1_200 });
      expect(report.problems, JSON.stringify(report)).toEqual([]);
      expect(report.auditOk && report.solvent).toBe(true);
      // The run did what it is for: payouts were made and refused for an undecided one, faults were injected.
      expect(report.ops.ok).toBeGreaterThan(0);
      expect(report.lightningPaid).toBeGreaterThan(0);
      expect(Object.values(report.faults).reduce((a, b) => a + (b ?? 0), 0)).toBeGreaterThanOrEqual(3);
      expect(report.tokensRedeemed).toBe(report.tokensOut);
    },
    600_000,
  );
});
