// Preload for the per-stage breakdown run: subscribes to the gateway's diagnostics_channel events
// (core/tracing.ts) and accumulates per-call stage times. SIGUSR1 resets, SIGUSR2 writes the sums as JSON to
// $BENCH_TRACE_OUT. Loaded only for that run (the channels cost nothing without a subscriber).
// Usage: node --import ./bench/support/trace-preload.mjs dist/core/main.js
import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';

let acc;
const reset = () => {
  acc = {
    calls: 0,
    admission: 0,
    upstreamWait: 0,
    afterHeaders: 0,
    total: 0,
    chunkMs: 0,
    hooks: {},
    statuses: {},
  };
};
reset();

subscribe('gateway:stage', (e) => {
  const k = `${e.plugin}.${e.hook}`;
  let h = acc.hooks[k];
  if (h === undefined) {
    h = { n: 0, ms: 0 };
    acc.hooks[k] = h;
  }
  h.n++;
  h.ms += e.durationMs;
});

subscribe('gateway:request:end', (e) => {
  acc.statuses[e.status] = (acc.statuses[e.status] ?? 0) + 1;
  const t = e.timings;
  if (e.status !== 200 || t.upstreamStart === undefined || t.upstreamHeaders === undefined) return;
  acc.calls++;
  acc.admission += t.upstreamStart - t.start;
  acc.upstreamWait += t.upstreamHeaders - t.upstreamStart;
  acc.afterHeaders += (t.end ?? t.upstreamHeaders) - t.upstreamHeaders;
  acc.total += e.durationMs;
  acc.chunkMs += e.chunkMs ?? 0;
});

process.on('SIGUSR1', reset);
process.on('SIGUSR2', () => {
  const out = process.env.BENCH_TRACE_OUT;
  if (out) writeFileSync(out, JSON.stringify({ ...acc, cpu: process.cpuUsage() }));
});
