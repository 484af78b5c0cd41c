/**
 * The gateway's own view of its tail, read from its /metrics before and after a measured window: event-loop
 * delay (`gateway_event_loop_delay_seconds`) and GC pauses (`nodejs_gc_duration_seconds`, every kind). The
 * difference of two scrapes is the window's histogram; percentiles are read from its buckets.
 */

/** Cumulative bucket counts by `le` (seconds; Infinity for +Inf), one series. */
type Buckets = Map<number, number>;

export interface RuntimeScrape {
  loop: Buckets;
  /** Every GC kind summed. */
  gc: Buckets;
  /** Each GC kind's own (prom-client's `kind` label: minor, major, incremental, weakcb). */
  gcByKind: Map<string, Buckets>;
}

export interface RuntimeSummary {
  /** Loop samples in the window: one per 5 ms slot of wall time (a stall counts in every slot it covered). */
  loopSamples: number;
  /** Upper bound of the bucket holding the 99th percentile of loop delay, ms (bucket resolution). */
  loopDelayP99Ms: number;
  /** Upper bound of the bucket holding the largest loop delay, ms (Infinity: above the last bucket). */
  loopDelayMaxMs: number;
  gcPauses: number;
  /** Those by GC kind (every kind that paused): how many major (mark-compact) collections the window held. */
  gcPausesByKind: Record<string, number>;
  /** GC pauses longer than 5 ms in the window. */
  gcOver5ms: number;
  /** Those by GC kind (kinds with none left out): which collector made the long pauses. */
  gcOver5msByKind: Record<string, number>;
  /** Upper bound of the bucket holding the longest GC pause, ms. */
  gcLongestMs: number;
}

const LINE = /^(gateway_event_loop_delay_seconds|nodejs_gc_duration_seconds)_bucket\{([^}]*)\} (\S+)/;

/** Parses the two histograms out of a Prometheus text exposition (pure; tested). */
export function parseRuntime(text: string): RuntimeScrape {
  const loop: Buckets = new Map();
  const gc: Buckets = new Map();
  const gcByKind = new Map<string, Buckets>();
  const add = (into: Buckets, bound: number, n: number) => into.set(bound, (into.get(bound) ?? 0) + n);
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (m === null) continue;
    const le = /le="([^"]+)"/.exec(m[2]!)?.[1];
    if (le === undefined) continue;
    const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
    if (m[1] === 'gateway_event_loop_delay_seconds') {
      add(loop, bound, Number(m[3]));
      continue;
    }
    add(gc, bound, Number(m[3]));
    const kind = /kind="([^"]+)"/.exec(m[2]!)?.[1] ?? '';
    const own = gcByKind.get(kind) ?? new Map<number, number>();
    gcByKind.set(kind, own);
    add(own, bound, Number(m[3]));
  }
  return { loop, gc, gcByKind };
}

function delta(a: Buckets, b: Buckets): Array<[number, number]> {
  return [...b.entries()]
    .map(([le, n]) => [le, n - (a.get(le) ?? 0)] as [number, number])
    .sort((x, y) => x[0] - y[0]);
}

/** The smallest bound whose cumulative count reaches `share` of the total, ms (0 when there is nothing). */
function quantileMs(cumulative: Array<[number, number]>, share: number): number {
  const total = cumulative.at(-1)?.[1] ?? 0;
  if (total === 0) return 0;
  for (const [le, n] of cumulative) if (n >= total * share) return le * 1000;
  return Number.POSITIVE_INFINITY;
}

/** Pauses in a window's cumulative GC buckets longer than 5 ms (the bucket bound prom-client's buckets carry). */
function over5ms(gc: Array<[number, number]>): number {
  const total = gc.at(-1)?.[1] ?? 0;
  return total - (gc.find(([le]) => Math.abs(le - 0.005) < 1e-9)?.[1] ?? total);
}

/** What happened between two scrapes (pure; tested). */
export function summarize(before: RuntimeScrape, after: RuntimeScrape): RuntimeSummary {
  const loop = delta(before.loop, after.loop);
  const gc = delta(before.gc, after.gc);
  const gcTotal = gc.at(-1)?.[1] ?? 0;
  const gcPausesByKind: Record<string, number> = {};
  const gcOver5msByKind: Record<string, number> = {};
  for (const [kind, own] of after.gcByKind) {
    const window = delta(before.gcByKind.get(kind) ?? new Map(), own);
    const all = window.at(-1)?.[1] ?? 0;
    if (all > 0) gcPausesByKind[kind] = all;
    const n = over5ms(window);
    if (n > 0) gcOver5msByKind[kind] = n;
  }
  return {
    loopSamples: loop.at(-1)?.[1] ?? 0,
    loopDelayP99Ms: quantileMs(loop, 0.99),
    loopDelayMaxMs: quantileMs(loop, 1),
    gcPauses: gcTotal,
    gcPausesByKind,
    gcOver5ms: over5ms(gc),
    gcOver5msByKind,
    gcLongestMs: quantileMs(gc, 1),
  };
}

/** "266 (minor 262, major 2)": a count with its kinds, or the count alone (reports of earlier runs carry no kinds). */
function withKinds(n: number, byKind: Record<string, number> | undefined): string {
  const kinds = Object.entries(byKind ?? {}).map(([kind, k]) => `${kind} ${k}`);
  return kinds.length > 0 ? `${n} (${kinds.join(', ')})` : String(n);
}

/** "2 (minor 1, major 1)": pauses over 5 ms with their kinds. */
export function gcOver5msText(rt: Pick<RuntimeSummary, 'gcOver5ms'> & Partial<RuntimeSummary>): string {
  return withKinds(rt.gcOver5ms, rt.gcOver5msByKind);
}

/** "266 (minor 262, major 2, incremental 2)": every pause with its kinds. */
export function gcPausesText(rt: Pick<RuntimeSummary, 'gcPauses'> & Partial<RuntimeSummary>): string {
  return withKinds(rt.gcPauses, rt.gcPausesByKind);
}

/** GET /metrics (loopback: the gateway answers loopback scrapes without a token). */
export async function scrapeRuntime(baseUrl: string): Promise<RuntimeScrape | undefined> {
  try {
    const res = await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(5000) });
    if (!res.ok) return undefined;
    return parseRuntime(await res.text());
  } catch {
    return undefined;
  }
}
