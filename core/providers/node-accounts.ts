import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Counter, Gauge } from 'prom-client';
import { GatewayError } from '../errors.js';
import type { Logger } from '../log.js';
import { registry, upstreamLostMsatsTotal, upstreamPaidMsatsTotal } from '../metrics.js';
import type { WalletService } from '../wallet/types.js';
import type { NodeAccountStore, PendingPayment } from './node-account-store.js';
import type { SurplusGate } from './node-payment.js';
import type { PrepaidNodeKeys, Provider } from './types.js';

/**
 * Prepaid keys at other nodes (`"payment": "cashu-balance"`, docs/providers.md): instead of a token per call, the
 * gateway keeps one API key at the node, made from the operator's wallet with `topup_sats` (the node's
 * `POST /v1/wallet/create`) and topped up by `topup_sats` (`POST /v1/wallet/topup`) when the node's balance for it
 * (`GET /v1/wallet/balance`) falls below `min_balance_sats`. Calls carry `Authorization: Bearer <key>`.
 *
 * - One key per node for every process and restart: kept in the money store (node-account-store.ts). Making and
 *   topping it up happen under the store's lock, one process at a time; a top-up re-reads the node's balance under
 *   the lock first, so processes that all saw it fall below the minimum top it up once.
 * - Money: each token comes from the operator surplus only (`SurplusGate`, the guard of per-call tokens too), so
 *   user balances never pay a node. A token is written to the store BEFORE it is sent (write-ahead): a process that
 *   dies with it in flight leaves it there, and whoever takes the lock next sends the same token again (the node
 *   credits a token once: a retry of create answers the same key, a retry of a top-up changes nothing) or, when
 *   the node refused it, takes it back into the wallet (`wallet.receive`). A token the node spent but never
 *   confirmed is an operator loss (`gateway_upstream_lost_msats_total{reason="prepaid_unconfirmed"}`).
 * - Balance: read from the node at first use, then kept as an estimate (less each call's cost as the node states
 *   it in its answer's `x-node-cost`), read again every BALANCE_REFRESH_MS while calls flow and whenever the
 *   estimate falls below the minimum. A top-up that fails (surplus too small, node or mint away) is retried with
 *   growing delays (TOPUP_RETRY_MS) and counted; calls go on while the balance lasts, and a node that answers 402
 *   fails over like any provider before the first byte.
 * - The key and the tokens are secrets: never in logs, errors, metrics or settings.
 *
 * Metrics: `gateway_node_topups_total{provider,kind,result}`, `gateway_node_topup_msats_total{provider}`,
 * `gateway_node_balance_msats{provider}`, `gateway_node_key_refusals_total{provider}`; the cost per call counts in
 * `gateway_upstream_paid_msats_total{provider}` as a `cashu` node's does.
 */

/** How long one process may hold a node key's lock (making or topping up the key). */
const LOCK_TTL_MS = 30_000;
/** How long a call waits for another process to make the node key. */
const KEY_WAIT_MS = 20_000;
/** The node's balance is read again at least this often while calls flow. */
const BALANCE_REFRESH_MS = 60_000;
/** How soon a key known to be short is checked again when another process held its lock. */
const RECHECK_BUSY_MS = 250;
/** Delays before a failed top-up is tried again (the last one repeats). */
export const TOPUP_RETRY_MS: readonly number[] = [1000, 2000, 5000, 10_000, 30_000, 60_000, 300_000];

const topupsTotal = new Counter({
  name: 'gateway_node_topups_total',
  help: 'Payments to "payment: cashu-balance" nodes: the prepaid key made (kind="create") or topped up (kind="topup"), confirmed by the node (result="ok") or failed and left to the retry (result="failed"), by provider',
  labelNames: ['provider', 'kind', 'result'] as const,
  registers: [registry],
});

const topupMsatsTotal = new Counter({
  name: 'gateway_node_topup_msats_total',
  help: 'Millisatoshis the operator prepaid to "payment: cashu-balance" nodes (key creations and top-ups the node confirmed), by provider',
  labelNames: ['provider'] as const,
  registers: [registry],
});

const balanceGauge = new Gauge({
  name: 'gateway_node_balance_msats',
  help: 'The prepaid key balance at a "payment: cashu-balance" node as last known (read from the node, less the costs it stated since; with WORKERS>1 the lowest of the workers), by provider',
  labelNames: ['provider'] as const,
  registers: [registry],
  // Every worker knows the same key's balance (less its own calls since it read it): not a sum.
  aggregator: 'min',
});

