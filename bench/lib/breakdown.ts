import type { StageBreakdown } from './results.js';

/** What bench/support/trace-preload.mjs writes (sums over the traced calls). */
export interface TraceDump {
  calls: number;
  admission: number;
  upstreamWait: number;
  afterHeaders: number;
  total: number;
  chunkMs: number;
  hooks: Record<string, { n: number; ms: number }>;
  statuses: Record<string, number>;
}

const r3 = (v: number): number => Math.round(v * 1000) / 1000;

/**
 * Means per call from the trace sums (pure; tested). Settle = every hook of the `settle` stage; the part of
 * it that runs before the response ends (`onResponseEnd`) is taken out of the relay-to-client time.
 */
export function toBreakdown(target: string, d: TraceDump, cpuS: number, cpuCalls: number): StageBreakdown {
  const n = Math.max(1, d.calls);
  const hooks: Record<string, number> = {};
  let settle = 0;
  let settleInResponse = 0;
  for (const [k, h] of Object.entries(d.hooks)) {
    hooks[k] = r3(h.ms / Math.max(1, h.n));
    if (k.startsWith('settle.')) settle += h.ms;
    if (k === 'settle.onResponseEnd') settleInResponse += h.ms;
  }
  return {
    target,
    calls: d.calls,
    admissionMs: r3(d.admission / n),
    upstreamWaitMs: r3(d.upstreamWait / n),
    relayMs: r3((d.afterHeaders - settleInResponse) / n),
    settleMs: r3(settle / n),
    totalMs: r3(d.total / n),
    cpuMsPerCall: cpuCalls > 0 ? r3((cpuS * 1000) / cpuCalls) : Number.NaN,
    hooks,
  };
}
