import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Wallet } from '@cashu/cashu-ts';
import { type MockUpstream, startMockUpstream } from '../../bench/upstream/mock-upstream.js';
import { creditToken } from '../../core/account/credit-token.js';
import { createLedger } from '../../core/ledger/index.js';
import type { Ledger } from '../../core/ledger/types.js';
import { createLogger } from '../../core/log.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import { readRedisConfig } from '../../core/store/redis-config.js';
import { readTokenMeta } from '../../core/wallet/token-codec.js';
import { createWallet } from '../../core/wallet/wallet.js';
import { type GatewayProcess, spawnGateway } from '../lib/gateway-process.js';
import { type RedisTopology, startRedisCluster } from '../lib/redis-topology.js';
import { type DevMint, startDevMint } from '../mint/index.js';
import { type RedisProcess, startRedisProcess } from './redis-process.js';
import {
  type CallPlan,
  type PayMode,
  paidCall,
  type Returned,
  refund,
  type TrafficCounts,
} from './traffic.js';

/**
 * `npm run chaos`: N gateway processes on one store (their own redis-server with AOF, or one shared SQLite
 * file), continuous paid traffic in the three payment modes, streamed and not, while faults are injected at
 * random: kill -9 a gateway and restart it, kill -9 Redis and restart it from its AOF, a mint outage, an
 * upstream that fails, hangs or cuts its streams. Afterwards, with every fault healed, the money must add up:
 * the ledger's conservation check and wallet solvency pass, nothing stays reserved once the (short) lease has run out, every
 * change and refund token redeems at the mint, and every token a client paid with was either credited to its
 * identity or is still unspent (never redeemed by the gateway and left uncredited: "lost").
 */

export type ChaosStore = 'redis' | 'sqlite';
export type FaultKind =
  | 'kill-gateway'
  | 'restart-redis'
  | 'kill-master'
  | 'mint-outage'
  | 'upstream-fail'
  | 'upstream-hang'
  | 'upstream-cut';

export interface ChaosOptions {
  store: ChaosStore;
  seconds: number;
  processes?: number;
  clients?: number;
  /** Mean time between faults, ms (default 2500). */
  faultEveryMs?: number;
  /**
   * Redis only: a 3-master, 3-replica Redis Cluster instead of one redis-server, and the `kill-master` fault
   * (SIGKILL a master, wait for its replica to take over, restart it: it comes back as a replica).
   */
  cluster?: boolean;
  seed?: number;
  log?: (line: string) => void;
  /**
   * Traffic runs `seconds`, and then on until this many calls were served (200) and `minFaults` faults were
   * injected, at most `maxSeconds` in all: on a busy machine the gateways serve fewer calls per second, and the
   * run waits for what it needs to check instead of ending with too little (default 0: `seconds` only).
   */
  minServed?: number;
  minFaults?: number;
  /** Upper bound of the traffic when `minServed` / `minFaults` are not reached (default 10 × `seconds`). */
  maxSeconds?: number;
}

export interface ChaosReport {
  store: ChaosStore;
  seconds: number;
  counts: TrafficCounts;
  /** Calls the ledger charged (settled), and the msats charged and paid out (withdrawals, refunds, change). */
  charged: { calls: number; spentMsat: number; withdrawnMsat: number };
  /**
   * Calls answered 200 by a gateway less than KILL_WINDOW_MS before that gateway was killed -9: with credit leases
   * (the default) a killed process loses the calls it settled in memory but had not reported yet (at most one
   * LEASE_FLUSH_MS and a store step; docs/ledger.md, "Credit leases"), so these alone may be served uncharged.
   */
  servedJustBeforeKill: number;
  faults: Partial<Record<FaultKind, number>>;
  tokensPaid: number;
  tokensCredited: number;
  tokensUnspent: number;
  /** Tokens the mint says were spent but no identity was credited for, even after the client presented the token
   *  once more after the run: money the clients lost. */
  tokensLost: number;
  /** Spent tokens whose credit came only when the client presented the token again after the run (every try during
   *  it failed, e.g. while the mint call of a killed process could still arrive): credited then, not lost. */
  tokensCreditedOnLateRetry: number;
  returnedTokens: number;
  returnedRedeemed: number;
  /** Still reserved 20 s after the calls' reservations expired (holds of killed processes, pending retries): must be 0. */
  reservedAfterLeaseMsat: number;
  /** Still reserved after a sweep as of one hour later (every lease, the long backstop included, expired). */
  reservedAfterMsat: number;
  auditOk: boolean;
  solvent: boolean;
  problems: string[];
}