const keyRefusalsTotal = new Counter({
  name: 'gateway_node_key_refusals_total',
  help: 'Calls a "payment: cashu-balance" node refused with 401 (it does not know the prepaid key: not made again automatically), by provider',
  labelNames: ['provider'] as const,
  registers: [registry],
});

export interface NodeAccountsDeps {
  store: NodeAccountStore;
  surplus: SurplusGate;
  wallet: Pick<WalletService, 'receive'>;
  log: Logger;
  /** Node requests (tests may pass their own); default global fetch. */
  fetch?: typeof fetch;
  /** Delays before a failed top-up is retried (tests pass shorter ones); default TOPUP_RETRY_MS. */
  retryMs?: readonly number[];
}

/** One node's key as this process knows it. */
interface Account {
  /** The key (secret), once loaded or made. */
  key: string | undefined;
  /** Making or loading the key (one at a time). */
  loading: Promise<string> | undefined;
  /** The node's balance for the key as last read, less the costs stated since (msats). */
  balanceMsat: number | undefined;
  readAt: number;
  /** Every cost the node stated for the key in this process (msats, only grows): a read's answer is lowered by
   *  the costs stated while it was on its way (the node may have counted them or not: the lower figure is kept,
   *  and a check it prompts reads again). */
  spentMsat: number;
  /** A balance check (and top-up) in flight. */
  checking: Promise<void> | undefined;
  /** A check was asked for while one was in flight (its read may predate the costs stated since). */
  again: boolean;
  failures: number;
  retryAt: number;
  retryTimer: NodeJS.Timeout | undefined;
}

/** What became of a payment sent to the node. */
type Sent =
  | { ok: true; apiKey?: string; balanceMsat?: number }
  | { ok: false; definite: boolean; why: string };

export class NodeAccounts implements PrepaidNodeKeys {
  /** This process's lock owner id. */
  private readonly owner = randomUUID();
  private readonly accounts = new Map<string, Account>();
  private closed = false;

  constructor(private readonly deps: NodeAccountsDeps) {}

  private account(p: Provider): Account {
    let a = this.accounts.get(p.name);
    if (a === undefined) {
      a = {
        key: undefined,
        loading: undefined,
        balanceMsat: undefined,
        readAt: 0,
        spentMsat: 0,
        checking: undefined,
        again: false,
        failures: 0,
        retryAt: 0,
        retryTimer: undefined,
      };
      this.accounts.set(p.name, a);
    }
    return a;
  }

  /**
   * The request headers that pay a call at `p` from its prepaid key, making the key first when none exists.
   * @throws GatewayError `operator_wallet_insufficient` (the surplus cannot make the key: nothing reached the
   *   node), `upstream_error` (the node refused or did not answer the key's creation).
   */
  async headers(p: Provider): Promise<Record<string, string>> {
    const a = this.account(p);
    if (a.key === undefined && a.loading === undefined) {
      a.loading = this.loadKey(p, a).finally(() => {
        a.loading = undefined;
      });
    }
    const key = a.key ?? (await a.loading!);
    if (Date.now() - a.readAt > BALANCE_REFRESH_MS) this.check(p);
    return { authorization: `Bearer ${key}` };
  }

  /** A call's answer ended; the node stated `costMsat` for it (undefined: it stated none). */
  spent(p: Provider, requestId: string, costMsat: number | undefined): void {
    if (costMsat === undefined) return;
    upstreamPaidMsatsTotal.labels({ provider: p.name }).inc(costMsat);
    this.deps.log.info({ requestId, provider: p.name, costMsat }, 'node paid');
    const a = this.account(p);
    a.spentMsat += costMsat;
    if (a.balanceMsat === undefined) return;
    a.balanceMsat -= costMsat;
    balanceGauge.labels({ provider: p.name }).set(a.balanceMsat);
    if (a.balanceMsat < p.spec.prepaid!.minBalanceMsat) this.check(p);
  }

  /** The node refused a call: 402 (the key's balance is short: top up now), 401 (it does not know the key). */
  refused(p: Provider, status: number): void {
    if (status === 401) {
      keyRefusalsTotal.labels({ provider: p.name }).inc();
      this.deps.log.error(
        { provider: p.name },
        'node refused the prepaid key (401): it is not made again automatically; see docs/providers.md',
      );
      return;
    }
    if (status === 402) {
      const a = this.account(p);
      a.balanceMsat = 0;
      this.check(p);
    }
  }

