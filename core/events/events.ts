import type { LRUCache } from 'lru-cache';
import type { Agent } from 'undici';
import { request } from 'undici';
import type { Config } from '../config.js';
import type { KeyMeta, Ledger } from '../ledger/types.js';
import type { Logger } from '../log.js';
import { lazyLru } from '../lru.js';
import { eventErrorsTotal, webhookDeliveriesTotal } from '../metrics.js';
import { RenewingMap } from '../renewing-map.js';
import { signatureHeaders } from './signing.js';
import { guardedAgent } from './ssrf.js';
import {
  type AttemptOutcome,
  type BalanceChange,
  type Delivery,
  eventKeyOf,
  keyExpiryMs,
  type WebhookEvents,
  type WebhookStore,
} from './types.js';

/** Open calls remembered for their spend event (the `calls` map below). */
const MAX_OPEN_CALLS = 100_000;
/**
 * Events (docs/webhooks.md): the one hook where money changes meet alerts, the outbox worker and the
 * key.expired sweep.
 *
 * Hook: `watchLedger(ledger)` wraps the ledger the routes and the pipeline use (outside the credit-lease
 * wrapper, so settles served in memory count too): after `admit` it remembers the call's key, after `settle`
 * it runs `onSpend` (balance.low, spend.daily_limit), after `credit` `onBalance` (balance.low, the only
 * re-arm), after `commitWithdrawal` / `createChildKeys` (its fee) `onBalance` as a debit, and new child keys'
 * expiries are watched. These run after the ledger answered, in the background: an event never slows or
 * fails the call (errors are logged and counted in gateway_event_errors_total).
 *
 * Delivery: every `pollMs` the worker claims due outbox entries (a job claim, so several processes share the
 * outbox), POSTs them with both signatures, no redirects followed, `timeoutMs` per attempt, through the SSRF
 * guard's agent (the address is checked again at connect time). 2xx = delivered; 410 = the webhook is
 * disabled; anything else is retried with exponential backoff and jitter until `maxAttempts`.
 */

/** WEBHOOK_* and ALERT_SWEEP_MS (core/config.ts): `retryBaseMs` doubles per attempt up to RETRY_CAP_MS. */
export type EventsOptions = Config['webhooks'];

export const RETRY_CAP_MS = 4 * 3_600_000;

/** The cache of `Events.watched`: a watch found is kept 5 s; so is a "nothing" without the store's signal. */
const WATCHED_TTL_MS = 5_000;
/** A "nothing" with the signal wired: until some account gains a watch, at most ten minutes (a bound, not the
 *  mechanism: a lost notification is caught by the signals' poll within a second). */
const UNWATCHED_SIGNALLED_TTL_MS = 600_000;
const WATCHING = -1;

/** Delay before attempt `attempt + 1` (attempt ≥ 1 made), with ±20 % jitter. */
export function retryDelayMs(attempt: number, baseMs: number, rand = Math.random): number {
  const d = Math.min(RETRY_CAP_MS, baseMs * 2 ** (attempt - 1));
  return Math.round(d * (0.8 + 0.4 * rand()));
}

export class Events implements WebhookEvents {
  private readonly agent: Agent;
  /**
   * Calls admitted and not yet settled or released (`account/requestId` → key), oldest first, at most
   * MAX_OPEN_CALLS (the oldest is dropped: its spend event is then skipped). Not an LRU cache: lru-cache
   * clears its whole preallocated store (O(max)) when its last entry is deleted, which a gateway with one call
   * at a time did on every settle (≈ 0.3 ms per call; docs/benchmarks.md, "The paid-path cuts"). A
   * RenewingMap: a set and a delete per call (core/renewing-map.ts).
   */
  private readonly calls = new RenewingMap<string, KeyMeta>();
  /**
   * account id → WATCHING, or the `generation` at which the store said the account watches nothing. A watch
   * found is kept WATCHED_TTL_MS (a webhook deleted elsewhere only costs a look that finds nothing); a
   * "nothing" is kept while no account anywhere gained a watch (`watchesChanged`, the store's `watches`
   * signal), or UNWATCHED_TTL_MS without the signal. So an account idle for longer than a few seconds does not
   * cost a store read on each of its calls, as it did with one 5 s lifetime for both (10,000 keys in turn).
   */
  private readonly watched: LRUCache<string, number>;
  private generation = 0;
  /** Tells every process sharing the store that an account gained a watch (wired to the store's signals). */
  private announce: (() => Promise<unknown>) | undefined;
  private timers: NodeJS.Timeout[] = [];
  private running = new Set<Promise<unknown>>();
  private polling = false;
  private closed = false;
  /** Aborted by close(): deliveries in flight stop waiting for their receiver. */
  private readonly stopping = new AbortController();

