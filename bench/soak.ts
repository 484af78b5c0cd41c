import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSoakArgs, SOAK_USAGE, type SoakCli, SoakUsageError } from './soak/args.js';
import { renderSoakMarkdown } from './soak/report.js';
import { runSoak } from './soak/run.js';

/**
 * `npm run soak -- --minutes N`: paid traffic at a fixed rate against the built gateway on a fresh store,
 * sampled every 10 s, ending with the audit and the money check; writes <out>/soak-latest.{json,md}, prints
 * PASS or FAIL per criterion and exits 1 on any FAIL (2 on a usage error). See docs/benchmarks.md, "Soak".
 */

const say = (line: string): void => {
  process.stdout.write(`[soak] ${line}\n`);
};

let cli: SoakCli;
try {
  cli = parseSoakArgs(process.argv.slice(2));
} catch (err) {
  if (!(err instanceof SoakUsageError)) throw err;
  console.error(`soak: ${err.message}\nusage: ${SOAK_USAGE}`);
  process.exit(2);
}

if (cli.build) {
  say('npm run build');
  const b = spawnSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
  if (b.status !== 0) {
    console.error(`soak: npm run build failed (exit ${b.status})`);
    process.exit(2);
  }
}

const report = await runSoak({ ...cli, entry: 'dist', log: say });
mkdirSync(cli.outDir, { recursive: true });
const base = join(cli.outDir, 'soak-latest');
writeFileSync(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(`${base}.md`, renderSoakMarkdown(report));
say(`wrote ${base}.{json,md}`);
for (const c of report.criteria) say(`${c.pass ? 'PASS' : 'FAIL'} ${c.id}: ${c.measured} (goal ${c.goal})`);
for (const n of report.notes) say(`note: ${n}`);
say(report.pass ? 'PASS' : 'FAIL');
process.exitCode = report.pass ? 0 : 1;
