import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOnce, loadDoorSecret, readMark, replaceMark } from '../../core/doors/door-secrets.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { until } from '../support/until.js';

/**
 * The payment doors' marks (core/doors/door-secrets.ts) on both stores: claimed once, a lifetime that ends the
 * same way on SQLite as on Redis (claimable again, read as absent), expired marks pruned on SQLite, and the
 * compare-and-set an MPP close hands its claim over with.
 */
describe.each(['sqlite', 'redis'] as const)('door marks on %s', (kind) => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-marks-'));
  const prefix = `tmark${randomBytes(5).toString('hex')}`;
  let conn: StoreConnection;
  const name = () => `t:${randomBytes(6).toString('hex')}`;

  beforeAll(async () => {
    conn =
      kind === 'redis'
        ? openStore({ redisUrl: process.env.TEST_REDIS_URL!, redisPrefix: prefix })
        : openStore({ dataDir: dir });
    const c = conn;
    if (c.kind === 'redis' && c.redis.status !== 'ready')
      await new Promise((resolve) => c.redis.once('ready', resolve));
    await loadDoorSecret(conn, 'mpp_challenge_key'); // what opens the doors (and migrates SQLite)
  });

  afterAll(async () => {
    if (conn.kind === 'redis') {
      const keys = await conn.redis.keys(`${prefix}:*`);
      if (keys.length > 0) await conn.redis.del(...keys);
    }
    await conn.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a mark is claimed once; with a lifetime it is gone when that ends: read as absent, claimable again', async () => {
    const n = name();
    const results = await Promise.all([1, 2, 3].map((i) => claimOnce(conn, n, 1, `v${i}`)));
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = `v${results.indexOf(true) + 1}`;
    expect(await readMark(conn, n)).toBe(winner);
    expect(await claimOnce(conn, n, 1, 'later')).toBe(false);
    // Redis expires whole seconds: wait until the lifetime has surely ended on both stores.
    await until('the mark to expire', async () => (await readMark(conn, n)) === null, 5_000, 100);
    expect(await claimOnce(conn, n, 1, 'again')).toBe(true);
    expect(await readMark(conn, n)).toBe('again');
    // An expired mark is free to a claim without a lifetime too (on SQLite no pruning runs before that claim:
    // the claim itself takes the expired row over), and then stays.
    await until('the mark to expire again', async () => (await readMark(conn, n)) === null, 5_000, 100);
    expect(await claimOnce(conn, n, null, 'for good')).toBe(true);
    expect(await claimOnce(conn, n, null, 'other')).toBe(false);
    expect(await readMark(conn, n)).toBe('for good');
    // Without a lifetime a mark stays.
    const forever = name();
    expect(await claimOnce(conn, forever, null, 'kept')).toBe(true);
    expect(await claimOnce(conn, forever, null, 'other')).toBe(false);
    expect(await readMark(conn, forever)).toBe('kept');
  });

  it('replaceMark is a compare-and-set: only the holder of the value it expects replaces it, once', async () => {
    const n = name();
    expect(await claimOnce(conn, n, null, 'closing:1')).toBe(true);
    expect(await replaceMark(conn, n, 'closing:0', 'stolen')).toBe(false);
    expect(await readMark(conn, n)).toBe('closing:1');
    const both = await Promise.all([
      replaceMark(conn, n, 'closing:1', 'a'),
      replaceMark(conn, n, 'closing:1', 'b'),
    ]);
    expect(both.filter(Boolean)).toHaveLength(1);
    expect(await readMark(conn, n)).toBe(both[0] ? 'a' : 'b');
  });

  // SQLite only (Redis expires keys itself): registered only there, not skipped on Redis.
  if (kind === 'sqlite')
    it('expired marks are deleted by later claims, a batch at a time: the table stays bounded', async () => {
      const db = conn.kind === 'sqlite' ? conn.db : undefined;
      const tag = `p${randomBytes(4).toString('hex')}`;
      // This test's marks only (another test's may expire meanwhile and be among those pruned).
      const mine = () =>
        Number(
          (
            db!.prepare('SELECT COUNT(*) AS n FROM node_secrets WHERE name LIKE ?').get(`used:${tag}:%`) as {
              n: number;
            }
          ).n,
        );
      // A lifetime long enough that none ends while they are made (each claim also prunes what has ended).
      for (let i = 0; i < 150; i++) await claimOnce(conn, `${tag}:${i}`, 2, 'x');
      expect(mine()).toBe(150);
      await until(
        'the marks to expire',
        async () => (await readMark(conn, `${tag}:149`)) === null,
        10_000,
        100,
      );
      await claimOnce(conn, `${tag}:live1`, 60, 'live'); // deletes up to 100 expired marks, adds itself
      expect(mine()).toBeGreaterThanOrEqual(51);
      expect(mine()).toBeLessThanOrEqual(53);
      await claimOnce(conn, `${tag}:live2`, 60, 'live');
      expect(mine()).toBe(2);
      expect(await readMark(conn, `${tag}:live1`)).toBe('live');
    });
});
