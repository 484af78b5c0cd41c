import { describe, expect, it } from 'vitest';
import { formatScavenges, parseScavenges, summariseScavenges } from '../../bench/profile/scavenge-summary.js';

/** bench/profile/scavenge-summary.ts: what bench/profile/scavenges.sh reads from a `--trace-gc-nvp` log. */
describe('scavenge summary', () => {
  // Shaped as Node 20's --trace-gc-nvp lines (fields trimmed); `scavenge.parallel=` must not be read as `scavenge=`.
  const scavenge = (
    ms: number,
    pause: number,
    survived: number,
    promoted: number,
    allocated: number,
    at = 4126,
    totalAfter = 0,
  ) =>
    `[1:0x1]     ${at} ms: pause=${pause} mutator=459.2 gc=s reduce_memory=0 scavenge.parallel=9.99 ` +
    `scavenge=${ms} scavenge.roots=0.05 total_size_before=1 total_size_after=${totalAfter} promoted=${promoted} ` +
    `new_space_survived=${survived} allocated=${allocated} promotion_ratio=1.9%`;
  const log = [
    '{"level":40,"msg":"a log line of the gateway"}',
    scavenge(1.0, 1.2, 100 * 1024, 10 * 1024, 8 * 1048576, 100, 5_000_000),
    '[1:0x1]      519 ms: pause=14.9 mutator=66.7 gc=mc reduce_memory=0 promoted=999999 allocated=999999',
    scavenge(2.0, 2.5, 300 * 1024, 30 * 1024, 16 * 1048576, 600, 9_000_000),
    scavenge(3.0, 6.5, 500 * 1024, 50 * 1024, 16 * 1048576, 1100, 9_400_000),
  ].join('\n');

  it('reads each scavenge line and skips other collections and other output', () => {
    const s = parseScavenges(log);
    const at = (atMs: number, totalAfterBytes: number, afterOther: boolean) => ({
      atMs,
      totalAfterBytes,
      afterOther,
    });
    expect(s).toEqual([
      {
        ...at(100, 5_000_000, false),
        pauseMs: 1.2,
        scavengeMs: 1,
        survivedBytes: 102400,
        promotedBytes: 10240,
        allocatedBytes: 8388608,
      },
      // The mark-compact between the first two is marked on the second.
      {
        ...at(600, 9_000_000, true),
        pauseMs: 2.5,
        scavengeMs: 2,
        survivedBytes: 307200,
        promotedBytes: 30720,
        allocatedBytes: 16777216,
      },
      {
        ...at(1100, 9_400_000, false),
        pauseMs: 6.5,
        scavengeMs: 3,
        survivedBytes: 512000,
        promotedBytes: 51200,
        allocatedBytes: 16777216,
      },
    ]);
  });

  it('old-generation direct allocation: heap growth less young survivors less promotion, between scavenges with no mark-compact between', () => {
    // Only the pair (600 ms, 1100 ms) counts: the old generation went from 9,000,000 − 307,200 to
    // 9,400,000 − 512,000 (+195,200 B), of which 51,200 promoted: 144,000 B direct in 500 ms. The window
    // (100 → 1100 ms) answered 1,000 calls, 1 a ms: 288 B a call.
    const r = summariseScavenges(parseScavenges(log), 1000);
    expect(r.oldDirectPerCallB).toBeCloseTo(288, 6);
    expect(formatScavenges(r)).toContain('; old generation allocated directly 288 B a call');
    // Not measurable without calls or without a pair of scavenges.
    expect(summariseScavenges(parseScavenges(log)).oldDirectPerCallB).toBeUndefined();
    expect(summariseScavenges(parseScavenges(log), 1000, 2).oldDirectPerCallB).toBeUndefined();
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
      // 144,000 B direct in the window's 500 ms, at 1,024 calls in those 500 ms.
      oldDirectPerCallB: 140.625,
    });
    expect(formatScavenges(r)).toBe(
      'scavenges 2, pause mean 4.50 ms, max 6.50 ms, 1 over 5 ms; each: survived 400 KB, promoted 40 KB, ' +
        'allocated 16.0 MB before it, 32.0 KiB a call; old generation allocated directly 141 B a call',
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
