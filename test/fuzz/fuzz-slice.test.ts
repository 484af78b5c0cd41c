import { describe, expect, it } from 'vitest';
import { runFuzz } from '../../scripts/fuzz/run.js';

/**
 * The 20-second slice of `npm run fuzz` the test command runs: 5 s of generated hostile requests against each
 * engine × store, the gateway in its own process. Each run asserts the per-answer invariants (answered or
 * closed in time, the error envelope, no gateway 5xx, no secret echoed, process alive) and, at its end, the
 * ledger audit, wallet solvency and clean logs. A failure prints the seed that replays it.
 */
const SECONDS = Number(process.env.FUZZ_SLICE_SECONDS ?? 5);

// Per engine, the two stores at once (each its own gateway process, store and mint): two fuzzers load the
// machine for each other, and the slice takes half the time.
describe.each(['uws', 'node'] as const)('fuzz slice on %s', (engine) => {
  it.concurrent.each(['sqlite', 'redis'] as const)(
    `${engine} / %s: every answer keeps the invariants; audit and solvency pass afterwards`,
    async (store) => {
      const report = await runFuzz({ engine, store, seconds: SECONDS });
      expect(report.failure, `seed ${report.seed}`).toBeUndefined();
      expect(report.requests).toBeGreaterThan(10);
      expect(report.money).toBeDefined();
    },
    120_000,
  );
});
