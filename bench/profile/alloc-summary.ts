import { readFileSync } from 'node:fs';

/**
 * Summarises a sampling heap profile written by bench/profile/alloc-preload.cjs: bytes allocated per call
 * (total sampled bytes / calls) and the functions that allocate most (self bytes).
 *
 *   tsx bench/profile/alloc-summary.ts <profile.json> <calls> [topN]
 */
export interface Node {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children?: Node[];
}

/** `function file:line` of a profile frame, the file relative to node_modules/ or dist/ (none for built-ins). */
export function frameLabel(cf: Node['callFrame']): string {
  const where = cf.url ? ` ${cf.url.replace(/^.*\/(node_modules\/|dist\/)/, '$1')}:${cf.lineNumber + 1}` : '';
  return `${cf.functionName || '(anonymous)'}${where}`;
}

export function summariseAllocations(head: Node, calls: number, top = 20): string {
  const self = new Map<string, number>();
  let total = 0;
  const stack: Node[] = [head];
  while (stack.length > 0) {
    const n = stack.pop()!;
    const key = frameLabel(n.callFrame);
    if (n.selfSize > 0) {
      self.set(key, (self.get(key) ?? 0) + n.selfSize);
      total += n.selfSize;
    }
    for (const c of n.children ?? []) stack.push(c);
  }
  const lines = [
    `${(total / calls / 1024).toFixed(1)} KiB allocated per call (${calls} calls)`,
    '',
    '| function (self bytes) | per call | share |',
    '| --- | --- | --- |',
  ];
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    lines.push(`| \`${k}\` | ${(v / calls).toFixed(0)} B | ${((100 * v) / total).toFixed(1)} % |`);
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, calls, top] = process.argv.slice(2);
  if (!file || !calls) {
    console.error('usage: tsx bench/profile/alloc-summary.ts <profile.json> <calls> [topN]');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { head: Node };
  console.log(summariseAllocations(profile.head, Number(calls), top ? Number(top) : 20));
}
