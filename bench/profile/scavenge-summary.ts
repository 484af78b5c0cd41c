import { readFileSync } from 'node:fs';

/**
 * Summarises the scavenges (V8's young-generation collections) of a process run with `--trace-gc-nvp`: how many,
 * how long each paused the process, and what each copied (the bytes that survived into the other semi-space and
 * those promoted to the old generation) and allocated since the one before. A scavenge's pause grows with what it
 * copies, so these are the figures to compare when the tail follows the scavenges (docs/benchmarks.md, "What the
 * paid gateway's scavenges copy"). Used by bench/profile/scavenges.sh.
 *
 *   tsx bench/profile/scavenge-summary.ts <gateway log> [calls] [from]
 *
 * `from`: how many scavenges the log held when the measured window began (those are left out). `calls`: the calls
 * answered in the window, for the bytes allocated per call (the window's scavenges' allocations over its calls:
 * what was allocated after the last scavenge of the window is not counted, so it reads slightly low).
 *
 * The old generation also grows by what is allocated there directly, which no scavenge copies: objects V8
 * pretenures, a rehashed `Map` table whose `Map` is old (docs/benchmarks.md, "Long-lived Maps churned per call").
 * Between two scavenges with no other collection between them, the heap's size after each less what survived in
 * the young generation is the old generation's; its growth less the second scavenge's promoted bytes is that
 * direct allocation (`oldDirect`, per call at the window's rate). It is what fills the old generation besides
 * promotion, so with promotion it sets how often a mark-compact comes.
 */

export interface Scavenge {
  /** The line's time stamp (ms since the process started). */
  atMs: number;
  /** The heap's size after it (every space). */
  totalAfterBytes: number;
  /** Another collection (a mark-compact) ran since the scavenge before this one. */
  afterOther: boolean;
  pauseMs: number;
  scavengeMs: number;
  survivedBytes: number;
  promotedBytes: number;
  allocatedBytes: number;
}

/** The scavenges of a `--trace-gc-nvp` log, in order (lines of other collections and any other output skipped). */
export function parseScavenges(log: string): Scavenge[] {
  const out: Scavenge[] = [];
  let other = false;
  for (const line of log.split('\n')) {
    if (!line.includes(' gc=s ')) {
      if (/ gc=\w+ /.test(line)) other = true;
      continue;
    }
    // The line's `name=value` fields, names whole (`scavenge.parallel` is not `scavenge`).
    const fields = new Map<string, string>();
    for (const [, name, value] of line.matchAll(/(?:^|\s)([\w.]+)=(\S+)/g)) fields.set(name!, value!);
    const field = (name: string): number => Number(fields.get(name) ?? Number.NaN);
    out.push({
      atMs: Number(/(\d+(?:\.\d+)?) ms: /.exec(line)?.[1] ?? Number.NaN),
      totalAfterBytes: field('total_size_after'),
      afterOther: other,
      pauseMs: field('pause'),
      scavengeMs: field('scavenge'),
      survivedBytes: field('new_space_survived'),
      promotedBytes: field('promoted'),
      allocatedBytes: field('allocated'),
    });
    other = false;
  }
  return out;
}

export interface ScavengeSummary {
  count: number;
  pauseMeanMs: number;
  pauseMaxMs: number;
  over5Ms: number;
  survivedKb: number;
  promotedKb: number;
  allocatedMb: number;
  /** Bytes allocated per answered call (when `calls` is given). */
  allocatedPerCallKb?: number;
  /** Bytes allocated straight in the old generation per answered call (when `calls` is given and measurable). */
  oldDirectPerCallB?: number;
}

/**
 * Bytes allocated straight in the old generation, and the time they took, over the window's pairs of scavenges
 * with no other collection between them.
 */
function oldDirect(s: Scavenge[]): { bytes: number; ms: number } {
  let bytes = 0;
  let ms = 0;
  for (let i = 1; i < s.length; i++) {
    const a = s[i - 1]!;
    const b = s[i]!;
    if (b.afterOther || !(b.atMs > a.atMs)) continue;
    const oldA = a.totalAfterBytes - a.survivedBytes;
    const oldB = b.totalAfterBytes - b.survivedBytes;
    if (!Number.isFinite(oldA) || !Number.isFinite(oldB)) continue;
    bytes += oldB - oldA - b.promotedBytes;
    ms += b.atMs - a.atMs;
  }
  return { bytes, ms };
}

export function summariseScavenges(all: Scavenge[], calls?: number, from = 0): ScavengeSummary {
  const s = all.slice(from);
  const n = s.length;
  const sum = (f: (x: Scavenge) => number) => s.reduce((a, x) => a + f(x), 0);
  const mean = (f: (x: Scavenge) => number) => (n === 0 ? 0 : sum(f) / n);
  return {
    count: n,
    pauseMeanMs: mean((x) => x.pauseMs),
    pauseMaxMs: n === 0 ? 0 : Math.max(...s.map((x) => x.pauseMs)),
    over5Ms: s.filter((x) => x.pauseMs > 5).length,
    survivedKb: mean((x) => x.survivedBytes) / 1024,
    promotedKb: mean((x) => x.promotedBytes) / 1024,
    allocatedMb: mean((x) => x.allocatedBytes) / 1048576,
    ...(calls !== undefined && calls > 0
      ? { allocatedPerCallKb: sum((x) => x.allocatedBytes) / 1024 / calls }
      : {}),
    ...oldDirectPerCall(s, calls),
  };
}

/** At the window's rate (its calls over the time from its first scavenge to its last). */
function oldDirectPerCall(s: Scavenge[], calls?: number): { oldDirectPerCallB?: number } {
  if (calls === undefined || calls <= 0 || s.length < 2) return {};
  const d = oldDirect(s);
  const windowMs = s[s.length - 1]!.atMs - s[0]!.atMs;
  if (d.ms <= 0 || !(windowMs > 0)) return {};
  return { oldDirectPerCallB: d.bytes / d.ms / (calls / windowMs) };
}

export function formatScavenges(r: ScavengeSummary): string {
  const perCall =
    (r.allocatedPerCallKb !== undefined ? `, ${r.allocatedPerCallKb.toFixed(1)} KiB a call` : '') +
    (r.oldDirectPerCallB !== undefined
      ? `; old generation allocated directly ${r.oldDirectPerCallB.toFixed(0)} B a call`
      : '');
  return (
    `scavenges ${r.count}, pause mean ${r.pauseMeanMs.toFixed(2)} ms, max ${r.pauseMaxMs.toFixed(2)} ms, ` +
    `${r.over5Ms} over 5 ms; each: survived ${r.survivedKb.toFixed(0)} KB, promoted ${r.promotedKb.toFixed(0)} KB, ` +
    `allocated ${r.allocatedMb.toFixed(1)} MB before it${perCall}`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, calls, from] = process.argv.slice(2);
  if (!file) {
    console.error('usage: tsx bench/profile/scavenge-summary.ts <gateway log> [calls] [from]');
    process.exit(2);
  }
  // The log may hold NUL bytes (a file truncated while the process kept writing): drop them.
  const log = readFileSync(file, 'utf8').replaceAll('\0', '');
  const parsed = parseScavenges(log);
  console.log(
    formatScavenges(summariseScavenges(parsed, calls ? Number(calls) : undefined, Number(from ?? 0))),
  );
}
