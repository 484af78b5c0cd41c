import { describe, expect, it } from 'vitest';
import { runFuzz } from '../../scripts/fuzz/run.js';

/**
 * The 20-second slice of `npm run fuzz` the test command runs: 5 s of generated hostile requests against each
 * engine × store, the gateway in its own process. Each run asserts the per-answer invariants (answered or
 * closed in time, the error envelope, no gateway 5xx, no secret echoed, process alive) and, at its end, the
 * ledger audit, wallet solvency and clean logs. A failure prints the seed that replays it.
 */
const SECONDS = Number(process.env.FUZZ_SLICE_SECONDS ?? 5);

describe.each([
  ['uws', 'sqlite'],
  ['uws', 'redis'],
  ['node', 'sqlite'],
  ['node', 'redis'],
] as const)('fuzz slice on %s / %s', (engine, store) => {
  it('every answer keeps the invariants; audit and solvency pass afterwards', async () => {
    const report = await runFuzz({ engine, store, seconds: SECONDS });
    expect(report.failure, `seed ${report.seed}`).toBeUndefined();
    expect(report.requests).toBeGreaterThan(10);
    expect(report.money).toBeDefined();
  }, 120_000);
});
