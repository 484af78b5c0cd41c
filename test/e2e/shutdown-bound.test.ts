import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckStateEnum, Wallet } from '@cashu/cashu-ts';
import Database from 'libsql';
import { afterEach, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../../bench/upstream/mock-upstream.js';
import type { Ledger } from '../../core/ledger/types.js';
import { projectRoot } from '../../core/openapi/document.js';
import { SHUTDOWN_BOUND_MS } from '../../core/shutdown.js';
import { type RedisProcess, startRedisProcess } from '../../scripts/chaos/redis-process.js';
import type { GatewayProcess } from '../../scripts/lib/gateway-process.js';
import { type DevMint, startDevMint } from '../../scripts/mint/index.js';
import { Receiver } from '../events/support/receiver.js';
import { testWallet } from '../support/dev-mint.js';
import { type PaidProcesses, paidProcesses } from '../support/paid-process.js';
import type { ProcessStore } from '../support/process-store.js';
import { until } from '../support/until.js';

/**
 * After SIGTERM the gateway process exits within SHUTDOWN_GRACE_MS + SHUTDOWN_BOUND_MS whatever fails
 * around it, and the money is consistent when it starts again (audit without breaches, solvent). Each case runs
 * a real gateway process on SQLite and on Redis.
 */
const GRACE_MS = 2_000;
const BOUND_MS = GRACE_MS + SHUTDOWN_BOUND_MS;
const CHAT = JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] });

async function paidCall(base: string, apiKey: string): Promise<number> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: CHAT,
  });
  await res.arrayBuffer();
  return res.status;
}

/** SIGTERM to a gateway process: it exits 0. */
async function stopsCleanly(gw: Pick<GatewayProcess, 'kill' | 'exitInfo'>): Promise<void> {
  await gw.kill('SIGTERM');
  expect(gw.exitInfo()).toBe('exit code 0, signal null');
}

/** The money adds up in `ps`: audit without breaches, `apiKey` holds `balanceMsat` with nothing reserved,
 *  and the operator's eCash at `mints` covers every user balance (`users` msats in all). */
async function moneyConsistent(
  ps: ProcessStore,
  mints: string[],
  apiKey: string,
  balanceMsat: number,
  users = balanceMsat,
): Promise<void> {
  await ps.withLedger(async (ledger, conn) => {
    expect((await ledger.checkConservation()).breaches).toEqual([]);
    const info = await ledger.getKeyInfo({ apiKey });
    expect(info!.account.balanceMsat).toBe(balanceMsat);
    expect(info!.account.reservedMsat).toBe(0);
    const wallet = await testWallet(conn, mints);
    try {
      const solvency = await wallet.checkSolvency(() => ledger.totalUserBalancesMsat());
      expect(solvency.userBalancesMsat).toBe(users);
      expect(solvency.solvent).toBe(true);
    } finally {
      await wallet.close();
    }
  });
}

/** What `apiKey`'s account reserves now (read through the store). */
const reservedOf = (ps: ProcessStore, apiKey: string) =>
  ps.withLedger(async (l: Ledger) => (await l.getKeyInfo({ apiKey }))!.account.reservedMsat);

/** The gateway's warnings and errors (pino level 40 and up), last first: what an unexpected exit code left behind. */
function warnings(gw: GatewayProcess): string {
  const lines = gw
    .logs()
    .split('\n')
    .filter((l) => /"level":(4|5|6)0/.test(l));
  return `the gateway's warnings and errors: ${lines.slice(-12).reverse().join('\n')}`;
}

/** SIGTERM, then how long until the process ended and how. */
async function terminate(gw: GatewayProcess): Promise<{ ms: number; exit: string }> {
  const t0 = Date.now();
  process.kill(gw.pid!, 'SIGTERM');
  const exit = await gw.exited;
  return { ms: Date.now() - t0, exit };
}

