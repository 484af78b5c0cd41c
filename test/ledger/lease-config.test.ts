import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { createLedgerOnRedis } from '../../core/ledger/index.js';
import type { Ledger } from '../../core/ledger/types.js';
import { type RedisProcess, startRedisProcess } from '../../scripts/chaos/redis-process.js';
import { type PaidGateway, startPaidGateway } from '../support/paid-gateway.js';
import { until } from '../support/until.js';

/**
 * The lease settings as the gateway reads them (README: LEDGER_LEASES, LEASE_FLUSH_MS, LEASE_IDLE_MS,
 * LEASE_TTL_MS), end to end on Redis: paid calls through the openai SDK, and the store's own view — Redis
 * MONITOR counts the ledger scripts run under this gateway's prefix, and a plain store ledger (no lease
 * wrapper) reads what is reserved and spent.
 */
/**
 * A redis-server of this file's own (loopback, a free port): MONITOR on the shared one also sees every other
 * suite's commands, and ioredis fails a monitor connection ("Command queue state error") when such commands
 * arrive in the same read as MONITOR's own OK — which a busy machine made happen.
 */
let own: RedisProcess;
let ownDir: string;
let URL = '';
beforeAll(async () => {
  ownDir = mkdtempSync(join(tmpdir(), 'gw-lease-config-'));
  own = await startRedisProcess(ownDir);
  URL = own.url;
}, 60_000);

let h: PaidGateway | undefined;
const clients: Redis[] = [];
afterEach(async () => {
  await h?.auditOk();
  await h?.close();
  h = undefined;
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await own?.stop();
  rmSync(ownDir, { recursive: true, force: true });
});

/** Starts the gateway and a MONITOR connection counting ledger script runs (EVALSHA) on the funded account. */
async function start(env: Record<string, string>) {
  // MONITOR starts before the gateway: ioredis fails a monitor connection ("Command queue state error") when
  // monitored commands arrive in the same read as the MONITOR command's own OK, which traffic makes likely.
  const monitor = await new Redis(URL).monitor();
  clients.push(monitor as unknown as Redis);
  h = await startPaidGateway({ store: 'redis', env: { ...env, REDIS_URL: URL } });
  const prefix = h.gateway.services.config.redisPrefix;
  let scripts = 0;
  let account = '';
  monitor.on('monitor', (_time: string, args: string[]) => {
    const cmd = args[0]?.toLowerCase();
    if (!account || (cmd !== 'evalsha' && cmd !== 'eval')) return;
    if (args.some((a) => a.startsWith(`${prefix}:{a:${account}}:`))) scripts++;
  });
  const plain = new Redis(URL);
  clients.push(plain);
  const store: Ledger = await createLedgerOnRedis(plain, prefix, { warn: () => {} });
  const { apiKey } = await h.fundKey(1000);
  const accountId = (await store.getKeyInfo({ apiKey }))!.key.accountId;
  account = accountId;
  const client = h.openai(apiKey);
  const call = async () => {
    const r = await client.chat.completions.create({
      model: 'mock-gpt',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 16,
    });
    expect(r.choices[0]?.message.content).toBeTruthy();
  };
  // MONITOR is asynchronous: a marker command shows every earlier command has been seen.
  const seen = async () => {
    const marker = `${prefix}:monitor-marker:${Math.random()}`;
    let done = false;
    const onMarker = (_t: string, args: string[]) => {
      if (args.includes(marker)) done = true;
    };
    monitor.on('monitor', onMarker);
    await plain.get(marker);
    // A condition, not a window: the bound only catches a MONITOR that lost the marker (30 s, any load).
    await until('the MONITOR marker', () => done, 30_000);
    monitor.off('monitor', onMarker);
    return scripts;
  };
  return { apiKey, accountId, store, call, seen, prefix };
}

