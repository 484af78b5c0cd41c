/**
 * Command-line options and the scenario catalogue of `npm run bench` (pure; tested).
 *
 *   npm run bench                      full run (≈ 10 min): every target, every scenario
 *   npm run bench -- --quick           ≈ 1–2 min: c=64 + 1,000 req/s + 200 open streams + breakdown
 *   npm run bench -- --targets baseline,nginx,gw-redis-node --scenarios chat-c64,open-streams
 *   options: --duration <s> --warmup <s> --keys <n> --streams <n> --nginx-workers <n> --no-build --out <dir>
 *            --pin (each target alone on CPU 0; the load generator, the mock upstream and a local Redis on the rest)
 */

export interface LoadScenario {
  id: string;
  kind: 'load';
  stream: boolean;
  chunks: number;
  connections: number;
  /** Fixed offered rate, req/s, evenly paced by bench/lib/paced.ts (not autocannon: see there). */
  rate?: number;
  /** Rotate over this many distinct keys (gateway targets only; others ignore it). */
  keys?: number;
  /** Runs only on these targets (growth curves on a subset keep the full run bounded). */
  only?: 'gateway' | 'references+headline';
}

export interface StreamsScenario {
  id: 'open-streams';
  kind: 'streams';
}

export interface BreakdownScenario {
  id: 'breakdown';
  kind: 'breakdown';
}

export type Scenario = LoadScenario | StreamsScenario | BreakdownScenario;

export const ALL_TARGETS = [
  'baseline',
  'nginx',
  'nginx-w2',
  'portkey',
  'gw-relay-uws',
  'gw-relay-node',
  'gw-sqlite-uws',
  'gw-sqlite-node',
  'gw-sqlite-node-l402',
  'gw-redis-uws',
  'gw-redis-node',
  'gw-redis-node-l402',
  'gw-sqlite-uws-percall',
  'gw-redis-uws-percall',
  'gw-sqlite-node-percall',
  'gw-redis-node-percall',
  'gw-redis-node-2prov',
  'gw-redis-node-w2',
  'gw-cluster-node',
  'gw-cluster-node-noacks',
] as const;

/** Every scenario of a full run, in run order. */
export function scenarioCatalogue(keys: number): Scenario[] {
  const list: Scenario[] = [];
  for (const c of [1, 16, 64, 256])
    list.push({ id: `chat-c${c}`, kind: 'load', stream: false, chunks: 8, connections: c });
  for (const c of [1, 16, 64, 256])
    list.push({ id: `stream50-c${c}`, kind: 'load', stream: true, chunks: 50, connections: c });
  list.push({ id: 'chat-rate1000', kind: 'load', stream: false, chunks: 8, connections: 64, rate: 1000 });
  list.push({ id: 'stream50-rate1000', kind: 'load', stream: true, chunks: 50, connections: 64, rate: 1000 });
  for (const n of [10, 200, 1000])
    list.push({
      id: `stream-len-${n}`,
      kind: 'load',
      stream: true,
      chunks: n,
      connections: 64,
      only: 'references+headline',
    });
  list.push({
    id: 'keys-1',
    kind: 'load',
    stream: false,
    chunks: 8,
    connections: 64,
    keys: 1,
    only: 'gateway',
  });
  list.push({
    id: `keys-${keys}`,
    kind: 'load',
    stream: false,
    chunks: 8,
    connections: 64,
    keys,
    only: 'gateway',
  });
  list.push({ id: 'open-streams', kind: 'streams' });
  list.push({ id: 'breakdown', kind: 'breakdown' });
  return list;
}

export const QUICK_SCENARIOS = ['chat-c64', 'stream50-c64', 'chat-rate1000', 'open-streams', 'breakdown'];

export interface BenchOptions {
  mode: 'quick' | 'full' | 'custom';
  targets: string[];
  scenarios: Scenario[];
  durationS: number;
  warmupS: number;
  keys: number;
  streams: number;
  nginxWorkers: number;
  build: boolean;
  outDir: string;
  /** Each target alone on CPU 0, everything else of the run on the other CPUs (bench/lib/processes.ts). */
  pin: boolean;
}

