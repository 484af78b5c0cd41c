// Preload for finding where a gateway's latency tail comes from: records every GC pause (by kind) and the
// event-loop delay while the process runs, and writes the summary as JSON to
// $TMPDIR/gateway-tail-<pid>.json when it exits (the bench's gateways get a fixed environment, so the path is
// by pid). Used by bench/profile/tail.sh; costs one PerformanceObserver and a 1 ms loop-delay histogram.
// Usage: node --import ./bench/support/tail-preload.mjs dist/core/main.js
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-sweep',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak-callbacks',
};
const gc = {};
const pauses = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = KINDS[e.detail?.kind ?? e.kind] ?? 'other';
    if (gc[kind] === undefined) gc[kind] = { n: 0, ms: 0, maxMs: 0, over1ms: 0, over5ms: 0 };
    const g = gc[kind];
    g.n++;
    g.ms += e.duration;
    g.maxMs = Math.max(g.maxMs, e.duration);
    if (e.duration > 1) g.over1ms++;
    if (e.duration > 5) g.over5ms++;
    if (pauses.length < 100_000) pauses.push(e.duration);
  }
}).observe({ entryTypes: ['gc'] });
const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();
const t0 = performance.now();
process.on('exit', () => {
  loop.disable();
  const ms = (ns) => Math.round(ns / 1e4) / 100;
  pauses.sort((a, b) => a - b);
  const at = (q) =>
    pauses.length ? Math.round(pauses[Math.floor(q * (pauses.length - 1))] * 1000) / 1000 : 0;
  const out = {
    seconds: Math.round(performance.now() - t0) / 1000,
    execArgv: process.execArgv.filter(
      (a, i, all) =>
        !a.includes('tail-preload') && !(a === '--import' && all[i + 1]?.includes('tail-preload')),
    ),
    gc,
    gcPauseMs: { p50: at(0.5), p99: at(0.99), max: at(1) },
    loopDelayMs: { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) },
  };
  writeFileSync(join(tmpdir(), `gateway-tail-${process.pid}.json`), `${JSON.stringify(out, null, 1)}\n`);
});