  /** `clock`: what the `watched` cache's lifetimes are read from (tests; default `performance`). */
  constructor(
    readonly store: WebhookStore,
    private readonly opts: EventsOptions,
    private readonly log: Logger,
    clock?: { now(): number },
  ) {
    this.agent = guardedAgent(opts.allowPrivateUrls, opts.timeoutMs);
    this.watched = lazyLru<string, number>(100_000, {
      ttl: WATCHED_TTL_MS,
      // A given clock is read at every look (lru-cache otherwise keeps a reading for 1 ms of real time).
      ...(clock !== undefined ? { perf: clock, ttlResolution: 0 } : {}),
    });
  }

  /** Marks an account as having watched keys (after a webhook or alert change on this process, once stored),
   *  and tells the other processes to look at their "watches nothing" answers again. */
  touched(accountId: string): void {
    this.watched.set(accountId, WATCHING);
    this.generation++;
    this.announce?.().catch((err: unknown) => this.log.warn({ err }, 'watches signal failed'));
  }

  /**
   * Wires the cross-process signal: `announce` tells every process an account gained a watch (each runs
   * `watchesChanged`); with it, a "watches nothing" answer is kept until the next one.
   */
  signalWith(announce: () => Promise<unknown>): void {
    this.announce = announce;
  }

  /** Some account gained a watch (on any process): every "watches nothing" answer is stale. O(1). */
  watchesChanged(): void {
    this.generation++;
  }

  /** What the cache knows: true, false, or undefined (ask the store). */
  private cached(accountId: string): boolean | undefined {
    const c = this.watched.get(accountId);
    if (c === WATCHING) return true;
    return c === this.generation ? false : undefined;
  }

  private async hasWatched(accountId: string): Promise<boolean> {
    const c = this.cached(accountId);
    if (c !== undefined) return c;
    // Tagged with the generation before the read: a watch gained while the store answered makes it stale.
    const at = this.generation;
    const v = await this.store.hasWatchedKeys(accountId);
    if (v) this.watched.set(accountId, WATCHING);
    else
      this.watched.set(accountId, at, {
        ttl: this.announce !== undefined ? UNWATCHED_SIGNALLED_TTL_MS : WATCHED_TTL_MS,
      });
    return v;
  }

  private background(stage: string, fn: () => Promise<unknown>): void {
    if (this.closed) return;
    const p = fn()
      .catch((err: unknown) => {
        eventErrorsTotal.inc({ stage });
        this.log.warn({ err, stage }, 'event step failed');
      })
      .finally(() => this.running.delete(p));
    this.running.add(p);
  }

  spent(key: KeyMeta, chargedMsat: number, balanceMsat: number): void {
    // Most accounts watch nothing: known from the cache, no background step (closure, promises) per paid call.
    if (this.cached(key.accountId) === false) return;
    this.background('spend', async () => {
      if (!(await this.hasWatched(key.accountId))) return;
      await this.store.onSpend(
        { accountId: key.accountId, keyId: key.keyId, parentKeyId: key.parentKeyId },
        chargedMsat,
        balanceMsat,
      );
    });
  }

  /** A batch was settled: `batch.completed` to the key's webhooks (once per event id). */
  async batchCompleted(
    key: { accountId: string; keyId: string; parentKeyId: string | null },
    eventId: string,
    data: Record<string, unknown>,
  ): Promise<void> {
    if (!(await this.hasWatched(key.accountId))) return;
    await this.store.onEvent(key, 'batch.completed', eventId, data);
  }

  balance(accountId: string, balanceMsat: number, change: BalanceChange): void {
    this.background('balance', async () => {
      if (!(await this.hasWatched(accountId))) return;
      await this.store.onBalance(accountId, balanceMsat, change);
    });
  }

  /**
   * New child keys of an account with destinations: their expiry is watched, so key.expired reaches the
   * parent's webhooks even when the child registers nothing. Asks the store, not the few-seconds cache: a
   * webhook registered on another process just now counts.
   */
  private childKeys(keys: KeyMeta[]): void {
    const accountId = keys[0]?.accountId;
    if (accountId === undefined || !keys.some((k) => keyExpiryMs(k) !== null)) return;
    this.background('keys', async () => {
      if (!(await this.store.hasWatchedKeys(accountId))) return;
      await this.store.watchKeys(keys.map(eventKeyOf));
    });
  }

