import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getTokenMetadata, Wallet } from '@cashu/cashu-ts';
import { creditRecovered } from '../../core/account/credit-token.js';
import { settlePayoutRecord } from '../../core/account/pay-out.js';
import { createLedger } from '../../core/ledger/index.js';
import type { Ledger } from '../../core/ledger/types.js';
import { createLogger } from '../../core/log.js';
import { openStore, type StoreConnection } from '../../core/store/connection.js';
import type { WalletService } from '../../core/wallet/types.js';
import { createWallet } from '../../core/wallet/wallet.js';
import { LnurlServer } from '../../test/support/lnurl-server.js';
import { type MintGate, mintGate, renamedToken } from '../../test/support/mint-gate.js';
import { type GatewayProcess, spawnGateway } from '../lib/gateway-process.js';
import { type DevMint, startDevMint } from '../mint/index.js';
import { type RedisProcess, startRedisProcess } from './redis-process.js';

/**
 * `npm run chaos -- --payouts`: the payout invariant under random interleavings (issue "every payout happens
 * once"). Gateway processes on one store pay keys out while faults hit the mint and the processes:
 *
 * - traffic: refunds to each key's own Lightning address (`k<N>` on a loopback LNURL server whose invoices a second
 *   dev mint issues), token withdrawals, key closes, and the expired-key sweep (a third of the keys expire during
 *   the run, with a refund address);
 * - faults: the mint's Lightning held pending and then paid or failed; melts queued in front of the mint (a proxy
 *   that keeps them, then forwards them, even those whose client gave up); kill -9 of a gateway and a fresh one in its
 *   place; the holds' clock jumped past the old 5-minute hold expiry (a sweep of expired holds as of 10 minutes on).
 *
 * Afterwards, every fault healed and the payouts decided (the live gateways' recovery passes, then one here):
 * - no Lightning address was paid more than its key was debited for (paid at most once, never paid and kept);
 *   what a key was debited beyond what reached its owner is at most the fee reserves of its Lightning payments
 *   and the token withdrawals whose answer was lost to a kill;
 * - the ledger's conservation check passes, nothing is left reserved, no payout is left open;
 * - the wallet holds at least the user balances (solvency); every token handed out redeems at the mint.
 */

export type PayoutChaosStore = 'redis' | 'sqlite';
export type PayoutFault = 'lightning-pending' | 'melt-queue' | 'kill-gateway' | 'clock-jump';

export interface PayoutChaosOptions {
  store: PayoutChaosStore;
  seconds: number;
  processes?: number;
  keys?: number;
  clients?: number;
  seed?: number;
  /** Mean time between faults, ms (default 1500). */
  faultEveryMs?: number;
  log?: (line: string) => void;
}

export interface PayoutChaosReport {
  store: PayoutChaosStore;
  /** The schedule's seed (`--seed`): the same clients' and faults' choices again (not their timing). */
  seed: number;
  seconds: number;
  keys: number;
  ops: {
    lightningRefunds: number;
    withdrawals: number;
    closes: number;
    ok: number;
    /** 409 payout_in_progress: another payout of the account undecided. */
    inProgress: number;
    /** Other 4xx (nothing left, key gone …). */
    refused: number;
    /** No answer or a 5xx (a killed process, the mint's Lightning pending). */
    failed: number;
    /** Error codes of the refused and failed answers, counted. */
    codes: Record<string, number>;
  };
  faults: Partial<Record<PayoutFault, number>>;
  /** Lightning payments that reached the keys' addresses, and their msats. */
  lightningPaid: number;
  lightningPaidMsat: number;
  /** Of them, by the expired-key sweep (keys that expired with a balance). */
  sweptKeys: number;
  tokensOut: number;
  tokensRedeemed: number;
  /** Σ over keys of (debited − what reached the key's owner), msats: fees, and answers lost to kills. */
  debitedBeyondPaidMsat: number;
  auditOk: boolean;
  solvent: boolean;
  problems: string[];
}

