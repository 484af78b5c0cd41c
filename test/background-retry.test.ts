import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BackgroundRetry } from '../core/background-retry.js';

describe('BackgroundRetry', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());
  const log = () => ({ info: vi.fn(), error: vi.fn() });

  it('retries with growing delays until the operation succeeds, once', async () => {
    const l = log();
    const r = new BackgroundRetry(l as never, 'op', 10, [10, 20, 40]);
    let calls = 0;
    r.schedule('a', async () => {
      calls++;
      if (calls < 3) throw new Error('down');
    });
    expect(r.pending).toBe(1);
    await vi.advanceTimersByTimeAsync(10);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(20);
    expect(calls).toBe(2);
    await vi.advanceTimersByTimeAsync(40);
    expect(calls).toBe(3);
    expect(r.pending).toBe(0);
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls).toBe(3);
    expect(l.info).toHaveBeenCalledOnce();
  });

  it('gives up after the last delay and says so', async () => {
    const l = log();
    const r = new BackgroundRetry(l as never, 'op', 10, [5, 5]);
    const op = vi.fn(async () => {
      throw new Error('down');
    });
    r.schedule('b', op);
    await vi.advanceTimersByTimeAsync(100);
    expect(op).toHaveBeenCalledTimes(2);
    expect(r.pending).toBe(0);
    expect(l.error).toHaveBeenCalledOnce();
  });

  it('is bounded: a full queue refuses more and logs it', () => {
    const l = log();
    const r = new BackgroundRetry(l as never, 'op', 2, [1000]);
    const op = async () => {};
    r.schedule('1', op);
    r.schedule('2', op);
    r.schedule('3', op);
    expect(r.pending).toBe(2);
    expect(l.error).toHaveBeenCalledOnce();
  });
});
