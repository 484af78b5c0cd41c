import { readFileSync } from 'node:fs';

/**
 * What lives seconds and then dies, from three heap snapshots of one process under a steady load
 * (bench/profile/old-deaths.sh): the objects of the middle snapshot that were already in the first (they lived at
 * least the first gap, so they were promoted to the old generation) and are gone from the last (they died within
 * the second gap). Those are what fills the old generation between two mark-compacts without being a leak.
 *
 * Prints, for those objects, and for the young (the middle snapshot's objects that were not in the first: born in
 * the first gap and alive at its end; with a gap near the scavenge interval, about what one scavenge copies):
 * bytes and counts by kind; strings grouped by shape (hex runs and digits folded) with an example, secret-like
 * runs masked in both; and where each group hangs from: the object outside the set and the edge that held the group's root, with the bytes reachable
 * from it inside the set.
 *
 *   npx tsx bench/profile/heap-deaths.ts <s0.heapsnapshot> <s1.heapsnapshot> <s2.heapsnapshot> [top]
 *
 * Snapshot ids are the heap profiler's: the same object keeps its id across snapshots of one process.
 */

interface Snapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

function load(path: string): Snapshot {
  return JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
}

function ids(s: Snapshot): Set<number> {
  const nf = s.snapshot.meta.node_fields;
  const width = nf.length;
  const idAt = nf.indexOf('id');
  const out = new Set<number>();
  for (let i = 0; i < s.nodes.length; i += width) out.add(s.nodes[i + idAt]!);
  return out;
}

const [p0, p1, p2, topArg] = process.argv.slice(2);
if (!p0 || !p1 || !p2) {
  process.stderr.write('usage: heap-deaths.ts <s0> <s1> <s2> [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? 25);

const ids0 = ids(load(p0));
const ids2 = ids(load(p2));
const s = load(p1);
const meta = s.snapshot.meta;
const NF = meta.node_fields.length;
const EF = meta.edge_fields.length;
const nType = meta.node_fields.indexOf('type');
const nName = meta.node_fields.indexOf('name');
const nId = meta.node_fields.indexOf('id');
const nSize = meta.node_fields.indexOf('self_size');
const nEdges = meta.node_fields.indexOf('edge_count');
const eType = meta.edge_fields.indexOf('type');
const eName = meta.edge_fields.indexOf('name_or_index');
const eTo = meta.edge_fields.indexOf('to_node');
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const count = s.nodes.length / NF;

// Node ordinal → index of its first edge.
const firstEdge = new Uint32Array(count + 1);
for (let n = 0, e = 0; n < count; n++) {
  firstEdge[n] = e;
  e += s.nodes[n * NF + nEdges]! * EF;
}
firstEdge[count] = s.edges.length;

const typeOf = (n: number) => nodeTypes[s.nodes[n * NF + nType]!]!;
const nameOf = (n: number) => s.strings[s.nodes[n * NF + nName]!]!;
const sizeOf = (n: number) => s.nodes[n * NF + nSize]!;
const isString = (t: string) => t === 'string' || t === 'concatenated string' || t === 'sliced string';
const label = (n: number) => {
  const t = typeOf(n);
  if (isString(t)) return `(${t})`;
  const name = nameOf(n);
  return `${t}:${name.length > 60 ? `${name.slice(0, 57)}…` : name}`;
};
const edgeLabel = (e: number) => {
  const t = edgeTypes[s.edges[e + eType]!]!;
  const v = s.edges[e + eName]!;
  if (t === 'element' || t === 'hidden') return `[${t}]`;
  const name = s.strings[v] ?? String(v);
  return `${t}:${name.length > 40 ? `${name.slice(0, 37)}…` : name}`;
};

const kb = (b: number) => `${(b / 1024).toFixed(1)} KB`;
const print = (title: string, rows: Array<[string, string]>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [a, b] of rows) process.stdout.write(`  ${a.padStart(12)}  ${b}\n`);
};

/**
 * A string's example with anything that may be a secret masked: a heap holds the API keys, tokens and proof
 * secrets of the calls in flight (and slices of them), and this output is read and pasted elsewhere. Runs of
 * base64url characters of 16 or more, or of 8 or more mixing letters and digits (keys, tokens, secrets, ids and
 * their pieces), keep only their first four characters.
 */
function masked(text: string): string {
  return text.replace(/[A-Za-z0-9_-]{8,}/g, (m) =>
    m.length >= 16 || (/\d/.test(m) && /[A-Za-z]/.test(m)) ? `${m.slice(0, 4)}…` : m,
  );
}

/** Each node's first strong retainer and the edge from it (-1: none), for naming anonymous holders. */
const retainer = new Int32Array(count).fill(-1);
const retainerEdge = new Int32Array(count).fill(-1);
for (let n = 0; n < count; n++) {
  for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += EF) {
    if (edgeTypes[s.edges[e + eType]!] === 'weak') continue;
    const to = s.edges[e + eTo]! / NF;
    if (retainer[to] !== -1) continue;
    retainer[to] = n;
    retainerEdge[to] = e;
  }
}

/** A holder's own holder, for the anonymous containers (a `Map`'s table, an `Array`): "Owner —edge⇒ ". */
function ownerOf(n: number): string {
  const t = typeOf(n);
  const name = nameOf(n);
  const anonymous =
    (t === 'object' && (name === 'Map' || name === 'Array' || name === 'Set')) || t === 'array';
  if (!anonymous || retainer[n] === -1) return '';
  return `${label(retainer[n]!)} —${edgeLabel(retainerEdge[n]!)}⇒ `;
}

