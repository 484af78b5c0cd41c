import { readFileSync } from 'node:fs';

/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`) over a time window: busy time by stage (socket
 * writes, undici, the gateway's own JS, node:http, GC, prom-client, the rest) and the top self-time frames.
 * Used by bench/profile/relay-profile.sh; the tables in docs/benchmarks.md ("Relay CPU profile") come from it.
 *
 *   tsx bench/profile/cpuprofile-summary.ts <file.cpuprofile> [fromSeconds] [toSeconds] [topN]
 *
 * A negative `fromSeconds` counts from the profile's end: `-10.5 -0.5` is the 10 s before the last half second
 * (the load window of relay-profile.sh, whose process exits right after the load).
 */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const SOCKET_WRITES = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String']);

/** The stage a sample is charged to: native socket writes and GC by name, JS by the first known package up its stack. */
function stageOf(id: number, byId: Map<number, ProfileNode>, parent: Map<number, number>): string {
  const name = byId.get(id)!.callFrame.functionName;
  if (name === '(garbage collector)') return 'GC';
  if (SOCKET_WRITES.has(name)) return 'socket writes (syscalls)';
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const url = byId.get(cur)!.callFrame.url;
    if (url.includes('/prom-client/')) return 'prom-client (metrics)';
    if (url.includes('/undici/')) return 'undici (upstream client)';
    if (/\/(dist\/)?(core|plugins)\//.test(url) && !url.includes('node_modules'))
      return 'gateway JS (core/, plugins/)';
    if (url.startsWith('node:_http')) return 'node:http server';
  }
  return 'other (node internals, (program))';
}

export function summarise(profile: Profile, fromS = 0, toS = Number.POSITIVE_INFINITY, top = 15): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const end = profile.startTime + profile.timeDeltas.reduce((a, b) => a + b, 0);
  const from = fromS < 0 ? end + fromS * 1e6 : profile.startTime + fromS * 1e6;
  const to = toS < 0 ? end + toS * 1e6 : profile.startTime + toS * 1e6;
  const stages = new Map<string, number>();
  const self = new Map<string, number>();
  let t = profile.startTime;
  let busy = 0;
  let all = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const d = profile.timeDeltas[i] ?? 0;
    t += d;
    if (t < from || t > to) continue;
    all += d;
    const id = profile.samples[i]!;
    const cf = byId.get(id)!.callFrame;
    if (cf.functionName === '(idle)') continue;
    busy += d;
    const stage = stageOf(id, byId, parent);
    stages.set(stage, (stages.get(stage) ?? 0) + d);
    const where = cf.url
      ? ` ${cf.url.replace(/^.*\/(node_modules\/|dist\/|core\/|plugins\/)/, '$1')}:${cf.lineNumber + 1}`
      : '';
    const key = `${cf.functionName || '(anonymous)'}${where}`;
    self.set(key, (self.get(key) ?? 0) + d);
  }
  const pct = (v: number) => `${((100 * v) / busy).toFixed(1)} %`;
  const lines = [
    `busy ${(busy / 1e6).toFixed(2)} s of ${(all / 1e6).toFixed(2)} s sampled`,
    '',
    '| stage | share of busy CPU |',
    '| --- | --- |',
  ];
  for (const [k, v] of [...stages].sort((a, b) => b[1] - a[1])) lines.push(`| ${k} | ${pct(v)} |`);
  lines.push('', '| frame (self time) | share of busy CPU |', '| --- | --- |');
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top))
    lines.push(`| \`${k}\` | ${pct(v)} |`);
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, fromS, toS, top] = process.argv.slice(2);
  if (!file) {
    console.error('usage: tsx bench/profile/cpuprofile-summary.ts <file.cpuprofile> [fromS] [toS] [topN]');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  console.log(
    summarise(
      profile,
      fromS ? Number(fromS) : 0,
      toS ? Number(toS) : Number.POSITIVE_INFINITY,
      top ? Number(top) : 15,
    ),
  );
}