  /** The balance check (and top-up) of `p`, in the background: one at a time here, one process at a time. */
  check(p: Provider): void {
    const a = this.account(p);
    if (a.checking !== undefined) {
      a.again = true;
      return;
    }
    if (this.closed || a.key === undefined || Date.now() < a.retryAt) return;
    a.again = false;
    let busy = false;
    a.checking = this.checkNow(p, a)
      .then((done) => {
        busy = !done;
      })
      .catch((err: unknown) => this.failed(p, a, 'topup', err))
      .finally(() => {
        a.checking = undefined;
        // The balance as known now is below the minimum, and the check just made did not settle it: it read the
        // balance before costs stated since, or another process held the lock (it may have read the node's
        // balance before this process's calls and topped up nothing). Checked again, so a key left short
        // does not wait for the next call's refresh (BALANCE_REFRESH_MS).
        const short = a.balanceMsat !== undefined && a.balanceMsat < p.spec.prepaid!.minBalanceMsat;
        const again = a.again;
        a.again = false;
        if (this.closed || !short || !(again || busy)) return;
        if (!busy) return this.check(p);
        const t = setTimeout(() => this.check(p), RECHECK_BUSY_MS);
        t.unref();
      });
  }

  /** Waits for the checks in flight (tests, shutdown). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.accounts.values()].map((a) => a.checking));
  }

  close(): void {
    this.closed = true;
    for (const a of this.accounts.values()) if (a.retryTimer !== undefined) clearTimeout(a.retryTimer);
  }

  /** The key from the store, or made now under the lock (another process making it: waited for). */
  private async loadKey(p: Provider, a: Account): Promise<string> {
    const url = p.spec.baseUrl;
    const deadline = Date.now() + KEY_WAIT_MS;
    for (;;) {
      const rec = await this.deps.store.read(url);
      if (rec.apiKey !== undefined) {
        a.key = rec.apiKey;
        // Its balance (and any payment a process left in flight) is looked at in the background.
        this.check(p);
        return rec.apiKey;
      }
      if (await this.deps.store.lock(url, this.owner, LOCK_TTL_MS)) {
        try {
          return await this.makeKey(p, a);
        } finally {
          await this.deps.store.unlock(url, this.owner);
        }
      }
      if (Date.now() > deadline) {
        throw new GatewayError('upstream_error', {
          message: `The prepaid key at the node ${p.name} is being made by another process; try again shortly`,
          details: { provider: p.name },
        });
      }
      await sleep(100);
    }
  }

  /** Under the lock: the key made (or a creation left in flight finished). */
  private async makeKey(p: Provider, a: Account): Promise<string> {
    const url = p.spec.baseUrl;
    const rec = await this.deps.store.read(url);
    if (rec.apiKey !== undefined) {
      a.key = rec.apiKey;
      return rec.apiKey;
    }
    try {
      let pending = rec.pending;
      if (pending === undefined) pending = await this.prepare(p, 'create');
      const r = await this.deliver(p, pending, undefined);
      if (r.apiKey === undefined) throw new Error('the node made no key');
      a.key = r.apiKey;
      this.known(p, a, r.balanceMsat ?? pending.amountMsat);
      a.failures = 0;
      a.retryAt = 0;
      return r.apiKey;
    } catch (err) {
      this.failed(p, a, 'create', err);
      throw toCallError(p, err);
    }
  }

  /**
   * Under the lock: finish a payment left in flight, read the balance, top up when it is below the minimum.
   * @returns false when another process held the lock (it is at it).
   */
  private async checkNow(p: Provider, a: Account): Promise<boolean> {
    const url = p.spec.baseUrl;
    if (!(await this.deps.store.lock(url, this.owner, LOCK_TTL_MS))) return false;
    try {
      const rec = await this.deps.store.read(url);
      if (rec.pending !== undefined) await this.deliver(p, rec.pending, a.key);
      let spent = a.spentMsat;
      const balance = (await this.readBalance(p, a.key!)) - (a.spentMsat - spent);
      this.known(p, a, balance);
      if (balance < p.spec.prepaid!.minBalanceMsat) {
        spent = a.spentMsat;
        const pending = await this.prepare(p, 'topup');
        const r = await this.deliver(p, pending, a.key);
        this.known(p, a, (r.balanceMsat ?? (await this.readBalance(p, a.key!))) - (a.spentMsat - spent));
      }
      a.failures = 0;
      a.retryAt = 0;
      return true;
    } finally {
      await this.deps.store.unlock(url, this.owner);
    }
  }

