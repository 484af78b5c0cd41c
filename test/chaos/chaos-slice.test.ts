import { describe, expect, it } from 'vitest';
import { runChaos } from '../../scripts/chaos/run.js';

/**
 * The slice of `npm run chaos` (20 s on Redis, 12 s on SQLite) the test command runs: 3 gateway processes on their own Redis (AOF),
 * then on one shared SQLite file, under paid traffic in all three payment modes while gateways are killed -9
 * and restarted, Redis is killed and restarted, the mint and the upstream fail. The money must add up.
 */
// The two stores' runs are independent (each its own processes, store, mint and upstream) and run side by side:
// each loads the machine for the other, as CI's own load does, and the slice takes the time of the longer one.
describe('chaos slice', () => {
  it.concurrent.each([
    ['redis', 20],
    ['sqlite', 12],
  ] as const)(
    'on %s: nothing lost: audit, solvency, no reservation left, every paid token credited, every returned token redeems',
    async (store, seconds) => {
      // What the checks need (more than 20 calls served, at least 2 faults) is waited for: on a busy machine the
      // traffic runs past its seconds until it has them, at most 120 s. The test's bound (10 min) covers three
      // gateway starts, the token pool and the verification on a machine at load 40 (6 min did not).
      const report = await runChaos({
        store,
        seconds,
        processes: 3,
        faultEveryMs: 2_000,
        minServed: 21,
        minFaults: 2,
        maxSeconds: 120,
      });
      expect(report.problems, JSON.stringify(report)).toEqual([]);
      expect(report.counts.served).toBeGreaterThan(20);
      // Every call answered 200 was charged (a call cut or failed after admission may be charged too), except
      // what a gateway killed -9 right after answering had settled but not yet reported: with credit leases (the
      // default) that is the documented loss of a kill (docs/ledger.md, "Credit leases"), one flush at most.
      expect(report.charged.calls).toBeGreaterThanOrEqual(report.counts.served - report.servedJustBeforeKill);
      expect(Object.values(report.faults).reduce((a, b) => a + (b ?? 0), 0)).toBeGreaterThanOrEqual(2);
      expect(report.tokensLost).toBe(0);
      expect(report.reservedAfterMsat).toBe(0);
      expect(report.auditOk && report.solvent).toBe(true);
      expect(report.returnedRedeemed).toBe(report.returnedTokens);
    },
    600_000,
  );
});
