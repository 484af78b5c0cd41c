import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderSvg, reportPanels } from './lib/chart.js';
import { renderMarkdown } from './lib/report.js';
import { type BenchReport, evaluateTargets } from './lib/results.js';

/**
 * Re-renders latest.md and latest.svg from latest.json (after a change to the report format, without a new
 * run). Usage: npx tsx bench/render.ts [dir]   (default bench/results)
 */
const dir = process.argv[2] ?? 'bench/results';
const report = JSON.parse(readFileSync(join(dir, 'latest.json'), 'utf8')) as BenchReport;
report.evaluations = evaluateTargets(report.results);
writeFileSync(join(dir, 'latest.md'), renderMarkdown(report));
writeFileSync(
  join(dir, 'latest.svg'),
  renderSvg(
    reportPanels(report),
    `Growth curves (${report.startedAt.slice(0, 10)}, ${report.machine.cores} cores)`,
  ),
);
console.log(`rendered ${dir}/latest.{md,svg}`);
