import { parseArgs } from 'node:util';
import { runFuzz } from './fuzz/run.js';
import type { FuzzEngine, FuzzStore } from './fuzz/target.js';

/**
 * `npm run fuzz [-- --seconds 60 --engine uws,node --store sqlite,redis --seed S --path P]`: property-based
 * black-box fuzzing of every operation in openapi/openapi.yaml against the gateway as its own process (see
 * scripts/fuzz/). The time is split evenly over the engine × store combinations. Exit 1 on any violation,
 * printing the seed and path that replay it.
 */
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    engine: { type: 'string', default: 'uws,node' },
    store: { type: 'string', default: 'sqlite,redis' },
    seed: { type: 'string' },
    path: { type: 'string' },
    survey: { type: 'boolean', default: false },
  },
});
const engines = values.engine.split(',') as FuzzEngine[];
const stores = values.store.split(',') as FuzzStore[];
const combos = engines.flatMap((engine) => stores.map((store) => ({ engine, store })));
const seconds = Math.max(1, Number(values.seconds) / combos.length);
let failed = false;
for (const { engine, store } of combos) {
  const report = await runFuzz({
    engine,
    store,
    seconds,
    ...(values.seed !== undefined ? { seed: Number(values.seed) } : {}),
    ...(values.path !== undefined ? { path: values.path } : {}),
    survey: values.survey,
    log: (l) => console.log(l),
  });
  if (report.violations) {
    for (const [kind, { count, example }] of Object.entries(report.violations)) {
      console.error(`- ${kind} (×${count})\n    e.g. ${example}`);
    }
  }
  if (report.failure) {
    failed = true;
    console.error(`FAIL ${engine}/${store} (seed ${report.seed}):\n${report.failure}`);
    console.error(
      `replay: npm run fuzz -- --engine ${engine} --store ${store} --seed ${report.seed} [--path …]`,
    );
  } else {
    console.log(
      `ok ${engine}/${store}: ${report.requests} requests, seed ${report.seed}, audit and solvency pass`,
    );
  }
}
process.exit(failed ? 1 : 0);
