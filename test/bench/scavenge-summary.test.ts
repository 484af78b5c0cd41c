import { describe, expect, it } from 'vitest';
import { formatScavenges, parseScavenges, summariseScavenges } from '../../bench/profile/scavenge-summary.js';

/** bench/profile/scavenge-summary.ts: what bench/profile/scavenges.sh reads from a `--trace-gc-nvp` log. */
describe('scavenge summary', () => {
  // Shaped as Node 20's --trace-gc-nvp lines (fields trimmed); `scavenge.parallel=` must not be read as `scavenge=`.
  const scavenge = (ms: number, pause: number, survived: number, promoted: number, allocated: number) =>
    `[1:0x1]     4126 ms: pause=${pause} mutator=459.2 gc=s reduce_memory=0 scavenge.parallel=9.99 ` +
    `scavenge=${ms} scavenge.roots=0.05 promoted=${promoted} new_space_survived=${survived} ` +
    `allocated=${allocated} promotion_ratio=1.9%`;
  const log = [
    '{"level":40,"msg":"a log line of the gateway"}',
    scavenge(1.0, 1.2, 100 * 1024, 10 * 1024, 8 * 1048576),
    '[1:0x1]      519 ms: pause=14.9 mutator=66.7 gc=mc reduce_memory=0 promoted=999999 allocated=999999',
    scavenge(2.0, 2.5, 300 * 1024, 30 * 1024, 16 * 1048576),
    scavenge(3.0, 6.5, 500 * 1024, 50 * 1024, 16 * 1048576),
  ].join('\n');

  it('reads each scavenge line and skips other collections and other output', () => {
    const s = parseScavenges(log);
    expect(s).toEqual([
      { pauseMs: 1.2, scavengeMs: 1, survivedBytes: 102400, promotedBytes: 10240, allocatedBytes: 8388608 },
      { pauseMs: 2.5, scavengeMs: 2, survivedBytes: 307200, promotedBytes: 30720, allocatedBytes: 16777216 },
      { pauseMs: 6.5, scavengeMs: 3, survivedBytes: 512000, promotedBytes: 51200, allocatedBytes: 16777216 },
    ]);
  });

  it('summarises the window after `from`: means per scavenge, the longest, those over 5 ms, bytes per call', () => {
    const r = summariseScavenges(parseScavenges(log), 1024, 1);
    expect(r).toEqual({
      count: 2,
      pauseMeanMs: 4.5,
      pauseMaxMs: 6.5,
      over5Ms: 1,
      survivedKb: 400,
      promotedKb: 40,
      allocatedMb: 16,
      allocatedPerCallKb: 32,
    });
    expect(formatScavenges(r)).toBe(
      'scavenges 2, pause mean 4.50 ms, max 6.50 ms, 1 over 5 ms; each: survived 400 KB, promoted 40 KB, ' +
        'allocated 16.0 MB before it, 32.0 KiB a call',
    );
    // Without calls: no per-call figure; an empty window: zeros, not NaN.
    expect(summariseScavenges(parseScavenges(log)).allocatedPerCallKb).toBeUndefined();
    expect(summariseScavenges([], 10)).toMatchObject({
      count: 0,
      pauseMeanMs: 0,
      pauseMaxMs: 0,
      survivedKb: 0,
    });
  });
});
