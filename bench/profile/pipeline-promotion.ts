import { Redis } from 'ioredis';

/**
 * What one ioredis round trip leaves for the scavenger to copy, apart from everything else a gateway does: a
 * steady churn of short-lived garbage (≈ 1,300 small objects a millisecond, so scavenges come several times a
 * second) and, every 2.5 ms, one Redis command or ioredis object by `mode`. Run it under `--trace-gc-nvp` and
 * compare the bytes each scavenge promoted (bench/profile/pipeline-promotion.sh does both):
 *
 *   node --import tsx --trace-gc-nvp bench/profile/pipeline-promotion.ts <none|plain|auto|pipeline|pipeline-only>
 *
 * - none: the churn alone;
 * - plain: a ZRANGEBYSCORE written at once (no auto-pipelining);
 * - auto: the same command through ioredis's auto-pipelining (what the gateway's clients use);
 * - pipeline: `client.pipeline().zrangebyscore(…).exec()`;
 * - pipeline-only: `client.pipeline()`, never executed, dropped at once;
 * - object-accessor / object-shared-getter: no Redis, a small object holding an array, given a `length` accessor
 *   over its own closure (as ioredis's Pipeline does) or one getter function shared by all, dropped at once.
 *
 * ioredis 5.11 and 6.0's `Pipeline` constructor gives each instance its own `length` accessor
 * (`Object.defineProperty(this, "length", { get })`, a closure over the pipeline), which turns it into a
 * dictionary-mode object (`--log-maps`: `NormalizeCached … TransitionToDifferentAccessor`), and objects so made
 * outlive scavenges: every pipeline, with its commands and promises, is copied and promoted, and freed only by
 * the next mark-compact (docs/benchmarks.md, "ioredis's
 * auto-pipelines outlive their round trip"). Loopback Redis (REDIS_URL, default 127.0.0.1:6379); one key,
 * `<REDIS_PREFIX or gcprobe>:recalls`, removed at the end. Bounded: 12 s.
 */

const mode = process.argv[2] ?? 'none';
const MODES = [
  'none',
  'plain',
  'auto',
  'pipeline',
  'pipeline-only',
  'object-accessor',
  'object-shared-getter',
];
if (!MODES.includes(mode)) throw new Error(`mode: one of ${MODES.join(', ')}`);
const key = `${process.env.REDIS_PREFIX ?? 'gcprobe'}:recalls`;
const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
  enableAutoPipelining: mode === 'auto',
});
await client.zadd(key, 1, 'money:acct');
let sink: unknown;
const churn = setInterval(() => {
  const a: Array<{ x: number; y: string }> = [];
  for (let i = 0; i < 1300; i++) a.push({ x: i, y: `abc${i}` });
  sink = a;
}, 1);
/** A stand-in for a pipeline: a few fields, a queue, and a `length` accessor made as `mode` says. */
function sharedLength(this: { queue: unknown[] }): number {
  return this.queue.length;
}
function smallObject(ownGetter: boolean): object {
  const o = { a: 1, queue: [new Array(50).fill(0)], c: {}, d: 'x' };
  Object.defineProperty(o, 'length', ownGetter ? { get: () => o.queue.length } : { get: sharedLength });
  return o;
}
const step: () => void = {
  none: () => {},
  plain: () => void client.zrangebyscore(key, 0, '+inf', 'WITHSCORES'),
  auto: () => void client.zrangebyscore(key, 0, '+inf', 'WITHSCORES'),
  pipeline: () => void client.pipeline().zrangebyscore(key, 0, '+inf', 'WITHSCORES').exec(),
  'pipeline-only': () => {
    sink = client.pipeline();
  },
  'object-accessor': () => {
    sink = smallObject(true);
  },
  'object-shared-getter': () => {
    sink = smallObject(false);
  },
}[mode]!;
const every = setInterval(step, 2.5);
await new Promise((r) => setTimeout(r, 12_000));
clearInterval(churn);
clearInterval(every);
void sink;
await client.del(key);
client.disconnect();
