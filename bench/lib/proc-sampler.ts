import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU and RSS of target processes from /proc (pidusage-like, Linux only): utime+stime ticks and RSS pages
 * of a process and its descendants (nginx master + workers), sampled on an interval during a scenario.
 */

const TICKS_PER_S = 100; // USER_HZ; `getconf CLK_TCK` is 100 on Linux x86-64 and arm64
const PAGE_BYTES = 4096;

export interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime, seconds. */
  cpuS: number;
  rssBytes: number;
}

/** Parses one /proc/<pid>/stat line (the command name may contain spaces and parentheses). */
export function parseProcStat(line: string): ProcStat {
  const close = line.lastIndexOf(')');
  const pid = Number(line.slice(0, line.indexOf(' ')));
  // Fields after the name start at field 3 (state); utime/stime are fields 14/15, rss field 24.
  const f = line
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  const at = (field: number): number => Number(f[field - 3]);
  return { pid, ppid: at(4), cpuS: (at(14) + at(15)) / TICKS_PER_S, rssBytes: at(24) * PAGE_BYTES };
}

function readStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The pid and every live descendant. */
export function processTree(root: number): number[] {
  const stats: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = readStat(Number(name));
    if (s) stats.push(s);
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    for (const s of stats) if (s.ppid === tree[i] && !tree.includes(s.pid)) tree.push(s.pid);
  }
  return tree;
}

export interface UsageSample {
  cpuS: number;
  rssBytes: number;
}

/** Summed CPU seconds and RSS over pids (missing processes count as zero). */
export function readUsage(pids: number[]): UsageSample {
  let cpuS = 0;
  let rssBytes = 0;
  for (const p of pids) {
    const s = readStat(p);
    if (s) {
      cpuS += s.cpuS;
      rssBytes += s.rssBytes;
    }
  }
  return { cpuS, rssBytes };
}

export interface SamplerResult {
  cpuS: number;
  wallS: number;
  cpuPercent: number;
  rssStartMb: number;
  rssPeakMb: number;
}

/** Samples a process tree every `intervalMs` from start() to stop(). */
export class ProcSampler {
  private timer: NodeJS.Timeout | undefined;
  private first: UsageSample = { cpuS: 0, rssBytes: 0 };
  private t0 = 0;
  private peak = 0;
  private readonly pids: number[];

  constructor(
    root: number,
    private readonly intervalMs = 200,
  ) {
    this.pids = processTree(root);
  }

  start(): void {
    this.first = readUsage(this.pids);
    this.peak = this.first.rssBytes;
    this.t0 = performance.now();
    this.timer = setInterval(() => {
      const u = readUsage(this.pids);
      if (u.rssBytes > this.peak) this.peak = u.rssBytes;
    }, this.intervalMs);
    this.timer.unref();
  }

  /** RSS now, MB (between start and stop). */
  rssMbNow(): number {
    return readUsage(this.pids).rssBytes / 1048576;
  }

  stop(): SamplerResult {
    if (this.timer) clearInterval(this.timer);
    const last = readUsage(this.pids);
    if (last.rssBytes > this.peak) this.peak = last.rssBytes;
    const wallS = (performance.now() - this.t0) / 1000;
    const cpuS = last.cpuS - this.first.cpuS;
    return {
      cpuS,
      wallS,
      cpuPercent: wallS > 0 ? Math.round((cpuS / wallS) * 1000) / 10 : 0,
      rssStartMb: Math.round(this.first.rssBytes / 104857.6) / 10,
      rssPeakMb: Math.round(this.peak / 104857.6) / 10,
    };
  }
}
