import { readFileSync } from 'node:fs';
import { frameLabel, type Node } from './alloc-summary.js';

/**
 * Two sampling heap profiles of bench/profile/alloc-per-call.sh (ALLOC_KEEP) side by side: bytes per call by
 * allocation site — the allocating frame with its two callers — largest difference first. What one build or one
 * store allocates (or, with ALLOC_SURVIVORS=1, keeps past a scavenge) that the other does not.
 *
 *   npx tsx bench/profile/alloc-diff.ts <a.json> <callsA> <b.json> <callsB> [topN]
 */

/** Self bytes by site: the allocating frame with its caller and the caller's caller. */
function sites(head: Node): Map<string, number> {
  const out = new Map<string, number>();
  const walk = (n: Node, callers: string[]) => {
    const path = [...callers.slice(-2), frameLabel(n.callFrame)];
    if (n.selfSize > 0) {
      const key = [...path].reverse().join(' < ');
      out.set(key, (out.get(key) ?? 0) + n.selfSize);
    }
    for (const c of n.children ?? []) walk(c, path);
  };
  walk(head, []);
  return out;
}

const [fa, ca, fb, cb, topArg] = process.argv.slice(2);
if (!fa || !ca || !fb || !cb) {
  console.error('usage: tsx bench/profile/alloc-diff.ts <a.json> <callsA> <b.json> <callsB> [topN]');
  process.exit(2);
}
const load = (f: string) => sites((JSON.parse(readFileSync(f, 'utf8')) as { head: Node }).head);
const a = load(fa);
const b = load(fb);
const perA = (k: string) => (a.get(k) ?? 0) / Number(ca);
const perB = (k: string) => (b.get(k) ?? 0) / Number(cb);
const total = (m: Map<string, number>, calls: string) =>
  [...m.values()].reduce((s, v) => s + v, 0) / Number(calls);
console.log(`bytes per call: a ${total(a, ca).toFixed(0)}, b ${total(b, cb).toFixed(0)}`);
console.log('| a − b | a | b | site (allocating frame < caller < its caller) |');
console.log('| --- | --- | --- | --- |');
const rows = [...new Set([...a.keys(), ...b.keys()])]
  .map((k) => [k, perA(k) - perB(k)] as const)
  .sort((x, y) => Math.abs(y[1]) - Math.abs(x[1]))
  .slice(0, Number(topArg ?? 25));
for (const [k, d] of rows) {
  console.log(`| ${d.toFixed(0)} B | ${perA(k).toFixed(0)} | ${perB(k).toFixed(0)} | \`${k}\` |`);
}