  /** A token of `topup_sats` from the surplus, written to the store before it goes anywhere. */
  private async prepare(p: Provider, kind: PendingPayment['kind']): Promise<PendingPayment> {
    const amountMsat = p.spec.prepaid!.topupMsat;
    const token = await this.deps.surplus.send(p.name, amountMsat);
    const pending: PendingPayment = { kind, token, amountMsat, atMs: Date.now() };
    if (!(await this.deps.store.write(p.spec.baseUrl, this.owner, { pending }))) {
      // The lock ran out and another process has it: this token never left, take it back.
      await this.takeBack(p, pending, 'lock lost');
      throw new Error('the lock on the node key ran out');
    }
    return pending;
  }

  /**
   * Sends a written payment to the node and records what it answered: confirmed → key/top-up stored, pending
   * cleared; refused → the token taken back (or, spent by the node, a counted loss), pending cleared; no answer →
   * pending kept for the next try (the same token is sent again).
   */
  private async deliver(
    p: Provider,
    pending: PendingPayment,
    key: string | undefined,
  ): Promise<{ apiKey?: string; balanceMsat?: number }> {
    const r = await this.send(p, pending, key);
    const url = p.spec.baseUrl;
    if (r.ok) {
      const w = await this.deps.store.write(url, this.owner, {
        ...(r.apiKey !== undefined ? { apiKey: r.apiKey } : {}),
        pending: null,
        topup: pending.kind === 'topup',
      });
      if (!w) throw new Error('the lock on the node key ran out');
      topupsTotal.labels({ provider: p.name, kind: pending.kind, result: 'ok' }).inc();
      topupMsatsTotal.labels({ provider: p.name }).inc(pending.amountMsat);
      this.deps.log.info(
        { provider: p.name, kind: pending.kind, amountMsat: pending.amountMsat },
        'node prepaid key paid',
      );
      // A top-up's answer is trusted only for the balance; the key comes from a creation.
      return pending.kind === 'create'
        ? r
        : { ...(r.balanceMsat !== undefined ? { balanceMsat: r.balanceMsat } : {}) };
    }
    if (r.definite) {
      await this.takeBack(p, pending, r.why);
      await this.deps.store.write(url, this.owner, { pending: null });
    }
    throw new Error(r.why);
  }

  /** A token the node did not take back into the wallet; one it spent anyway is a counted loss. */
  private async takeBack(p: Provider, pending: PendingPayment, why: string): Promise<void> {
    try {
      await this.deps.wallet.receive(pending.token);
    } catch (err) {
      if ((err as GatewayError).code !== 'token_already_spent') throw err; // mint away: the next try takes it back
      upstreamLostMsatsTotal
        .labels({ provider: p.name, reason: 'prepaid_unconfirmed' })
        .inc(pending.amountMsat);
      this.deps.log.warn(
        { provider: p.name, kind: pending.kind, lostMsat: pending.amountMsat, why },
        'node prepaid key: the node spent the token without confirming it (operator loss)',
      );
    }
  }

  /** POST create or top-up with the pending token. */
  private async send(p: Provider, pending: PendingPayment, key: string | undefined): Promise<Sent> {
    const headers: Record<string, string> = {
      ...p.spec.headers,
      accept: 'application/json',
      'content-type': 'application/json',
    };
    if (pending.kind === 'topup') {
      if (key === undefined) return { ok: false, definite: false, why: 'no key to top up' };
      headers.authorization = `Bearer ${key}`;
    }
    let res: Response;
    try {
      res = await (this.deps.fetch ?? fetch)(
        `${p.spec.baseUrl}/wallet/${pending.kind === 'create' ? 'create' : 'topup'}`,
        {
          method: 'POST',
          headers,
          body: JSON.stringify({ cashu_token: pending.token }),
          signal: AbortSignal.timeout(Math.min(p.spec.timeoutMs, 10_000)),
        },
      );
    } catch (err) {
      return { ok: false, definite: false, why: `no answer (${(err as Error).name})` };
    }
    let doc: Record<string, unknown> = {};
    try {
      doc = (await res.json()) as Record<string, unknown>;
    } catch {
      // Judged by its status alone.
    }
    if (!res.ok) {
      const code = (doc.error as { code?: unknown } | undefined)?.code;
      return {
        ok: false,
        // A 4xx other than 429 is the node's verdict on the token; a 5xx or 429 may go another way next time.
        definite: res.status >= 400 && res.status < 500 && res.status !== 429,
        why: `the node answered ${res.status}${typeof code === 'string' ? ` ${code}` : ''}`,
      };
    }
    const apiKey = typeof doc.api_key === 'string' && doc.api_key !== '' ? doc.api_key : undefined;
    const bal = [doc.new_balance, doc.balance].find(
      (v): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0,
    );
    if (pending.kind === 'create' && apiKey === undefined) {
      return { ok: false, definite: false, why: 'the node answered its key creation without a key' };
    }
    return {
      ok: true,
      ...(apiKey !== undefined ? { apiKey } : {}),
      ...(bal !== undefined ? { balanceMsat: bal } : {}),
    };
  }