  /** The ledger with the event hook: the same object, its money steps (admit, settle, release, credit, commitWithdrawal, createChildKeys) observed. */
  watchLedger(ledger: Ledger): Ledger {
    const calls = this.calls;
    const hooks: Partial<Ledger> = {
      admit: async (input) => {
        const r = await ledger.admit(input);
        if (r.ok) {
          if (calls.size >= MAX_OPEN_CALLS) calls.delete(calls.firstKey()!);
          calls.set(`${r.accountId}/${input.requestId}`, r.key);
        }
        // First use after the expiry: fire key.expired now rather than at the next sweep.
        else if (r.code === 'key_expired') this.background('sweep', () => this.store.sweepExpired());
        return r;
      },
      settle: async (input) => {
        const r = await ledger.settle(input);
        const id = `${input.accountId}/${input.requestId}`;
        const key = calls.get(id);
        calls.delete(id);
        if (r.ok && !r.replay && key) this.spent(key, r.chargedMsat, r.balanceMsat);
        return r;
      },
      release: async (input) => {
        calls.delete(`${input.accountId}/${input.requestId}`);
        return ledger.release(input);
      },
      credit: async (input) => {
        const r = await ledger.credit(input);
        if (r.ok && !r.replay) this.balance(r.accountId, r.balanceMsat, 'credit');
        return r;
      },
      commitWithdrawal: async (ref) => {
        const r = await ledger.commitWithdrawal(ref);
        if (r.ok && !r.replay) this.balance(ref.accountId, r.balanceMsat, 'debit');
        return r;
      },
      createChildKeys: async (input) => {
        const r = await ledger.createChildKeys(input);
        if (r.ok && r.keys.length > 0) {
          this.childKeys(r.keys);
          if (r.feeMsat > 0) this.balance(r.keys[0]!.accountId, r.parentBalanceMsat, 'debit');
        }
        return r;
      },
    };
    const own = hooks as Record<PropertyKey, unknown>;
    return new Proxy(ledger, {
      get(target, prop) {
        const h = own[prop];
        if (h !== undefined) return h;
        const v = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  }

  start(): void {
    if (this.opts.pollMs > 0) {
      const t = setInterval(() => this.background('outbox', () => this.poll()), this.opts.pollMs);
      t.unref();
      this.timers.push(t);
    }
    if (this.opts.alertSweepMs > 0) {
      const t = setInterval(
        () => this.background('sweep', () => this.store.sweepExpired()),
        this.opts.alertSweepMs,
      );
      t.unref();
      this.timers.push(t);
    }
  }

  /** One outbox pass (also called by tests). */
  async poll(): Promise<number> {
    if (this.polling || this.closed) return 0;
    this.polling = true;
    try {
      const due = await this.store.claimDue(Date.now(), this.opts.timeoutMs + 5_000, 50);
      await Promise.all(due.map((d) => this.deliver(d)));
      return due.length;
    } catch (err) {
      eventErrorsTotal.inc({ stage: 'outbox' });
      this.log.warn({ err }, 'webhook outbox pass failed');
      return 0;
    } finally {
      this.polling = false;
    }
  }

  private async deliver(d: Delivery): Promise<void> {
    const at = Date.now();
    let status: number | null = null;
    let error: string | null = null;
    try {
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'prepaid-model-gateway-webhooks',
        ...signatureHeaders(d.secret, d.msgId, d.body, Math.floor(at / 1000)),
      };
      const r = await request(d.url, {
        method: 'POST',
        headers,
        body: d.body,
        dispatcher: this.agent,
        headersTimeout: this.opts.timeoutMs,
        bodyTimeout: this.opts.timeoutMs,
        signal: AbortSignal.any([AbortSignal.timeout(this.opts.timeoutMs), this.stopping.signal]),
      });
      status = r.statusCode;
      await r.body.dump().catch(() => undefined);
      if (status < 200 || status >= 300) error = `HTTP ${status}`;
    } catch (err) {
      error = (err as Error).message?.slice(0, 200) || 'delivery failed';
      // The cause names the guard's refusal (DNS rebinding) or the network error.
      const cause = (err as { cause?: Error }).cause;
      if (cause?.message) error = `${error}: ${cause.message}`.slice(0, 300);
      if (this.stopping.signal.aborted) error = 'no answer before the gateway shut down';
    }
    const attempt = d.attempts + 1;
    let outcome: AttemptOutcome;
    if (status !== null && status >= 200 && status < 300) {
      outcome = { atMs: at, status, error: null, retryAtMs: null, disable: false };
      webhookDeliveriesTotal.inc({ outcome: 'delivered' });
    } else if (status === 410) {
      outcome = { atMs: at, status, error, retryAtMs: null, disable: true };
      webhookDeliveriesTotal.inc({ outcome: 'disabled' });
    } else if (attempt >= this.opts.maxAttempts) {
      outcome = { atMs: at, status, error, retryAtMs: null, disable: false };
      webhookDeliveriesTotal.inc({ outcome: 'failed' });
    } else {
      outcome = {
        atMs: at,
        status,
        error,
        retryAtMs: at + retryDelayMs(attempt, this.opts.retryBaseMs),
        disable: false,
      };
      webhookDeliveriesTotal.inc({ outcome: 'retry' });
    }
    await this.store.finishAttempt(d, outcome);
  }

  /**
   * Stops the worker. A delivery still waiting for its receiver (up to WEBHOOK_TIMEOUT_MS) is cut short and
   * recorded as a failed attempt, retried with the usual backoff by whichever process polls the outbox next:
   * shutdown does not wait for a slow or hung receiver, and the delivery is not left claimed.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers.splice(0)) clearInterval(t);
    this.stopping.abort();
    await Promise.allSettled([...this.running]);
    await this.agent.close().catch(() => undefined);
  }
}