const LEASE_MS = 4_000;
/** A kill this soon after a 200 may take that call's charge with it (one lease flush and one store step, loaded). */
const KILL_WINDOW_MS = 2_000;
const ORPHAN_MS = 1_500;
/** A client's waits before each try of one call: a real client backs off, so its tries outlast a short outage. */
const RETRY_WAIT_MS = [0, 250, 1_000, 2_500, 5_000];

export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const n = opts.processes ?? 3;
  const clients = opts.clients ?? 6;
  let rnd = (opts.seed ?? Date.now()) >>> 0;
  const random = () => {
    // mulberry32: deterministic fault schedule per seed.
    rnd = (rnd + 0x6d2b79f5) >>> 0;
    let t = rnd;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const log = opts.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), 'gw-chaos-'));
  const mint: DevMint = await startDevMint({ port: 0 });
  const upstream: MockUpstream = await startMockUpstream({ chunks: 5 });
  let redis: RedisProcess | undefined;
  let cluster: RedisTopology | undefined;
  const seed = randomBytes(32).toString('hex');
  const storeEnv: Record<string, string> = {};
  const prefix = `chaos${randomBytes(4).toString('hex')}`;
  if (opts.store === 'redis' && opts.cluster) {
    cluster = await startRedisCluster({ replicas: 1 });
    Object.assign(storeEnv, cluster.env, { REDIS_PREFIX: prefix });
  } else if (opts.store === 'redis') {
    redis = await startRedisProcess(dir);
    storeEnv.REDIS_URL = redis.url;
    storeEnv.REDIS_PREFIX = prefix;
  } else {
    storeEnv.DATA_DIR = dir;
  }
  const env = (port: number): Record<string, string> => ({
    HOST: '127.0.0.1',
    PORT: String(port),
    HTTP_ENGINE: 'node',
    UPSTREAM_BASE_URL: upstream.url,
    UPSTREAM_TIMEOUT_MS: '2000',
    CASHU_MINTS: mint.url,
    CASHU_SEED: seed,
    RESERVATION_LEASE_MS: String(LEASE_MS),
    // What a killed gateway held (calls, change and withdrawal holds) is released by a live one this fast.
    ORPHAN_RELEASE_MS: String(ORPHAN_MS),
    RATE_LIMIT_CONCURRENT: '1000',
    RATE_LIMIT_REQUESTS_PER_MINUTE: '100000',
    LOG_LEVEL: 'info',
    ...storeEnv,
  });
  const report: ChaosReport = {
    store: opts.store,
    seconds: opts.seconds,
    counts: { calls: 0, served: 0, refused: 0, failed: 0, retried: 0, refunds: 0 },
    faults: {},
    charged: { calls: 0, spentMsat: 0, withdrawnMsat: 0 },
    servedJustBeforeKill: 0,
    tokensPaid: 0,
    tokensCredited: 0,
    tokensUnspent: 0,
    tokensLost: 0,
    tokensCreditedOnLateRetry: 0,
    returnedTokens: 0,
    returnedRedeemed: 0,
    reservedAfterLeaseMsat: 0,
    reservedAfterMsat: 0,
    auditOk: false,
    solvent: false,
    problems: [],
  };
  const procs: (GatewayProcess | undefined)[] = [];
  const ports: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const p = await spawnGateway(env(0));
      procs.push(p);
      ports.push(p.port);
    }
    // Funded keys and a pool of tokens, made before any fault (the mint may be down later).
    const base0 = `http://127.0.0.1:${ports[0]}`;
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${base0}/v1/wallet/create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ cashu_token: await mint.mintTokens(3_000) }),
      });
      const j = (await r.json()) as { api_key?: string };
      if (!j.api_key) throw new Error(`wallet/create answered ${r.status}`);
      keys.push(j.api_key);
    }
    const pool: string[] = [];
    const poolSize = Math.max(40, Math.ceil(opts.seconds * 4));
    for (let i = 0; i < poolSize; i++) pool.push(await mint.mintTokens(20));
    const paidWith = new Set<string>();
    const returned: Returned = { tokens: [] };
    const bearers: string[] = [];

    const liveBase = (): string | undefined => {
      const live = procs.map((p, i) => (p?.alive() ? i : -1)).filter((i) => i >= 0);
      if (live.length === 0) return undefined;
      return `http://127.0.0.1:${ports[live[Math.floor(random() * live.length)]!]}`;
    };
    /** When each gateway (by its base URL) answered a 200, and when each was killed -9. */
    const servedAt = new Map<string, number[]>();
    const killedAt = new Map<string, number[]>();

    let stop = false;
    const minEnd = Date.now() + opts.seconds * 1000;
    const maxEnd = Date.now() + (opts.maxSeconds ?? 10 * opts.seconds) * 1000;
    const faultCount = () => Object.values(report.faults).reduce((a, b) => a + (b ?? 0), 0);
    const enough = () =>
      report.counts.served >= (opts.minServed ?? 0) && faultCount() >= (opts.minFaults ?? 0);
    /** Traffic goes on for `seconds`, then until it has what it needs (bounded by `maxSeconds`). */
    const running = (marginMs = 0) =>
      !stop && Date.now() < maxEnd - marginMs && (Date.now() < minEnd - marginMs || !enough());
    const client = async () => {
      while (running()) {
        const roll = random();
        const mode: PayMode = roll < 0.5 ? 'key' : roll < 0.75 ? 'bearer' : 'x-cashu';
        let credential: string;
        if (mode === 'key') credential = keys[Math.floor(random() * keys.length)]!;
        else {
          const t = pool.pop();
          if (t === undefined) {
            credential = keys[0]!;
          } else {
            credential = t;
            paidWith.add(t);
            if (mode === 'bearer') bearers.push(t);
          }
        }
        const plan: CallPlan = {
          mode: credential.startsWith('cashu') ? mode : 'key',
          stream: random() < 0.5,
          credential,
        };
        for (let attempt = 0; attempt < RETRY_WAIT_MS.length; attempt++) {
          await new Promise((r) => setTimeout(r, RETRY_WAIT_MS[attempt]));
          const base = liveBase();
          if (!base) continue;
          if (attempt > 0) report.counts.retried++;
          report.counts.calls++;
          const outcome = await paidCall(base, plan, returned, 5_000);
          report.counts[outcome]++;
          if (outcome === 'served') servedAt.set(base, [...(servedAt.get(base) ?? []), Date.now()]);
          if (outcome !== 'failed') break;
        }
        if (bearers.length > 0 && random() < 0.05) {
          const b = bearers.splice(Math.floor(random() * bearers.length), 1)[0]!;
          const base = liveBase();
          if (base && (await refund(base, b, returned, 5_000)) === 200) report.counts.refunds++;
        }
      }
    };

    const faults = async () => {
      const every = opts.faultEveryMs ?? 2_500;
      // No fault starts in the last second of the traffic: the clients see it healed.
      while (running(1_000)) {
        await new Promise((r) => setTimeout(r, every * (0.5 + random())));
        if (!running(1_000)) break;
        const kinds: FaultKind[] = [
          'kill-gateway',
          'mint-outage',
          'upstream-fail',
          'upstream-hang',
          'upstream-cut',
        ];
        if (redis) kinds.push('restart-redis');
        if (cluster) kinds.push('kill-master');
        const kind = kinds[Math.floor(random() * kinds.length)]!;
        report.faults[kind] = (report.faults[kind] ?? 0) + 1;
        log(`fault: ${kind}`);
        const heal = 400 + random() * 1_200;
        switch (kind) {
          case 'kill-gateway': {
            const i = Math.floor(random() * n);
            const victim = `http://127.0.0.1:${ports[i]}`;
            killedAt.set(victim, [...(killedAt.get(victim) ?? []), Date.now()]);
            await procs[i]?.kill('SIGKILL');
            await new Promise((r) => setTimeout(r, heal));
            procs[i] = await spawnGateway(env(ports[i]!));
            break;
          }
          case 'restart-redis':
            await redis!.crashAndRestart(heal);
            break;
          case 'kill-master': {
            const masters = await cluster!.masters();
            const victim = masters[Math.floor(random() * masters.length)]!;
            await cluster!.kill(victim);
            // Its replica takes over (cluster-node-timeout plus an election); then it returns as a replica.
            const promoted = Date.now() + 30_000;
            while (Date.now() < promoted) {
              const now = await cluster!.masters();
              if (now.length === 3 && !now.includes(victim)) break;
              await new Promise((r) => setTimeout(r, 200));
            }
            await cluster!.restart(victim);
            break;
          }
          case 'mint-outage':
            mint.setOutage(503);
            await new Promise((r) => setTimeout(r, heal));
            mint.setOutage(null);
            break;
          case 'upstream-fail':
          case 'upstream-hang':
          case 'upstream-cut':
            upstream.setBehaviour(
              kind === 'upstream-fail'
                ? { error: { status: 500, body: '{"error":{"message":"chaos"}}' } }
                : kind === 'upstream-hang'
                  ? { hang: true }
                  : { stallAfterChunks: 2, chunkDelayMs: 5 },
            );
            await new Promise((r) => setTimeout(r, heal));
            upstream.setBehaviour({
              error: undefined,
              hang: false,
              stallAfterChunks: undefined,
              chunkDelayMs: 0,
            });
            break;
        }
      }
    };

    await Promise.all([...Array.from({ length: clients }, client), faults()]);
    for (const [base, kills] of killedAt) {
      for (const t of servedAt.get(base) ?? [])
        if (kills.some((k) => k >= t && k - t < KILL_WINDOW_MS)) report.servedJustBeforeKill++;
    }
    stop = true;
    log(`traffic done: ${JSON.stringify(report.counts)}`);

    // Heal everything, let leases run out, then check the money with a fresh ledger + wallet on the store.
    for (let i = 0; i < n; i++) if (!procs[i]?.alive()) procs[i] = await spawnGateway(env(ports[i]!));
    await new Promise((r) => setTimeout(r, LEASE_MS + 500));
    await verify(report, {
      conn: cluster
        ? openStore({ redis: readRedisConfig(storeEnv), redisPrefix: prefix })
        : opts.store === 'redis'
          ? openStore({ redisUrl: redis!.url, redisPrefix: prefix })
          : openStore({ dataDir: dir }),
      prefix,
      mint,
      seed,
      paidWith: [...paidWith],
      returned: returned.tokens,
    });
    return report;
  } finally {
    await Promise.allSettled(procs.map((p) => p?.kill('SIGKILL')));
    await Promise.allSettled([mint.close(), upstream.close(), redis?.stop(), cluster?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

interface VerifyInput {
  conn: StoreConnection;
  prefix: string;
  mint: DevMint;
  seed: string;
  paidWith: string[];
  returned: string[];
}

async function verify(report: ChaosReport, v: VerifyInput): Promise<void> {
  const { conn } = v;
  if (conn.kind === 'redis') await conn.ready();
  let ledger: Ledger | undefined;
  const wallet = await createWallet({ conn, mints: [v.mint.url], seed: v.seed, log: createLogger('silent') });
  try {
    ledger = await createLedger(conn, { prefix: v.prefix });
    // What a restarted process does at start-up: finish what crashes left half-done. An entry a killed process
    // left after a mint call whose answer was lost may still have been on its way to the mint: it is decided only
    // once the wallet's stale time has passed since (core/wallet/journal.ts, mayStillArrive), so the pass runs
    // again until nothing is deferred (bounded: two minutes).
    const recoverUntil = Date.now() + 120_000;
    for (;;) {
      const r = await wallet.recover();
      if (r.deferred === 0 || Date.now() > recoverUntil) break;
      await new Promise((res) => setTimeout(res, 1000));
    }
    // Background work of the live processes (a settlement or payout take-back retried after a Redis restart,
    // the orphan release of a killed process) finishes within seconds: wait for it, bounded (a minute: seconds
    // at idle, many times that on a busy machine).
    const until = Date.now() + 60_000;
    for (;;) {
      await ledger.sweepExpired();
      report.reservedAfterLeaseMsat = (await ledger.checkConservation()).totals.reservedMsat;
      if (report.reservedAfterLeaseMsat === 0 || Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    if (report.reservedAfterLeaseMsat !== 0) {
      report.problems.push(
        `${report.reservedAfterLeaseMsat} msat still held after the call lease and the orphan release`,
      );
    }
    await ledger.sweepExpired(Date.now() + 3_600_000);
    const audit = await ledger.checkConservation();
    report.auditOk = audit.ok;
    report.charged = {
      calls: audit.totals.requests,
      spentMsat: audit.totals.spentMsat,
      withdrawnMsat: audit.totals.withdrawnMsat,
    };
    report.reservedAfterMsat = audit.totals.reservedMsat;
    if (!audit.ok) report.problems.push(`audit: ${JSON.stringify(audit.breaches.slice(0, 5))}`);
    if (audit.totals.reservedMsat !== 0)
      report.problems.push(`${audit.totals.reservedMsat} msat still reserved after every lease expired`);
    const solvency = await wallet.checkSolvency(() => ledger!.totalUserBalancesMsat());
    report.solvent = solvency.solvent;
    if (!solvency.solvent) report.problems.push(`not solvent: ${JSON.stringify(solvency)}`);

    // Every token a client paid with: spent at the mint ⇒ its identity was credited.
    const client = new Wallet(v.mint.url, { unit: 'sat' });
    await client.loadMint();
    report.tokensPaid = v.paidWith.length;
    for (const t of v.paidWith) {
      const meta = readTokenMeta(t);
      const states = await client.checkProofsStates(meta.secrets.map((secret) => ({ secret })) as never);
      const spent = states.some((s) => s.state === 'SPENT');
      let info = await ledger.getKeyInfo({ tokenHash: wallet.tokenHash(t) });
      if (spent && !info) {
        // Every try during the run failed (a 5xx while a killed process's mint call could still arrive): the
        // client keeps its token and presents it again later, as the 503's Retry-After tells it. The same step a
        // paid call takes (core/account/credit-token.ts): the wallet's receipt for the token, then the credit.
        try {
          await creditToken({ ledger, wallet }, t, { kind: 'token' });
          info = await ledger.getKeyInfo({ tokenHash: wallet.tokenHash(t) });
          if (info) report.tokensCreditedOnLateRetry++;
        } catch (err) {
          report.problems.push(`a spent token presented again was refused: ${(err as Error).message}`);
        }
      }
      if (info) report.tokensCredited++;
      if (!spent) report.tokensUnspent++;
      if (spent && !info) report.tokensLost++;
      if (!spent && info) report.problems.push('a token was credited but never redeemed at the mint');
    }
    if (report.tokensLost > 0)
      report.problems.push(`${report.tokensLost} paid token(s) redeemed but never credited`);

    // Every change and refund token redeems.
    report.returnedTokens = v.returned.length;
    for (const t of v.returned) {
      try {
        await client.receive(t);
        report.returnedRedeemed++;
      } catch (err) {
        report.problems.push(`a returned token did not redeem: ${(err as Error).message}`);
      }
    }
  } finally {
    await ledger?.close();
    await wallet.close();
    await conn.close();
  }
}