export class UsageError extends Error {}

export function parseArgs(argv: string[]): BenchOptions {
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) throw new UsageError(`unexpected argument ${a}`);
    const [name, inline] = a.slice(2).split('=', 2) as [string, string | undefined];
    if (inline !== undefined) flags.set(name, inline);
    else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--')) flags.set(name, argv[++i]!);
    else flags.set(name, true);
  }
  const known = new Set([
    'quick',
    'targets',
    'scenarios',
    'duration',
    'warmup',
    'keys',
    'streams',
    'nginx-workers',
    'no-build',
    'out',
    'pin',
  ]);
  for (const k of flags.keys()) if (!known.has(k)) throw new UsageError(`unknown option --${k}`);
  for (const k of ['pin', 'quick', 'no-build'])
    if (typeof flags.get(k) === 'string') throw new UsageError(`--${k} takes no value`);
  const quick = flags.get('quick') === true;
  const num = (name: string, def: number, min: number): number => {
    const v = flags.get(name);
    if (v === undefined) return def;
    const n = Number(v);
    if (v === true || !Number.isFinite(n) || n < min)
      throw new UsageError(`--${name} needs a number ≥ ${min}`);
    return n;
  };
  const listOf = (name: string): string[] | undefined => {
    const v = flags.get(name);
    if (v === undefined) return undefined;
    if (v === true) throw new UsageError(`--${name} needs a comma-separated list`);
    return v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  };
  const keys = num('keys', quick ? 1000 : 10_000, 2);
  const catalogue = scenarioCatalogue(keys);
  const wantTargets = listOf('targets') ?? [...ALL_TARGETS];
  for (const t of wantTargets) {
    if (!(ALL_TARGETS as readonly string[]).includes(t))
      throw new UsageError(`unknown target ${t} (known: ${ALL_TARGETS.join(', ')})`);
  }
  const wantScenarios = listOf('scenarios') ?? (quick ? QUICK_SCENARIOS : catalogue.map((s) => s.id));
  const scenarios = wantScenarios.map((id) => {
    const s = catalogue.find((c) => c.id === id || (id === 'keys-n' && c.id === `keys-${keys}`));
    if (s === undefined)
      throw new UsageError(`unknown scenario ${id} (known: ${catalogue.map((c) => c.id).join(', ')})`);
    return s;
  });
  const custom = flags.has('targets') || flags.has('scenarios');
  return {
    mode: custom ? 'custom' : quick ? 'quick' : 'full',
    targets: ALL_TARGETS.filter((t) => wantTargets.includes(t)),
    scenarios: catalogue.filter((c) => scenarios.includes(c)),
    durationS: num('duration', quick ? 2 : 3, 0.5),
    warmupS: num('warmup', quick ? 0.5 : 1, 0),
    keys,
    streams: num('streams', quick ? 200 : 1000, 1),
    nginxWorkers: num('nginx-workers', 1, 1),
    build: !flags.has('no-build'),
    outDir: typeof flags.get('out') === 'string' ? (flags.get('out') as string) : 'bench/results',
    pin: flags.get('pin') === true,
  };
}

/** Whether a load scenario runs on a target (growth-curve scenarios run on a subset). */
export function appliesTo(s: Scenario, target: string, headline = 'gw-redis-node'): boolean {
  if (s.kind === 'breakdown') return target.startsWith('gw-') && !target.startsWith('gw-relay');
  if (s.kind === 'streams')
    return target === 'baseline' || (target.startsWith('gw-') && !target.startsWith('gw-relay'));
  if (s.only === 'gateway') return target.startsWith('gw-') && !target.startsWith('gw-relay');
  if (s.only === 'references+headline')
    return ['baseline', 'nginx', 'nginx-w2', 'portkey', headline].includes(target);
  return true;
}