/**
 * Prints one set of the middle snapshot's objects (`picked`): by kind, strings by shape, and by holder — each
 * picked object goes to the first group (a breadth-first walk from the picked objects whose retainer is not
 * picked) that reaches it, named by that retainer and its edge.
 */
function report(title: string, picked: Uint8Array): void {
  let pickedCount = 0;
  let pickedBytes = 0;
  for (let n = 0; n < count; n++) {
    if (!picked[n]) continue;
    pickedCount++;
    pickedBytes += sizeOf(n);
  }
  const holder = new Int32Array(count).fill(-1);
  const holderEdge = new Int32Array(count).fill(-1);
  for (let n = 0; n < count; n++) {
    if (picked[n]) continue;
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += EF) {
      if (edgeTypes[s.edges[e + eType]!] === 'weak') continue;
      const to = s.edges[e + eTo]! / NF;
      if (picked[to] && holder[to] === -1) {
        holder[to] = n;
        holderEdge[to] = e;
      }
    }
  }
  const group = new Int32Array(count).fill(-1);
  const groups = new Map<string, { bytes: number; objects: number; roots: number }>();
  const queue: number[] = [];
  for (let n = 0; n < count; n++) {
    if (!picked[n] || holder[n] === -1) continue;
    const key = `${ownerOf(holder[n]!)}${label(holder[n]!)} —${edgeLabel(holderEdge[n]!)}→ ${label(n)}`;
    let g = groups.get(key);
    if (!g) {
      g = { bytes: 0, objects: 0, roots: 0 };
      groups.set(key, g);
    }
    g.roots++;
    if (group[n] !== -1) continue;
    group[n] = n;
    queue.length = 0;
    queue.push(n);
    while (queue.length > 0) {
      const m = queue.pop()!;
      g.bytes += sizeOf(m);
      g.objects++;
      for (let e = firstEdge[m]!; e < firstEdge[m + 1]!; e += EF) {
        if (edgeTypes[s.edges[e + eType]!] === 'weak') continue;
        const to = s.edges[e + eTo]! / NF;
        if (picked[to] && group[to] === -1) {
          group[to] = n;
          queue.push(to);
        }
      }
    }
  }
  let unheld = 0;
  for (let n = 0; n < count; n++) if (picked[n] && group[n] === -1) unheld += sizeOf(n);

  const byKind = new Map<string, { bytes: number; n: number }>();
  const shapes = new Map<string, { bytes: number; n: number; example: string }>();
  for (let n = 0; n < count; n++) {
    if (!picked[n]) continue;
    const t = typeOf(n);
    const k = isString(t) ? `(${t})` : `${t}:${nameOf(n)}`;
    const b = byKind.get(k) ?? { bytes: 0, n: 0 };
    b.bytes += sizeOf(n);
    b.n++;
    byKind.set(k, b);
    if (isString(t)) {
      const text = nameOf(n);
      const shape = masked(text.slice(0, 80))
        .replace(/[0-9a-f]{8,}/gi, '<hex>')
        .replace(/[A-Za-z0-9_-]{20,}/g, '<b64>')
        .replace(/\d+/g, '#');
      const sh = shapes.get(shape) ?? { bytes: 0, n: 0, example: masked(text.slice(0, 100)) };
      sh.bytes += sizeOf(n);
      sh.n++;
      shapes.set(shape, sh);
    }
  }
  process.stdout.write(
    `\n== ${title}: ${pickedCount} objects, ${kb(pickedBytes)}; not reached from a holder outside them: ${kb(unheld)}\n`,
  );
  print(
    'by kind (bytes, count)',
    [...byKind.entries()]
      .sort((a, b) => b[1].bytes - a[1].bytes)
      .slice(0, top)
      .map(([k, v]) => [kb(v.bytes), `${v.n}  ${k}`]),
  );
  print(
    'strings by shape (bytes, count, example)',
    [...shapes.entries()]
      .sort((a, b) => b[1].bytes - a[1].bytes)
      .slice(0, top)
      .map(([k, v]) => [kb(v.bytes), `${v.n}  ${JSON.stringify(k)}  e.g. ${JSON.stringify(v.example)}`]),
  );
  print(
    'held from (bytes reachable among them, objects, roots): holder —edge→ root',
    [...groups.entries()]
      .sort((a, b) => b[1].bytes - a[1].bytes)
      .slice(0, top)
      .map(([k, v]) => [kb(v.bytes), `${v.objects} / ${v.roots}  ${k}`]),
  );
}

// The dying: in the first snapshot and this one, not in the last. The young: in this one, not in the first
// (born in the first gap and alive at its end: with a gap near the scavenge interval, about what one scavenge
// has to copy).
const dying = new Uint8Array(count);
const young = new Uint8Array(count);
for (let n = 0; n < count; n++) {
  const id = s.nodes[n * NF + nId]!;
  if (ids0.has(id) && !ids2.has(id)) dying[n] = 1;
  if (!ids0.has(id)) young[n] = 1;
}
process.stdout.write(`${count} objects in the middle snapshot\n`);
report('dying (in the first, gone from the last)', dying);
report('young (not in the first)', young);
