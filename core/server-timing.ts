/**
 * The gateway's own share of a request, told to the client (`Server-Timing`) and to Prometheus
 * (`gateway_overhead_seconds`, core/metrics.ts) by one rule.
 */

/** When a request's steps happened (performance.now() ms); core/context.ts `Timings` has this shape. */
export interface CallTimes {
  readonly start: number;
  readonly upstreamStart?: number;
  readonly upstreamHeaders?: number;
  readonly upstreamEnd?: number;
  readonly end?: number;
}

/**
 * The gateway's share of `durationMs`: the duration minus the upstream wait (dispatch → the upstream
 * response's end, or → its headers when the body was not read yet or never, or → the request's end when the
 * upstream never answered). Requests answered without the upstream are all gateway time.
 */
export function overheadMs(durationMs: number, t: CallTimes | undefined): number {
  if (t?.upstreamStart === undefined) return durationMs;
  const upstreamEnd = t.upstreamEnd ?? t.upstreamHeaders ?? t.end ?? t.start + durationMs;
  return Math.max(0, durationMs - Math.max(0, upstreamEnd - t.upstreamStart));
}

/**
 * The `Server-Timing` value of an answer whose head is written at `now`: `gw;dur=<ms>` (the gateway's share so
 * far) and, for a relayed call, `upstream;dur=<ms>` (dispatch → the upstream's response head, its first byte).
 */
export function serverTiming(t: CallTimes, now: number): string {
  const gw = `gw;dur=${overheadMs(now - t.start, t).toFixed(3)}`;
  if (t.upstreamStart === undefined || t.upstreamHeaders === undefined) return gw;
  return `${gw}, upstream;dur=${(t.upstreamHeaders - t.upstreamStart).toFixed(3)}`;
}
