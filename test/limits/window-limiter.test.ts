import { afterAll, describe, expect, it } from 'vitest';
import { WindowLimiter } from '../../core/limits/window-limiter.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { processStore } from '../support/process-store.js';

/**
 * The fixed-window limiter on each of its stores: minute / hour / day windows counted together, a refused
 * request counts nothing, the refusal names the full window and its reset, windows reset on the boundary,
 * scopes and subjects are independent, `peek` never counts.
 */
const T0 = Date.UTC(2030, 0, 7, 0, 0, 0); // midnight UTC: a day, hour and minute boundary
const LIMITS = [
  { seconds: 60, limit: 3 },
  { seconds: 3600, limit: 5 },
  { seconds: 86400, limit: 6 },
] as const;

describe.each(['memory', 'sqlite', 'redis'] as const)('WindowLimiter on %s', (kind) => {
  const stores: { conn: StoreConnection; drop(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const s of stores) {
      await s.conn.close();
      await s.drop();
    }
  });
  async function limiter(): Promise<WindowLimiter> {
    if (kind === 'memory') return new WindowLimiter(undefined);
    const ps = processStore(kind);
    const conn =
      kind === 'redis'
        ? openStore({ redisUrl: ps.env.REDIS_URL, redisPrefix: ps.env.REDIS_PREFIX })
        : openStore({ dataDir: ps.env.DATA_DIR });
    if (conn.kind === 'redis') await conn.ready();
    stores.push({ conn, drop: () => ps.drop() });
    return new WindowLimiter(conn);
  }

  it('counts every window, refuses without counting, names the full window, resets on its boundary', async () => {
    const l = await limiter();
    const hit = (now: number, subject = '10.0.0.1') => l.hit('ip', subject, LIMITS, now);
    expect(await hit(T0)).toEqual({
      allowed: true,
      seconds: 60,
      limit: 3,
      remaining: 2,
      resetUnix: T0 / 1000 + 60,
    });
    await hit(T0 + 1000);
    expect(await hit(T0 + 2000)).toMatchObject({ allowed: true, seconds: 60, remaining: 0 });
    const refused = await hit(T0 + 3000);
    expect(refused).toEqual({
      allowed: false,
      seconds: 60,
      limit: 3,
      remaining: 0,
      resetUnix: T0 / 1000 + 60,
    });
    expect(await l.peek('ip', '10.0.0.1', LIMITS, T0 + 4000)).toMatchObject({ allowed: false, seconds: 60 });
    // The next minute: the hour window (5) has 2 left — the refused request was not counted.
    expect(await hit(T0 + 60_000)).toMatchObject({ allowed: true, seconds: 3600, remaining: 1 });
    expect(await hit(T0 + 61_000)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await hit(T0 + 62_000)).toEqual({
      allowed: false,
      seconds: 3600,
      limit: 5,
      remaining: 0,
      resetUnix: T0 / 1000 + 3600,
    });
    // The next hour: only the day window (6) is left, with 1.
    expect(await hit(T0 + 3_600_000)).toMatchObject({ allowed: true, seconds: 86400, remaining: 0 });
    expect(await hit(T0 + 3_601_000)).toMatchObject({
      allowed: false,
      seconds: 86400,
      resetUnix: T0 / 1000 + 86400,
    });
    // Other subjects and scopes are independent; peek does not count.
    expect(await hit(T0 + 3_602_000, '10.0.0.2')).toMatchObject({ allowed: true, remaining: 2 });
    for (let i = 0; i < 5; i++) await l.peek('admin-login', '10.0.0.1', LIMITS, T0 + 3_603_000);
    expect(await l.hit('admin-login', '10.0.0.1', LIMITS, T0 + 3_603_000)).toMatchObject({
      allowed: true,
      remaining: 2,
    });
    // The next day everything starts again.
    expect(await hit(T0 + 86_400_000)).toMatchObject({ allowed: true, seconds: 60, remaining: 2 });
  });
});
