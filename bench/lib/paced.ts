import { Pool } from 'undici';
import { LatencyRecorder } from './stats.js';

/**
 * Open-loop load at a fixed rate, evenly spaced (not in per-second bursts). autocannon's `overallRate` lets
 * every connection send its share at the start of each second and then idle, which measures queueing
 * behind the burst rather than per-call latency; this generator issues each request at its own due time
 * (t0 + i/rate) over a keep-alive pool and times it from the moment it was issued.
 */

export interface PacedOptions {
  url: string;
  path: string;
  headers: (i: number) => Record<string, string>;
  body: string;
  rate: number;
  connections: number;
  durationS: number;
  timeoutMs: number;
  /** Bound on requests in flight (default 4 × connections): a saturated target cannot grow a backlog. */
  maxInFlight?: number;
}

export interface PacedResult {
  durationS: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  latency: LatencyRecorder;
  /** How late requests were issued relative to their due time (generator saturation), p99 ms. */
  lateP99Ms: number;
  /** Requests not issued because `maxInFlight` were already waiting (the target could not keep the rate). */
  missed: number;
}

/** Requests due by `elapsedMs` at `rate` req/s (pure; tested). */
export function dueCount(elapsedMs: number, rate: number): number {
  return Math.floor((elapsedMs * rate) / 1000) + 1;
}

export async function runPaced(o: PacedOptions): Promise<PacedResult> {
  const pool = new Pool(o.url, {
    connections: o.connections,
    pipelining: 1,
    headersTimeout: o.timeoutMs,
    bodyTimeout: o.timeoutMs,
  });
  const latency = new LatencyRecorder();
  const late = new LatencyRecorder();
  const maxInFlight = o.maxInFlight ?? o.connections * 4;
  const res: PacedResult = {
    missed: 0,
    durationS: 0,
    ok: 0,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    statusCodes: {},
    latency,
    lateP99Ms: 0,
  };
  const total = Math.round(o.rate * o.durationS);
  const inflight = new Set<Promise<void>>();
  const t0 = performance.now();
  let sent = 0;
  const fire = (i: number) => {
    if (inflight.size >= maxInFlight) {
      res.missed++;
      return;
    }
    const start = performance.now();
    late.record(Math.max(0, start - (t0 + (i * 1000) / o.rate)));
    const p = pool
      .request({
        method: 'POST',
        path: o.path,
        headers: { 'content-type': 'application/json', ...o.headers(i) },
        body: o.body,
      })
      .then(async (r) => {
        await r.body.dump({ limit: Number.MAX_SAFE_INTEGER });
        res.statusCodes[r.statusCode] = (res.statusCodes[r.statusCode] ?? 0) + 1;
        if (r.statusCode >= 200 && r.statusCode < 300) {
          res.ok++;
          latency.record(performance.now() - start);
        } else res.non2xx++;
      })
      .catch((err: { code?: string }) => {
        if (err.code === 'UND_ERR_HEADERS_TIMEOUT' || err.code === 'UND_ERR_BODY_TIMEOUT') res.timeouts++;
        else res.errors++;
      })
      .finally(() => inflight.delete(p));
    inflight.add(p);
  };
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(total, dueCount(performance.now() - t0, o.rate));
      while (sent < due) fire(sent++);
      if (sent >= total) resolve();
      else setTimeout(tick, 1); // ≈1 ms ticks: a busy loop would steal a core from the target
    };
    tick();
  });
  await Promise.all(inflight);
  res.durationS = (performance.now() - t0) / 1000;
  res.lateP99Ms = late.summary().p99;
  await pool.close();
  return res;
}
