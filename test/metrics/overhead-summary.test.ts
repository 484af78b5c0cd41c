import { describe, expect, it } from 'vitest';
import { overheadDuration, overheadSummary } from '../../core/metrics.js';

describe('the console overhead figures (gateway_overhead_seconds as quantiles)', () => {
  it('no calls: null quantiles', async () => {
    expect(await overheadSummary()).toEqual({ calls: 0, p50_ms: null, p99_ms: null });
  });

  it('interpolates inside the bucket that holds the rank, over every route, as histogram_quantile does', async () => {
    // 98 calls between 0.25 and 0.5 ms, 2 between 5 and 10 ms, over two routes.
    for (let i = 0; i < 49; i++) overheadDuration.observe({ route: '/v1/chat/completions' }, 0.0003);
    for (let i = 0; i < 49; i++) overheadDuration.observe({ route: '/v1/embeddings' }, 0.0004);
    overheadDuration.observe({ route: '/v1/chat/completions' }, 0.007);
    overheadDuration.observe({ route: '/v1/chat/completions' }, 0.008);
    const s = await overheadSummary();
    expect(s.calls).toBe(100);
    // rank 50 of the 98 in (0.25, 0.5] ms: 0.25 + 0.25 × 50/98
    expect(s.p50_ms).toBeCloseTo(0.25 + (0.25 * 50) / 98, 3);
    // rank 99: the first of the two in (5, 10] ms → 5 + 5 × 1/2
    expect(s.p99_ms).toBeCloseTo(7.5, 3);
  });
});