  /** The key's balance at the node (`GET /v1/wallet/balance`: `balance`, msats). */
  private async readBalance(p: Provider, key: string): Promise<number> {
    let res: Response;
    let b: unknown;
    try {
      res = await (this.deps.fetch ?? fetch)(`${p.spec.baseUrl}/wallet/balance`, {
        headers: { ...p.spec.headers, accept: 'application/json', authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(Math.min(p.spec.timeoutMs, 10_000)),
      });
      if (res.ok) b = ((await res.json()) as { balance?: unknown }).balance;
    } catch (err) {
      throw new BalanceReadError(`no answer to the balance read (${(err as Error).name})`);
    }
    if (res.status === 401) this.refused(p, 401);
    if (!res.ok) throw new BalanceReadError(`the node answered ${res.status} to the balance read`);
    if (typeof b !== 'number' || !Number.isSafeInteger(b))
      throw new BalanceReadError('the node stated no balance');
    return b;
  }

  private known(p: Provider, a: Account, balanceMsat: number): void {
    a.balanceMsat = balanceMsat;
    a.readAt = Date.now();
    balanceGauge.labels({ provider: p.name }).set(balanceMsat);
  }

  /** A failed creation or top-up: counted, logged, and tried again after a growing delay. */
  private failed(p: Provider, a: Account, kind: PendingPayment['kind'], err: unknown): void {
    // A balance that could not be read is no failed payment: retried the same way, not counted as one.
    const paying = !(err instanceof BalanceReadError);
    if (paying) topupsTotal.labels({ provider: p.name, kind, result: 'failed' }).inc();
    const delays = this.deps.retryMs ?? TOPUP_RETRY_MS;
    // A surplus too small is a local read, not a payment tried at the node: looked at again every second delay, not
    // backed off further, so a top-up goes out within seconds of the operator adding money (it waited up to the
    // longest delay before).
    const poor = (err as GatewayError).code === 'operator_wallet_insufficient';
    const delay = poor
      ? delays[Math.min(1, delays.length - 1)]!
      : delays[Math.min(a.failures, delays.length - 1)]!;
    if (!poor) a.failures++;
    a.retryAt = Date.now() + delay;
    this.deps.log.warn(
      {
        provider: p.name,
        kind,
        code: (err as GatewayError).code,
        err: (err as Error).message,
        retryInMs: kind === 'topup' ? delay : undefined,
      },
      paying ? 'node prepaid key: payment failed' : 'node prepaid key: balance not read',
    );
    if (kind !== 'topup' || this.closed) return;
    if (a.retryTimer !== undefined) clearTimeout(a.retryTimer);
    a.retryTimer = setTimeout(() => {
      a.retryTimer = undefined;
      // The delay is over when the timer fires, whatever Date.now() says: a timer counts from the event loop's
      // cached time (stale by however long the failing callback ran) and the wall clock may step back, so a retry
      // that compared the clock to `retryAt` here could find itself early, return, and leave no retry behind.
      a.retryAt = 0;
      this.check(p);
    }, delay);
    a.retryTimer.unref();
  }
}

/** The node's balance could not be read (its answer, or none). */
class BalanceReadError extends Error {}

/** A creation failure as the call that waited for it sees it: a wallet too poor stays itself (503). */
function toCallError(p: Provider, err: unknown): GatewayError {
  if (err instanceof GatewayError && err.code === 'operator_wallet_insufficient') return err;
  return new GatewayError('upstream_error', {
    message: `The prepaid key at the node ${p.name} could not be made (${(err as Error).message})`,
    details: { provider: p.name },
  });
}
