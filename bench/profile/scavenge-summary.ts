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
 */

export interface Scavenge {
  pauseMs: number;
  scavengeMs: number;
  survivedBytes: number;
  promotedBytes: number;
  allocatedBytes: number;
}

/** The scavenges of a `--trace-gc-nvp` log, in order (lines of other collections and any other output skipped). */
export function parseScavenges(log: string): Scavenge[] {
  const out: Scavenge[] = [];
  for (const line of log.split('\n')) {
    if (!line.includes(' gc=s ')) continue;
    // The line's `name=value` fields, names whole (`scavenge.parallel` is not `scavenge`).
    const fields = new Map<string, string>();
    for (const [, name, value] of line.matchAll(/(?:^|\s)([\w.]+)=(\S+)/g)) fields.set(name!, value!);
    const field = (name: string): number => Number(fields.get(name) ?? Number.NaN);
    out.push({
      pauseMs: field('pause'),
      scavengeMs: field('scavenge'),
      survivedBytes: field('new_space_survived'),
      promotedBytes: field('promoted'),
      allocatedBytes: field('allocated'),
    });
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
  };
}

export function formatScavenges(r: ScavengeSummary): string {
  const perCall = r.allocatedPerCallKb !== undefined ? `, ${r.allocatedPerCallKb.toFixed(1)} KiB a call` : '';
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
