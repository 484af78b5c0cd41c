import { describe, expect, it } from 'vitest';
import { gcOver5msText, gcPausesText, parseRuntime, summarize } from '../../bench/lib/runtime-scrape.js';

const loop = (b: Record<string, number>) =>
  Object.entries(b)
    .map(([le, n]) => `gateway_event_loop_delay_seconds_bucket{le="${le}"} ${n}`)
    .join('\n');
const gc = (kind: string, b: Record<string, number>) =>
  Object.entries(b)
    .map(([le, n]) => `nodejs_gc_duration_seconds_bucket{le="${le}",kind="${kind}"} ${n}`)
    .join('\n');

describe('bench runtime scrape: loop delay and GC between two /metrics reads', () => {
  it('reads the window from the difference of two scrapes, GC kinds summed', () => {
    const before = parseRuntime(
      [
        loop({ '0.001': 100, '0.002': 100, '0.005': 100, '+Inf': 100 }),
        gc('minor', { '0.002': 5, '0.005': 5, '0.01': 5, '+Inf': 5 }),
        '# HELP other 1',
        'gateway_requests_total{route="/v1/chat/completions"} 7',
      ].join('\n'),
    );
    const after = parseRuntime(
      [
        // 1,000 more samples: 985 within 1 ms, 10 within 2 ms, 4 within 5 ms, 1 above.
        loop({ '0.001': 1085, '0.002': 1095, '0.005': 1099, '+Inf': 1100 }),
        gc('minor', { '0.002': 15, '0.005': 17, '0.01': 18, '+Inf': 18 }),
        gc('major', { '0.002': 0, '0.005': 0, '0.01': 1, '+Inf': 1 }),
      ].join('\n'),
    );
    const s = summarize(before, after);
    expect(s.loopSamples).toBe(1000);
    expect(s.loopDelayP99Ms).toBe(2); // 995 of 1,000 within 2 ms ≥ 99 %; 985 within 1 ms is not
    expect(s.loopDelayMaxMs).toBe(Number.POSITIVE_INFINITY);
    expect(s.gcPauses).toBe(14);
    expect(s.gcPausesByKind).toEqual({ minor: 13, major: 1 });
    expect(gcPausesText(s)).toBe('14 (minor 13, major 1)');
    expect(gcPausesText({ gcPauses: 5 })).toBe('5');
    expect(s.gcOver5ms).toBe(2); // one minor and one major between 5 and 10 ms
    expect(s.gcOver5msByKind).toEqual({ minor: 1, major: 1 });
    expect(gcOver5msText(s)).toBe('2 (minor 1, major 1)');
    // A report written before the kinds were kept: the count alone.
    expect(gcOver5msText({ gcOver5ms: 3 })).toBe('3');
    expect(s.gcLongestMs).toBe(10);
  });

  it('an idle window is all zeros', () => {
    const a = parseRuntime(loop({ '0.001': 3, '+Inf': 3 }));
    expect(summarize(a, a)).toEqual({
      loopSamples: 0,
      loopDelayP99Ms: 0,
      loopDelayMaxMs: 0,
      gcPauses: 0,
      gcPausesByKind: {},
      gcOver5ms: 0,
      gcOver5msByKind: {},
      gcLongestMs: 0,
    });
  });
});
