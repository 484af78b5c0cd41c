import { defineConfig } from 'vitest/config';

/**
 * Two groups, one after the other. Most suites spend their time waiting on sockets, child processes and
 * timers, not on the CPU, so they run several files at once (`TEST_WORKERS`, default 3; Vitest's own default
 * on a 2-core machine would be one file at a time). The suites that measure time or memory bounds, or load the
 * machine on purpose (chaos, fuzz, 10,000 idle sockets, shutdown deadlines, failover, kill -9, multi-process
 * leases, real Prometheus, the browser), run afterwards one file at a time, so that nothing else distorts them.
 */
const SERIAL = [
  'test/chaos/**/*.test.ts',
  'test/fuzz/**/*.test.ts',
  'test/bench/soak*.test.ts',
  'test/http/slow-clients.test.ts',
  'test/http/oversize-body.test.ts',
  'test/e2e/shutdown-bound.test.ts',
  'test/e2e/graceful-shutdown.test.ts',
  'test/e2e/redis-failover.test.ts',
  'test/e2e/audit-kill.test.ts',
  'test/e2e/batches-crash.test.ts',
  'test/e2e/workers.test.ts',
  'test/ledger/lease-processes.test.ts',
  'test/ledger/lease-config.test.ts',
  'test/ledger/redis-crash.test.ts',
  'test/routes/prometheus.test.ts',
  'test/**/*browser*.test.ts',
];
const workers = Number(process.env.TEST_WORKERS ?? 3);

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'concurrent',
          include: ['test/**/*.test.ts'],
          exclude: SERIAL,
          maxWorkers: workers,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'one-at-a-time',
          include: SERIAL,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
