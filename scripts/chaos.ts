import { parseArgs } from 'node:util';
import { runPayoutChaos } from './chaos/payouts.js';
import { type ChaosStore, runChaos } from './chaos/run.js';

/**
 * `npm run chaos [-- --seconds 120 --store redis,sqlite --processes 3 --seed S --cluster]`: gateway processes on
 * one store under paid traffic while faults are injected (see scripts/chaos/run.ts). `--cluster`: the Redis
 * store is a 3-master, 3-replica Redis Cluster and masters are SIGKILLed too. `--payouts`: the payout run instead
 * (scripts/chaos/payouts.ts: refunds to Lightning addresses, withdrawals, key closes and the expired-key sweep while
 * melts are held pending, queued, paid late or failed, gateways killed and the holds' clock jumped; every payout
 * paid at most once, none paid and kept). The time is split over the stores.
 * Prints the report; exit 1 when any money check failed.
 */
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '120' },
    store: { type: 'string', default: 'redis,sqlite' },
    processes: { type: 'string', default: '3' },
    seed: { type: 'string' },
    cluster: { type: 'boolean', default: false },
    payouts: { type: 'boolean', default: false },
  },
});
const stores = values.store.split(',') as ChaosStore[];
let failed = false;
for (const store of stores) {
  if (values.payouts) {
    const report = await runPayoutChaos({
      store,
      seconds: Math.max(5, Number(values.seconds) / stores.length),
      processes: Number(values.processes),
      ...(values.seed !== undefined ? { seed: Number(values.seed) } : {}),
      log: (l) => console.log(`[${store}] ${l}`),
    });
    console.log(JSON.stringify(report, null, 2));
    if (report.problems.length > 0) failed = true;
    continue;
  }
  const report = await runChaos({
    store,
    seconds: Math.max(5, Number(values.seconds) / stores.length),
    processes: Number(values.processes),
    cluster: values.cluster,
    ...(values.seed !== undefined ? { seed: Number(values.seed) } : {}),
    log: (l) => console.log(`[${store}] ${l}`),
  });
  console.log(JSON.stringify(report, null, 2));
  if (report.problems.length > 0) failed = true;
}
process.exit(failed ? 1 : 0);
