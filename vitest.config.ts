import { defineConfig } from 'vitest/config';

/**
 * Two groups, one after the other. Most suites spend their time waiting on sockets, child processes and
 * timers, not on the CPU, so they run several files at once (`TEST_WORKERS`, default 3; Vitest's own default
 * on a 2-core machine would be one file at a time). The suites that load the machine on purpose or hold tight
 * time or memory bounds (chaos, fuzz, the soak slice, 10,000 idle sockets, failover, kill -9 under load across
 * processes, counting Redis commands, real Prometheus, the browsers, the SQLite WAL bound) run afterwards one file
 * at a time, so that nothing else distorts them. (The lease processes suite runs with the others: it must hold on a loaded machine.
 * Shutdown-bound and kill -9 suites without load have seconds of slack: they run side by side.)
 */
const SERIAL = [
  'test/chaos/**/*.test.ts',
  'test/fuzz/**/*.test.ts',
  'test/bench/soak-slice.test.ts',
  'test/http/slow-clients.test.ts',
  'test/e2e/redis-failover.test.ts',
  'test/ledger/lease-config.test.ts',
  'test/routes/prometheus.test.ts',
  'test/**/*browser*.test.ts',
  // The WAL checkpoint worker must keep a steadily written WAL under a bound: a thread starved of CPU by other
  // suites lets it grow past it (4.9 MB against 1.9 MB, seen with a CI run beside it).
  'test/store/sqlite-checkpoint.test.ts',
  // Each README walkthrough starts several servers (up to six Redis nodes, two gateways) under a time limit.
  'test/docs/readme-walkthroughs.test.ts',
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
