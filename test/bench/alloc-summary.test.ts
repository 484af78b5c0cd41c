import { describe, expect, it } from 'vitest';
import { summariseAllocations } from '../../bench/profile/alloc-summary.js';

/** bench/profile/alloc-summary.ts: the per-call bytes and top allocators of the allocation profile tool. */
describe('allocation profile summary', () => {
  const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber });
  it('sums self bytes over the whole tree, per call, and ranks the functions (same function merged)', () => {
    const head = {
      callFrame: frame('(root)'),
      selfSize: 0,
      children: [
        {
          callFrame: frame('relayResponse', 'file:///x/dist/core/pipeline.js', 221),
          selfSize: 6000,
          children: [{ callFrame: frame('Map'), selfSize: 1000 }],
        },
        {
          callFrame: frame('dispatch', 'file:///x/dist/core/http/transport.js', 73),
          selfSize: 2000,
          children: [
            { callFrame: frame('relayResponse', 'file:///x/dist/core/pipeline.js', 221), selfSize: 1000 },
          ],
        },
      ],
    };
    const text = summariseAllocations(head, 10, 2);
    expect(text).toContain('1.0 KiB allocated per call (10 calls)');
    const rows = text.split('\n').filter((l) => l.startsWith('| `'));
    expect(rows).toEqual([
      '| `relayResponse dist/core/pipeline.js:222` | 700 B | 70.0 % |',
      '| `dispatch dist/core/http/transport.js:74` | 200 B | 20.0 % |',
    ]);
  });
});
