import { parseArgs } from 'node:util';
import type { SoakOptions } from './run.js';

/** `npm run soak` options (pure; tested in test/bench/soak-report.test.ts). */

export interface SoakCli
  extends Required<Pick<SoakOptions, 'minutes' | 'rate' | 'keys' | 'streamShare' | 'store'>> {
  connections: number;
  outDir: string;
  build: boolean;
}

export class SoakUsageError extends Error {}

export const SOAK_USAGE =
  'npm run soak -- [--minutes 20] [--rate 1000] [--keys 10000] [--stream-share 0.5] [--store redis|sqlite] [--connections 64] [--out bench/results] [--no-build]';

export function parseSoakArgs(argv: string[]): SoakCli {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        minutes: { type: 'string' },
        rate: { type: 'string' },
        keys: { type: 'string' },
        'stream-share': { type: 'string' },
        store: { type: 'string' },
        connections: { type: 'string' },
        out: { type: 'string' },
        'no-build': { type: 'boolean' },
      },
    }));
  } catch (err) {
    throw new SoakUsageError((err as Error).message);
  }
  const num = (name: string, def: number, min: number, max: number, int: boolean): number => {
    const v = values[name];
    if (v === undefined) return def;
    const n = Number(v);
    if (
      typeof v !== 'string' ||
      v.trim() === '' ||
      !Number.isFinite(n) ||
      n < min ||
      n > max ||
      (int && !Number.isInteger(n))
    )
      throw new SoakUsageError(`--${name} needs ${int ? 'an integer' : 'a number'} from ${min} to ${max}`);
    return n;
  };
  const store = values.store ?? 'redis';
  if (store !== 'redis' && store !== 'sqlite') throw new SoakUsageError('--store is redis or sqlite');
  return {
    // Bounded: a soak is hours at most, and the load generator keeps every latency sample of the run.
    minutes: num('minutes', 20, 0.5, 600, false),
    rate: num('rate', 1000, 1, 20_000, true),
    keys: num('keys', 10_000, 1, 1_000_000, true),
    streamShare: num('stream-share', 0.5, 0, 1, false),
    store,
    connections: num('connections', 64, 1, 4096, true),
    outDir: typeof values.out === 'string' ? values.out : 'bench/results',
    build: values['no-build'] !== true,
  };
}