describe('lease settings (Redis, end to end)', () => {
  it('parses LEDGER_LEASES and LEASE_*; refuses values out of range', () => {
    expect(loadConfig({}).leases).toEqual({ enabled: true, flushMs: 50, idleMs: 1000, ttlMs: 10_000 });
    expect(
      loadConfig({ LEDGER_LEASES: 'off', LEASE_FLUSH_MS: '5', LEASE_IDLE_MS: '250', LEASE_TTL_MS: '4000' })
        .leases,
    ).toEqual({ enabled: false, flushMs: 5, idleMs: 250, ttlMs: 4000 });
    expect(() => loadConfig({ LEASE_TTL_MS: '99' })).toThrow(/LEASE_TTL_MS/);
    expect(() => loadConfig({ LEASE_FLUSH_MS: '0' })).toThrow(/LEASE_FLUSH_MS/);
    expect(() => loadConfig({ LEDGER_LEASES: 'maybe' })).toThrow(/LEDGER_LEASES/);
  });

  it('LEDGER_LEASES=off: every paid call is one admit and one settle in the store, reported at once', async () => {
    const g = await start({ LEDGER_LEASES: 'off' });
    const before = await g.seen();
    for (let i = 0; i < 5; i++) await g.call();
    expect((await g.seen()) - before).toBe(10);
    // Nothing waits in memory: the store already has the 5 calls, and nothing is reserved.
    const info = (await g.store.getKeyInfo({ apiKey: g.apiKey }))!;
    expect(info.account).toMatchObject({ requests: 5, reservedMsat: 0 });
  }, 120_000);

  it('leases on: 5 calls are one store step; LEASE_FLUSH_MS holds the report back; LEASE_TTL_MS is the expiry', async () => {
    // TTL 120 s: no renewal (at half the TTL) can fall among the 5 calls, however slow the machine.
    const g = await start({ LEASE_FLUSH_MS: '60000', LEASE_IDLE_MS: '60000', LEASE_TTL_MS: '120000' });
    const first = await g.seen();
    // A cold key's first call goes the exact way (admit and settle in the store): a lease would cost more.
    await g.call();
    const before = await g.seen();
    expect(before - first).toBe(2);
    const t0 = Date.now();
    for (let i = 0; i < 5; i++) await g.call();
    const t1 = Date.now();
    // One lease step (opening, with the slice) and nothing per call.
    expect((await g.seen()) - before).toBe(1);
    // Not reported within the flush interval: the store has the slice reserved and only the exact call.
    const info = (await g.store.getKeyInfo({ apiKey: g.apiKey }))!;
    expect(info.account.requests).toBe(1);
    expect(info.account.reservedMsat).toBeGreaterThan(0);
    // The lease expires LEASE_TTL_MS after the step that opened it (no step since).
    const leases = await g.store.otherLeases(g.accountId, 'none');
    expect(leases).toHaveLength(1);
    expect(leases[0]!.expiresAtMs).toBeGreaterThanOrEqual(t0 + 120_000);
    expect(leases[0]!.expiresAtMs).toBeLessThanOrEqual(t1 + 120_000);
    // A balance read through the gateway's ledger reports them (read-your-writes) and returns the lease.
    const read = (await h!.ledger.getKeyInfo({ apiKey: g.apiKey }))!;
    expect(read.account).toMatchObject({ requests: 6, reservedMsat: 0 });
    expect((await g.store.getKeyInfo({ apiKey: g.apiKey }))!.account).toMatchObject({
      requests: 6,
      reservedMsat: 0,
      spentMsat: read.account.spentMsat,
    });
  }, 120_000);

  it('LEASE_IDLE_MS: an idle key shows nothing reserved in the store soon after its last call', async () => {
    // A TTL far beyond the wait below: the lease can only come back through the idle timer, not by expiring.
    const g = await start({ LEASE_FLUSH_MS: '20', LEASE_IDLE_MS: '300', LEASE_TTL_MS: '600000' });
    for (let i = 0; i < 3; i++) await g.call();
    expect((await g.store.getKeyInfo({ apiKey: g.apiKey }))!.account.reservedMsat).toBeGreaterThan(0);
    // Returned by the idle timer alone (no read through the gateway, no expiry): waited for as a condition; the
    // bound (60 s, a tenth of the TTL) only catches a timer that never fires, at any load.
    await until(
      'the idle lease returned',
      async () => (await g.store.getKeyInfo({ apiKey: g.apiKey }))!.account.reservedMsat === 0,
      60_000,
    );
    expect((await g.store.getKeyInfo({ apiKey: g.apiKey }))!.account.requests).toBe(3);
    // (The first of the 3 calls went the exact way, a cold key's; the other two through the lease.)
    expect(await g.store.otherLeases(g.accountId, 'none')).toEqual([]);
  }, 120_000);
});