interface KeyState {
  i: number;
  apiKey: string;
  depositedMsat: number;
  expires: boolean;
  /** msats of tokens handed to the client (its withdrawals and close refunds). */
  tokensOutMsat: number;
  /** Token withdrawals whose answer never came (the process was killed, the request cut): msats asked. */
  lostAnswersMsat: number;
  /** Lightning refunds asked (each may have paid, answered or not). */
  lightningAsked: number;
}

const ORPHAN_MS = 1_500;

export async function runPayoutChaos(opts: PayoutChaosOptions): Promise<PayoutChaosReport> {
  const n = opts.processes ?? 2;
  const keyCount = opts.keys ?? 12;
  const clients = opts.clients ?? 4;
  const scheduleSeed = (opts.seed ?? Date.now()) >>> 0;
  let rnd = scheduleSeed;
  const random = () => {
    // mulberry32: a deterministic schedule per seed.
    rnd = (rnd + 0x6d2b79f5) >>> 0;
    let t = rnd;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const log = opts.log ?? (() => {});
  const report: PayoutChaosReport = {
    store: opts.store,
    seed: scheduleSeed,
    seconds: opts.seconds,
    keys: keyCount,
    ops: {
      lightningRefunds: 0,
      withdrawals: 0,
      closes: 0,
      ok: 0,
      inProgress: 0,
      refused: 0,
      failed: 0,
      codes: {},
    },
    faults: {},
    lightningPaid: 0,
    lightningPaidMsat: 0,
    sweptKeys: 0,
    tokensOut: 0,
    tokensRedeemed: 0,
    debitedBeyondPaidMsat: 0,
    auditOk: false,
    solvent: false,
    problems: [],
  };
  const dir = mkdtempSync(join(tmpdir(), 'gw-payout-chaos-'));
  // The gateway's mint (1 % fee reserve, 0.5 % routing fee) behind a proxy that can queue its melts, and the
  // recipients' mint (its invoices paid only by a melt on the fake Lightning network).
  const mint: DevMint = await startDevMint({
    port: 0,
    feeReservePpk: 10_000,
    lightningFeePpk: 5_000,
    // A melt whose answer was lost (a killed process, a queue in front of the mint) is decided once its quote has
    // expired: short here, so that the run settles within its bound.
    meltQuoteTtlS: 15,
  });
  const gate: MintGate = await mintGate(mint.url, '/v1/melt/bolt11');
  const recipientMint: DevMint = await startDevMint({ port: 0, mintQuotePayment: 'manual' });
  const recipient = new Wallet(recipientMint.url, { unit: 'sat' });
  await recipient.loadMint();
  const lnurl = new LnurlServer(recipient);
  await lnurl.start();
  let redis: RedisProcess | undefined;
  const storeEnv: Record<string, string> = {};
  const prefix = `pchaos${randomBytes(4).toString('hex')}`;
  if (opts.store === 'redis') {
    redis = await startRedisProcess(dir);
    storeEnv.REDIS_URL = redis.url;
    storeEnv.REDIS_PREFIX = prefix;
  } else {
    storeEnv.DATA_DIR = dir;
  }
  const seed = randomBytes(32).toString('hex');
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: '0',
    HTTP_ENGINE: 'node',
    UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v1',
    CASHU_MINTS: gate.url,
    CASHU_SEED: seed,
    ORPHAN_RELEASE_MS: String(ORPHAN_MS),
    WALLET_RECOVERY_MS: '1000',
    LIGHTNING_ADDRESS_ALLOW_PRIVATE: 'true',
    EXPIRED_KEY_SWEEP: 'true',
    EXPIRED_KEY_SWEEP_MS: '500',
    RATE_LIMIT_REQUESTS_PER_MINUTE: '100000',
    LOG_LEVEL: 'info',
    ...storeEnv,
  };
  const conn: StoreConnection =
    opts.store === 'redis'
      ? openStore({ redisUrl: redis!.url, redisPrefix: prefix })
      : openStore({ dataDir: dir });
  const procs: (GatewayProcess | undefined)[] = [];
  let ledger: Ledger | undefined;
  let wallet: WalletService | undefined;
  try {
    if (conn.kind === 'redis') await conn.ready();
    ledger = await createLedger(conn, { prefix });
    const money = { ledger };
    // The harness's own wallet on the same store and seed: it funds the keys (as a deposit does) and, at the end,
    // runs the recovery pass a restarted gateway runs.
    wallet = await createWallet({
      conn,
      mints: [gate.url],
      seed,
      log: createLogger('silent'),
      payouts: (record, w) => settlePayoutRecord({ ledger: money.ledger, wallet: w }, record),
      receipts: (receipt, intent) => creditRecovered(money.ledger, receipt, intent),
    });
    for (let i = 0; i < n; i++) procs.push(await spawnGateway(env));

    const keys: KeyState[] = [];
    // The deposits first (minting and redeeming take a while on a busy machine), then the keys at once, so that
    // the expiring ones expire during the traffic.
    const receipts = [];
    for (let i = 0; i < keyCount; i++) {
      const sats = 1_000 + Math.floor(random() * 2_000);
      // Minted at the mint, named by its address behind the gate (the one the gateways trust).
      receipts.push(
        await wallet.receive(await renamedToken(await mint.mintTokens(sats, 'sat'), mint.url, gate.url)),
      );
    }
    const started = Date.now() + 3_000;
    for (let i = 0; i < keyCount; i++) {
      const receipt = receipts[i]!;
      const expires = i % 3 === 2;
      const made = await ledger.createKeyFromDeposit({
        tokenHash: receipt.tokenHash,
        amountMsat: receipt.amountMsat,
        ...(expires ? { expiresAtMs: Math.round(started + 2_000 + random() * opts.seconds * 1000) } : {}),
      });
      if (!made.ok) throw new Error(`key not made: ${made.code}`);
      // Through the route, as a client sets it: the address is resolved, and the key's sweep job is written.
      const set = await fetch(`http://127.0.0.1:${procs[0]!.port}/v1/wallet/update`, {
        method: 'POST',
        headers: { authorization: `Bearer ${made.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ refund_address: lnurl.address(`k${i}`) }),
      });
      if (!set.ok) throw new Error(`refund address not set: ${set.status} ${await set.text()}`);
      keys.push({
        i,
        apiKey: made.apiKey,
        depositedMsat: receipt.amountMsat,
        expires,
        tokensOutMsat: 0,
        lostAnswersMsat: 0,
        lightningAsked: 0,
      });
    }
    log(`${keyCount} keys funded; ${n} gateways on ${opts.store}`);

    const live = (): string | undefined => {
      const up = procs.filter((p): p is GatewayProcess => p?.alive() === true);
      if (up.length === 0) return undefined;
      return `http://127.0.0.1:${up[Math.floor(random() * up.length)]!.port}`;
    };
    const handedOut: string[] = [];
    const took = (k: KeyState, body: unknown) => {
      for (const t of tokensIn(body)) {
        const meta = getTokenMetadata(t);
        k.tokensOutMsat += Number(meta.amount) * (meta.unit === 'msat' ? 1 : 1000);
        handedOut.push(t);
      }
    };
    const call = async (k: KeyState, method: string, path: string, body?: unknown) => {
      const base = live();
      if (!base) return { status: 0, body: undefined as unknown };
      try {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: { authorization: `Bearer ${k.apiKey}`, 'content-type': 'application/json' },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(20_000),
        });
        const text = await res.text();
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        return { status: res.status, body: json };
      } catch {
        return { status: 0, body: undefined as unknown };
      }
    };
    const count = (status: number, body: unknown) => {
      if (status >= 200 && status < 300) {
        report.ops.ok++;
        return;
      }
      const code = errorCode(body) ?? (status === 0 ? 'no_answer' : String(status));
      report.ops.codes[code] = (report.ops.codes[code] ?? 0) + 1;
      if (status >= 200 && status < 300) report.ops.ok++;
      else if (status === 409 && errorCode(body) === 'payout_in_progress') report.ops.inProgress++;
      else if (status >= 400 && status < 500) report.ops.refused++;
      else report.ops.failed++;
    };

    let stop = false;
    const end = Date.now() + opts.seconds * 1000;
    const client = async () => {
      while (!stop && Date.now() < end) {
        const k = keys[Math.floor(random() * keys.length)]!;
        const roll = random();
        if (roll < 0.45) {
          report.ops.lightningRefunds++;
          k.lightningAsked++;
          const r = await call(k, 'POST', '/v1/wallet/refund', { to: 'refund_address' });
          count(r.status, r.body);
        } else if (roll < 0.85) {
          report.ops.withdrawals++;
          const sats = 10 + Math.floor(random() * 300);
          const r = await call(k, 'POST', '/v1/wallet/withdraw', { amount: sats });
          count(r.status, r.body);
          if (r.status === 200) took(k, r.body);
          else if (r.status === 0 || r.status >= 500) k.lostAnswersMsat += sats * 1000;
        } else {
          report.ops.closes++;
          const before = await ledger!.getKeyInfo({ apiKey: k.apiKey });
          const r = await call(k, 'DELETE', '/v1/wallet/');
          count(r.status, r.body);
          if (r.status === 200) took(k, r.body);
          else if ((r.status === 0 || r.status >= 500) && before) k.lostAnswersMsat += before.availableMsat;
        }
        await new Promise((r) => setTimeout(r, 50 + random() * 200));
      }
    };

    /** Gateways being started again after a kill, by slot. */
    const respawning = new Map<number, Promise<void>>();
    const faults = async () => {
      const every = opts.faultEveryMs ?? 1_500;
      while (!stop && Date.now() < end) {
        await new Promise((r) => setTimeout(r, every * (0.5 + random())));
        if (stop || Date.now() >= end) break;
        const roll = random();
        let fault: PayoutFault;
        if (roll < 0.3) {
          fault = 'lightning-pending';
          mint.setLightningMode('pending');
          const ms = 1_000 + random() * 4_000;
          const then = random() < 0.75 ? 'pay' : 'fail';
          setTimeout(() => mint.setLightningMode(then), ms);
          log(`lightning pending for ${Math.round(ms)} ms, then ${then}`);
        } else if (roll < 0.55) {
          fault = 'melt-queue';
          gate.hold(true);
          const ms = 1_000 + random() * 3_000;
          setTimeout(() => gate.hold(false), ms);
          log(`melts queued for ${Math.round(ms)} ms`);
        } else if (roll < 0.8 && respawning.size < procs.length - 1) {
          fault = 'kill-gateway';
          const slots = procs.map((_, j) => j).filter((j) => !respawning.has(j));
          const i = slots[Math.floor(random() * slots.length)]!;
          await procs[i]?.kill('SIGKILL');
          log(`gateway ${i} killed`);
          // Replaced in the background: a start takes seconds on a loaded machine, and the faults go on meanwhile
          // (the clients use the live processes only).
          respawning.set(
            i,
            spawnGateway(env).then(
              (p) => {
                procs[i] = p;
              },
              () => undefined,
            ),
          );
          void respawning.get(i)!.finally(() => respawning.delete(i));
        } else {
          fault = 'clock-jump';
          // What a process whose clock ran 10 minutes ahead would sweep: every hold past its expiry then.
          const swept = await ledger!.sweepExpired(Date.now() + 600_000).catch(() => -1);
          log(`holds swept as of 10 minutes on: ${swept}`);
        }
        report.faults[fault] = (report.faults[fault] ?? 0) + 1;
      }
    };

    await Promise.all([...Array.from({ length: clients }, () => client()), faults()]);
    stop = true;
    await Promise.all(respawning.values());

    // Heal: the mint pays, nothing is queued, every gateway alive; then the payouts are decided (the gateways'
    // passes every second, and this one: the start pass of a process that comes after).
    gate.hold(false);
    mint.setLightningMode('pay');
    for (let i = 0; i < procs.length; i++) {
      if (procs[i]?.alive() !== true) procs[i] = await spawnGateway(env);
    }
    // Every payout decided: no open payout, nothing deferred, nothing reserved (two minutes at most).
    const settled = async (): Promise<void> => {
      const settleBy = Date.now() + 120_000;
      for (;;) {
        const r = await wallet!.recover({ ownerCheck: true }).catch(() => undefined);
        const open = await wallet!.openPayouts();
        const reserved = (await ledger!.checkConservation()).totals.reservedMsat;
        if ((r?.deferred ?? 1) === 0 && open.length === 0 && reserved === 0) return;
        if (Date.now() > settleBy) {
          const held: string[] = [];
          for (const k of keys) {
            const a = (await ledger!.getKeyInfo({ apiKey: k.apiKey }))?.account;
            if (a && a.reservedMsat > 0)
              held.push(`k${k.i}: ${a.reservedMsat} msat held, payout ${JSON.stringify(a.payout ?? null)}`);
          }
          report.problems.push(
            `not settled after two minutes: ${open.length} open payout(s), ${reserved} msat reserved, ${r?.deferred} deferred; ${held.join('; ')}`,
          );
          return;
        }
        await new Promise((res) => setTimeout(res, 1_000));
      }
    };
    await settled();
    // The keys that expired with a balance: swept to their address by a gateway.
    const sweepBy = Date.now() + 90_000;
    for (;;) {
      const due: string[] = [];
      for (const k of keys.filter((x) => x.expires)) {
        const info = await ledger.getKeyInfo({ apiKey: k.apiKey });
        if (info && info.availableMsat >= 20_000)
          due.push(
            `k${k.i} (${info.availableMsat} msat, payout ${JSON.stringify(info.account.payout ?? null)})`,
          );
      }
      if (due.length === 0 || Date.now() > sweepBy) {
        if (due.length > 0) {
          // The live gateways' sweep lines (a killed one's went with it) go into the problem: a CI log shows why.
          const lines = gatewayLines(procs, /sweep/i, 300);
          for (const line of lines) log(`sweep log: ${line}`);
          report.problems.push(
            `expired key(s) with a balance not swept: ${due.join(', ')}; the live gateways' last sweep log lines: ${JSON.stringify(lines.slice(-12))}`,
          );
        }
        break;
      }
      await new Promise((res) => setTimeout(res, 500));
    }
    // A sweep takes a key's balance out of reach when it places its hold, before its melt is decided: the
    // payouts it started are decided before anything is counted.
    await settled();

    // What reached each key's address: the recipient mint's quotes for that name that are paid.
    const paidMsat = new Map<number, number>();
    for (const inv of lnurl.issued) {
      const q = await recipient.checkMintQuoteBolt11(inv.quote);
      if (q.state !== 'PAID' && q.state !== 'ISSUED') continue;
      const i = Number(inv.name.slice(1));
      paidMsat.set(i, (paidMsat.get(i) ?? 0) + inv.sats * 1000);
      report.lightningPaid++;
      report.lightningPaidMsat += inv.sats * 1000;
    }
    for (const k of keys) {
      const info = await ledger.getKeyInfo({ apiKey: k.apiKey });
      // A closed key is gone with its account: everything but a sub-sat remainder left it (no call was made).
      const withdrawnMax = info?.account.withdrawnMsat ?? k.depositedMsat;
      const withdrawnMin = info?.account.withdrawnMsat ?? k.depositedMsat - 999;
      const ln = paidMsat.get(k.i) ?? 0;
      if (k.expires && ln > 0 && k.lightningAsked === 0) report.sweptKeys++;
      const out = ln + k.tokensOutMsat;
      if (out > withdrawnMax) {
        report.problems.push(
          `k${k.i}: paid out ${out} msat (Lightning ${ln}, tokens ${k.tokensOutMsat}) but debited ${withdrawnMax}: paid twice or paid and kept`,
        );
      }
      const lightningPayments = lnurl.issued.filter((x) => x.name === `k${k.i}`).length;
      // Each Lightning payment's fee is within the mint's 1 % reserve (at least 1 sat) plus a sat of rounding.
      const feeBound = Math.ceil(ln / 100) + 2_000 * lightningPayments;
      const beyond = withdrawnMin - out;
      report.debitedBeyondPaidMsat += Math.max(0, beyond);
      if (beyond > feeBound + k.lostAnswersMsat) {
        report.problems.push(
          `k${k.i}: debited ${withdrawnMin} msat, ${beyond} more than reached its owner (fees ≤ ${feeBound}, lost answers ${k.lostAnswersMsat})`,
        );
      }
    }

    // The gateways are still running: a remainder below the wait above (a few sats of fee change) can be swept
    // again at any pass, and that sweep holds the key's balance while its melt is decided. A hold read at that
    // moment is not one left behind: the audit is read again until nothing is reserved (a minute at most), and
    // what is still held then is reported.
    const auditBy = Date.now() + 60_000;
    let audit = await ledger.checkConservation();
    while (audit.totals.reservedMsat !== 0 && Date.now() < auditBy) {
      await new Promise((res) => setTimeout(res, 500));
      audit = await ledger.checkConservation();
    }
    report.auditOk = audit.ok;
    if (!audit.ok) report.problems.push(`audit: ${JSON.stringify(audit.breaches.slice(0, 5))}`);
    if (audit.totals.reservedMsat !== 0)
      report.problems.push(`${audit.totals.reservedMsat} msat still reserved`);
    const solvency = await wallet.checkSolvency(() => ledger!.totalUserBalancesMsat());
    report.solvent = solvency.solvent;
    if (!solvency.solvent) {
      // What the live gateways said of their journal and the mint's answers (a killed one's lines went with it).
      const lines = gatewayLines(procs, /journal|spent|roll|restor|recover|melt|payout/i, 400);
      report.problems.push(
        `not solvent: ${JSON.stringify(solvency)}; open journal entries: ${JSON.stringify((await wallet.openPayouts()).length)}; the live gateways' last wallet log lines: ${JSON.stringify(lines.slice(-25))}`,
      );
    }
    report.tokensOut = handedOut.length;
    let unredeemed = 0;
    for (const t of handedOut) {
      try {
        // Tokens name the mint by the address the gateways use (the gate in front of it).
        const w = new Wallet(gate.url, { unit: getTokenMetadata(t).unit as 'sat' | 'msat' });
        await w.loadMint();
        await w.receive(t);
        report.tokensRedeemed++;
      } catch (err) {
        report.problems.push(`a token handed out does not redeem: ${(err as Error).message}`);
        unredeemed++;
      }
    }
    if (unredeemed > 0) {
      // What the live gateways said of their payouts (a killed one's lines went with it): who took a token back.
      const lines = gatewayLines(procs, /payout|reclaim|taken back|journal/i, 400);
      report.problems.push(`the live gateways' last payout log lines: ${JSON.stringify(lines.slice(-25))}`);
    }
    return report;
  } finally {
    await Promise.allSettled(procs.map((p) => p?.kill('SIGKILL')));
    await wallet?.close().catch(() => undefined);
    await conn.close().catch(() => undefined);
    await Promise.allSettled([
      mint.close(),
      gate.close(),
      recipientMint.close(),
      lnurl.close(),
      redis?.stop(),
    ]);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The live gateways' log lines that match `re`, each cut to `width` characters (a killed one's went with it). */
function gatewayLines(procs: readonly (GatewayProcess | undefined)[], re: RegExp, width: number): string[] {
  const lines: string[] = [];
  for (const p of procs)
    for (const line of (p?.logs() ?? '').split('\n')) if (re.test(line)) lines.push(line.slice(0, width));
  return lines;
}

/** Every `cashu_token` in an answer (a withdrawal's, a close's refund). */
function tokensIn(body: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (v === null || typeof v !== 'object') return;
    for (const [k, x] of Object.entries(v)) {
      if (k === 'cashu_token' && typeof x === 'string' && x.startsWith('cashu')) out.push(x);
      else walk(x);
    }
  };
  walk(body);
  return out;
}

function errorCode(body: unknown): string | undefined {
  const e = (body as { error?: { code?: unknown } } | undefined)?.error;
  return typeof e?.code === 'string' ? e.code : undefined;
}