describe.each(['sqlite', 'redis'] as const)('SIGTERM ends the process within its bound (%s)', (store) => {
  let rig: PaidProcesses | undefined;
  let mint: DevMint | undefined;
  let up: MockUpstream | undefined;
  let dir: string | undefined;
  let redis: RedisProcess | undefined;
  let lock: Database.Database | undefined;
  let foreign: DevMint | undefined;
  let rx: Receiver | undefined;
  afterEach(async () => {
    rx?.close();
    lock?.close();
    await rig?.close();
    await Promise.allSettled([mint?.close(), up?.close(), redis?.stop(), foreign?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
    rig = mint = up = dir = redis = lock = foreign = rx = undefined;
  });

  it('stdout and stderr without a reader, the mint and the provider gone: exits 0, money consistent on restart', async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-shutdown-'));
    const dataFile = join(dir, 'mint.json');
    rig = await paidProcesses(store, {}, { dataFile });
    const gw = await rig.spawn({ SHUTDOWN_GRACE_MS: String(GRACE_MS) });
    const base = `http://127.0.0.1:${gw.port}`;
    const apiKey = await rig.createKey(base, 100);
    expect(await paidCall(base, apiKey)).toBe(200);

    // The supervisor that read the output has exited; the mint and the provider went away with it.
    gw.dropOutput();
    await rig.up.close();
    await rig.mint.close();
    const { ms, exit } = await terminate(gw);
    expect(exit, warnings(gw)).toBe('exit code 0, signal null');
    expect(ms).toBeLessThan(BOUND_MS);

    // Everything back: the same store starts a gateway again (the SQLite file and the leases were let go) and
    // the money adds up: 100 sat funded, two calls at 1 sat.
    mint = await startDevMint({ port: rig.mint.port, dataFile });
    up = await startMockUpstream();
    const again = await rig.spawn({ UPSTREAM_BASE_URL: up.url });
    expect(await paidCall(`http://127.0.0.1:${again.port}`, apiKey)).toBe(200);
    await stopsCleanly(again);
    await rig.ps.withLedger(async (ledger, conn) => {
      expect((await ledger.checkConservation()).breaches).toEqual([]);
      const info = await ledger.getKeyInfo({ apiKey });
      expect(info!.account.balanceMsat).toBe(98_000);
      expect(info!.account.reservedMsat).toBe(0);
      const wallet = await testWallet(conn, [mint!.url]);
      try {
        const solvency = await wallet.checkSolvency(() => ledger.totalUserBalancesMsat());
        expect(solvency.userBalancesMsat).toBe(98_000);
        expect(solvency.solvent).toBe(true);
      } finally {
        await wallet.close();
      }
    });
  }, 120_000);

  it('a plugin whose close never resolves: exits 1 within the bound, says which plugin', async () => {
    rig = await paidProcesses(store);
    const gw = await rig.spawn({
      SHUTDOWN_GRACE_MS: String(GRACE_MS),
      PIPELINE:
        'auth,rate-limit,reserve,./test/fixtures/plugins/never-closes.mjs,relay,meter,settle,change-token',
    });
    const base = `http://127.0.0.1:${gw.port}`;
    const apiKey = await rig.createKey(base, 100);
    expect(await paidCall(base, apiKey)).toBe(200);
    const { ms, exit } = await terminate(gw);
    expect(exit).toBe('exit code 1, signal null');
    expect(ms).toBeLessThan(BOUND_MS);
    expect(gw.logs()).toMatch(/"plugin":"never-closes"[^\n]*plugin close failed or did not finish/);

    // The store was let go: the next start serves the same key, and the money adds up (100 sat funded, two
    // calls at 1 sat, the operator's eCash covering the balance).
    const again = await rig.spawn();
    expect(await paidCall(`http://127.0.0.1:${again.port}`, apiKey)).toBe(200);
    await stopsCleanly(again);
    await moneyConsistent(rig.ps, [rig.mint.url], apiKey, 98_000);
  }, 120_000);

  it('the store unreachable mid-settlement: exits 1 within the bound; the next start releases the reservation', async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-shutdown-'));
    // Redis: a redis-server of this test's own (AOF, fsync always: nothing acknowledged is lost), gone while
    // the call is in flight, and back for the restart. SQLite has no server to lose; what genuinely happens is
    // another process holding the database's write lock (an exclusive transaction: a backup, a migration, an
    // operator's sqlite3 shell), so that no settlement can commit: SQLITE_BUSY after the busy timeout, the
    // same store_unavailable path (and the same settlement retries) as an unreachable Redis.
    redis = store === 'redis' ? await startRedisProcess(dir) : undefined;
    rig = await paidProcesses(redis ? { redisUrl: redis.url } : 'sqlite');
    const gw = await rig.spawn({ SHUTDOWN_GRACE_MS: String(GRACE_MS) });
    const base = `http://127.0.0.1:${gw.port}`;
    const apiKey = await rig.createKey(base, 100);
    rig.up.setBehaviour({ latencyMs: 1_000 });
    const answer = paidCall(base, apiKey).catch((err: Error) => err);
    // Admitted (reserved in the store); the provider is answering. Now the store goes away.
    await until('the provider has the call', () => rig!.up.stats.lastPath === '/v1/chat/completions');
    if (redis) await redis.stop();
    else {
      lock = new Database(join(rig.ps.env.DATA_DIR!, 'gateway.db'));
      lock.pragma('busy_timeout = 5000');
      lock.exec('BEGIN EXCLUSIVE');
    }
    // SIGTERM with the call in flight: it ends within the grace, its settlement fails and is retried until
    // the grace is over; the reservation is left to the next start.
    const { ms, exit } = await terminate(gw);
    expect(exit).toBe('exit code 1, signal null');
    expect(ms).toBeLessThan(BOUND_MS);
    // The client had its answer; only its charge could not be written. The gateway says so: the settlement given up
    // at shutdown, or (on a slow machine, the store's busy wait and the retries outlasting the grace) the call still
    // in flight when the grace ended; either way the exit is 1 and the reservation is left to the next start.
    expect(await answer).toBe(200);
    expect(gw.logs()).toMatch(
      /1 settlements not applied before shutdown|requests still in flight at the end of the grace period/,
    );

    // The store back: the next process releases what the dead one held (orphan release), so the call that
    // could not be charged went free — never charged twice, nothing left reserved — and the money adds up.
    if (redis) await redis.start();
    else {
      lock!.exec('ROLLBACK');
      lock!.close();
      lock = undefined;
    }
    rig.up.setBehaviour({ latencyMs: 0 });
    const again = await rig.spawn({ ORPHAN_RELEASE_MS: '1000' });
    await until('the reservation released', async () => (await reservedOf(rig!.ps, apiKey)) === 0);
    expect(await paidCall(`http://127.0.0.1:${again.port}`, apiKey)).toBe(200);
    await stopsCleanly(again);
    await moneyConsistent(rig.ps, [rig.mint.url], apiKey, 99_000);
  }, 120_000);

  it('a stuck foreign swap (FOREIGN_MINTS=swap, the foreign mint holds the melt): exits 1 within the bound; the token is credited once on restart', async () => {
    // The foreign mint takes the melt and holds the request while its Lightning payment is in flight (the
    // payment stays pending); the top-up waits for it when SIGTERM comes. Both mints share the dev mints'
    // fake Lightning network; the primary leaves its invoices unpaid until the foreign melt pays them.
    foreign = await startDevMint({ port: 0 });
    rig = await paidProcesses(store, {}, { mintQuotePayment: 'manual' });
    // The restart is the same instance (INSTANCE_NAME): its start pass finishes its predecessor's swap at once.
    const env = { FOREIGN_MINTS: 'swap', FOREIGN_MINT_MAX_FEE_PERCENT: '50', INSTANCE_NAME: 'stuck-swap-gw' };
    const gw = await rig.spawn({ SHUTDOWN_GRACE_MS: String(GRACE_MS), ...env });
    const base = `http://127.0.0.1:${gw.port}`;
    const apiKey = await rig.createKey(base, 10);
    const token = await foreign.mintTokens(100);
    foreign.setLightningMode('pending');
    foreign.setStall(/^\/v1\/melt\/bolt11$/);
    const topup = (at: string) =>
      fetch(`${at}/v1/wallet/topup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ cashu_token: token }),
      });
    const first = topup(base).catch((err: Error) => err);
    const w = new Wallet(foreign.url, { unit: 'sat' });
    await w.loadMint();
    const proofs = w.decodeToken(token).proofs;
    await until('the melt held at the foreign mint', async () =>
      (await w.checkProofsStates(proofs)).every((s) => s.state === CheckStateEnum.PENDING),
    );
    const { ms, exit } = await terminate(gw);
    expect(exit).toBe('exit code 1, signal null');
    expect(ms).toBeLessThan(BOUND_MS);
    // Never answered: the connection closed with the process.
    expect(await first).toBeInstanceOf(Error);
    expect(gw.logs()).toMatch(/"inflight":1[^\n]*requests still in flight at the end of the grace period/);

    // The foreign mint's payment went through meanwhile: the next start's wallet recovery finishes the swap
    // (mints at the primary), and the same token tops up once — a repeat adds nothing.
    foreign.setStall(null);
    foreign.setLightningMode('pay');
    const again = await rig.spawn(env);
    const at = `http://127.0.0.1:${again.port}`;
    const r = await topup(at);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { added_amount: number; new_balance: number; swapped_from: string };
    expect(body.swapped_from).toBe(foreign.url);
    expect(body.added_amount).toBeGreaterThan(50_000);
    expect(body.added_amount).toBeLessThan(100_000);
    expect(body.new_balance).toBe(10_000 + body.added_amount);
    const repeat = await topup(at);
    expect(repeat.status).toBe(200);
    expect(((await repeat.json()) as { new_balance: number }).new_balance).toBe(body.new_balance);
    expect((await w.checkProofsStates(proofs)).every((s) => s.state === CheckStateEnum.SPENT)).toBe(true);
    await stopsCleanly(again);
    await moneyConsistent(rig.ps, [rig.mint.url], apiKey, body.new_balance);
  }, 120_000);

  it('background work in flight (a webhook delivery to a receiver that hangs, X-Cashu change the mint refused): exits 0 within the bound; the next process delivers, the change is claimable', async () => {
    rx = new Receiver();
    await rx.start();
    // The first attempt is never answered; later ones are.
    rx.plan.set('/hook', [0, 200]);
    rig = await paidProcesses(store);
    const env = {
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_MS: '50',
      WEBHOOK_RETRY_BASE_MS: '200',
    };
    const gw = await rig.spawn({ SHUTDOWN_GRACE_MS: String(GRACE_MS), ...env });
    const base = `http://127.0.0.1:${gw.port}`;
    const apiKey = await rig.createKey(base, 100);
    const alerts = await fetch(`${base}/v1/wallet/alerts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ low_balance_threshold: 1_000_000, webhook_url: `${rx.url}/hook` }),
    });
    expect(alerts.status).toBe(200);
    expect(await paidCall(base, apiKey)).toBe(200);

    // X-Cashu: the token is redeemed, then the mint refuses the change (an outage): X-Cashu-Change pending,
    // the rest stays on the token's identity.
    const token = await rig.mint.mintTokens(20);
    rig.up.setBehaviour({ latencyMs: 300 });
    const seen = rig.up.stats.requests;
    const paying = fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-cashu': token },
      body: CHAT,
    });
    await until(
      'the provider has the X-Cashu call',
      () => rig!.up.stats.requests > seen && rig!.up.stats.lastPath === '/v1/chat/completions',
    );
    rig.mint.setOutage(503);
    const res = await paying;
    expect(res.status).toBe(200);
    expect(res.headers.get('x-cashu-change')).toBe('pending;msat=19000;claim="POST /v1/balance/refund"');
    await res.arrayBuffer();

    // SIGTERM while the balance.low delivery waits for the receiver: it is cut short and recorded for a retry.
    await until('the delivery reached the receiver', () => rx!.on('/hook').length === 1);
    const { ms, exit } = await terminate(gw);
    expect(exit, warnings(gw)).toBe('exit code 0, signal null');
    expect(ms).toBeLessThan(BOUND_MS);

    // The next process delivers the same message (same webhook-id) and the change is claimed with the token.
    rig.mint.setOutage(null);
    rig.up.setBehaviour({ latencyMs: 0 });
    const again = await rig.spawn(env);
    await until('the retry from the next process', () => rx!.on('/hook').length >= 2);
    const [first, second] = rx.on('/hook');
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(JSON.parse(second!.body)).toMatchObject({ type: 'balance.low' });
    const claim = await fetch(`http://127.0.0.1:${again.port}/v1/balance/refund`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cashu_token: token }),
    });
    expect(claim.status).toBe(200);
    expect(await claim.json()).toMatchObject({ amount: 19, balance: 0 });
    await stopsCleanly(again);
    // 100 sat funded, one call; 20 sat by X-Cashu, one call, 19 sat paid back out.
    await moneyConsistent(rig.ps, [rig.mint.url], apiKey, 99_000);
  }, 120_000);
});

describe('the last timer', () => {
  it('ends a process whose shutdown step never finishes and ignores its deadline: exit 1 at the grace + the bound, its output pipes without a reader', async () => {
    // A shortened bound (the production one is SHUTDOWN_BOUND_MS, the same code path): the timer, not the
    // step, must end the process, and at that moment, not before.
    const grace = 500;
    const bound = 1_500;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'support', 'hung-shutdown-worker.ts')],
      {
        cwd: projectRoot(),
        env: { ...process.env, GRACE_MS: String(grace), BOUND_MS: String(bound) },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<string>((resolve) =>
      child.once('exit', (code, signal) => resolve(`exit code ${code}, signal ${signal}`)),
    );
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
    });
    try {
      await until('the worker ready', () => out.includes('"msg":"ready"'), 30_000);
      // The reader goes away first (a supervisor that exited): every later log line meets EPIPE.
      child.stdout.destroy();
      child.stderr.destroy();
      const t0 = Date.now();
      child.kill('SIGTERM');
      expect(await exited).toBe('exit code 1, signal null');
      const ms = Date.now() - t0;
      expect(ms).toBeGreaterThanOrEqual(grace + bound - 50);
      expect(ms).toBeLessThan(grace + bound + 3_000);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, 60_000);
});
