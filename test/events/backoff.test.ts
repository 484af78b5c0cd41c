import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { RETRY_CAP_MS, retryDelayMs } from '../../core/events/events.js';

describe('webhook retry backoff', () => {
  it('doubles from the base, is capped, and jitters ±20 %', () => {
    expect(retryDelayMs(1, 10_000, () => 0.5)).toBe(10_000);
    expect(retryDelayMs(2, 10_000, () => 0.5)).toBe(20_000);
    expect(retryDelayMs(3, 10_000, () => 0)).toBe(32_000);
    expect(retryDelayMs(3, 10_000, () => 1)).toBe(48_000);
    expect(retryDelayMs(40, 10_000, () => 0.5)).toBe(RETRY_CAP_MS);
  });

  it('the default attempts span about a day', () => {
    const { maxAttempts, retryBaseMs, timeoutMs } = loadConfig({}).webhooks;
    expect(timeoutMs).toBe(10_000);
    let total = 0;
    for (let a = 1; a < maxAttempts; a++) total += retryDelayMs(a, retryBaseMs, () => 0.5);
    expect(total / 3_600_000).toBeGreaterThan(18);
    expect(total / 3_600_000).toBeLessThan(30);
  });
});
