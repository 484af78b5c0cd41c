import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AdminSessions } from '../../core/routes/admin-session.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { until } from '../support/until.js';

/**
 * Console sessions end when their time (ADMIN_SESSION_HOURS, given as a TTL in ms) is up, in each place they are
 * kept: this process's memory, SQLite (`admin_sessions`) and Redis (a key with that TTL). With an injected clock:
 * valid until the last millisecond, refused from the expiry on; with the real clock and a TTL of a few hundred
 * ms: refused once it has passed (Redis drops the key itself). Ended sessions are refused at once. The console's
 * side (401, back to the login form) is in test/routes/admin-browser-keys.test.ts.
 */

const HOUR = 3_600_000;
const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

function store(kind: 'memory' | 'sqlite' | 'redis'): StoreConnection | undefined {
  if (kind === 'memory') return undefined;
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'gw-sessions-'));
    const conn = openStore({ dataDir: dir });
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    cleanup.push(() => conn.close());
    return conn;
  }
  const url = process.env.TEST_REDIS_URL;
  if (!url) throw new Error('TEST_REDIS_URL is not set (global setup)');
  const prefix = `tsess${randomBytes(5).toString('hex')}`;
  const conn = openStore({ redisUrl: url, redisPrefix: prefix });
  cleanup.push(() => conn.close());
  cleanup.push(async () => {
    if (conn.kind !== 'redis') return;
    const keys = await conn.redis.keys(`${prefix}:*`);
    if (keys.length > 0) await conn.redis.del(...keys);
  });
  return conn;
}

describe.each(['memory', 'sqlite', 'redis'] as const)('admin sessions in %s', (kind) => {
  it('valid until ADMIN_SESSION_HOURS have passed, refused from then on (injected clock)', async () => {
    const conn = store(kind);
    if (conn?.kind === 'redis') await conn.ready();
    const sessions = new AdminSessions(conn);
    const t = Date.now();
    const ttl = 0.5 * HOUR;
    const id = await sessions.create(ttl, t);
    expect(await sessions.valid(id, t)).toBe(true);
    expect(await sessions.valid(id, t + ttl - 1)).toBe(true);
    expect(await sessions.valid(id, t + ttl)).toBe(false);
    expect(await sessions.valid(id, t + 2 * ttl)).toBe(false);
    if (conn?.kind === 'redis') {
      // The store forgets it by itself: the key carries the session's time as its TTL.
      const keys = await conn.redis.keys(`${conn.prefix}:admin:session:*`);
      expect(keys.length).toBe(1);
      const pttl = await conn.redis.pttl(keys[0]!);
      expect(pttl).toBeGreaterThan(ttl - 60_000);
      expect(pttl).toBeLessThanOrEqual(ttl);
    }
    await sessions.end(id);
    expect(await sessions.valid(id, t)).toBe(false);
  });

  it('a session of a few hundred ms is refused once they have passed (real clock)', async () => {
    const conn = store(kind);
    if (conn?.kind === 'redis') await conn.ready();
    const sessions = new AdminSessions(conn);
    const made = Date.now();
    const id = await sessions.create(300);
    // Refused no earlier than its expiry.
    await until('the session expired', async () => !(await sessions.valid(id)), 5000);
    expect(Date.now()).toBeGreaterThanOrEqual(made + 300);
    if (conn?.kind === 'redis') {
      await until(
        'Redis dropped the key',
        async () => (await conn.redis.keys(`${conn.prefix}:admin:session:*`)).length === 0,
        5000,
      );
    }
  });
});
