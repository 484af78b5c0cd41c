import { getHeapSpaceStatistics } from 'node:v8';

/**
 * What a long-lived `Map` with a set and a delete per call (calls in flight, a lease's open calls, an LRU's key
 * map) costs the old generation. V8 rehashes a `Map`'s table when its free slots run out and allocates the new
 * table where the old one was: once the table is in the old generation (the `Map` outlived two scavenges, or a
 * mark-compact moved it), every later rehash allocates there, and each dropped table is old garbage that only a
 * mark-compact frees. Prints the old space's growth per insert, no GC in between, for `live` entries churned
 * 200,000 times: an array (no table, the floor), a young `Map`, a `Map` moved to the old generation first, and a
 * dictionary-mode object (`delete`) for comparison. docs/benchmarks.md, "Long-lived Maps churned per call".
 *   node --expose-gc --import tsx bench/profile/map-churn.ts [live ...]   (default: 5 20 64 1000)
 */
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  console.error('run with node --expose-gc');
  process.exit(2);
}
const N = 200_000;
const oldSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_used_size;

type Mode = 'array' | 'young Map' | 'old Map' | 'old dictionary object';

function churn(mode: Mode, live: number): number {
  gc!();
  gc!();
  const arr: string[] = new Array(live);
  const map = new Map<string, number>();
  const dict: Record<string, number> = Object.create(null);
  dict.x = 0;
  delete dict.x; // dictionary mode
  if (mode.startsWith('old')) {
    gc!();
    gc!();
  }
  const ids: string[] = [];
  const before = oldSpace();
  for (let i = 0; i < live; i++) {
    const k = `k${i}`;
    if (mode === 'array') arr[i] = k;
    else if (mode === 'old dictionary object') dict[k] = i;
    else map.set(k, i);
    ids.push(k);
  }
  for (let i = 0; i < N; i++) {
    const k = ids[i % live]!;
    const k2 = `x${i}`;
    if (mode === 'array') arr[i % live] = k2;
    else if (mode === 'old dictionary object') {
      delete dict[k];
      dict[k2] = i;
    } else {
      map.delete(k);
      map.set(k2, i);
    }
    ids[i % live] = k2;
  }
  return (oldSpace() - before) / N;
}

const lives = process.argv.slice(2).map(Number);
console.log('| entries live | array | young Map | old Map | old dictionary object |');
console.log('| --- | --- | --- | --- | --- |');
for (const live of lives.length > 0 ? lives : [5, 20, 64, 1000]) {
  const modes: Mode[] = ['array', 'young Map', 'old Map', 'old dictionary object'];
  console.log(`| ${live} | ${modes.map((m) => `${churn(m, live).toFixed(1)} B`).join(' | ')} |`);
}
