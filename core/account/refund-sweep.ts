import type { AuditTrail } from '../audit/types.js';
import type { Config } from '../config.js';
import { isGatewayError } from '../errors.js';
import { keyExpiryMs } from '../events/types.js';
import type { KeyMeta, KeyRef, Ledger } from '../ledger/types.js';
import type { Logger } from '../log.js';
import type { StoreConnection } from '../store/connection.js';
import { type JobQueue, RedisJobQueue, SqliteJobQueue } from '../store/job-queue.js';
import type { WalletService } from '../wallet/types.js';
import type { Money } from './credit-token.js';
import { LightningAddresses } from './lightning-address.js';
import { type LightningRefundResult, refundToLightning } from './lightning-refund.js';
import type { RefundSweep as RefundSweepApi } from './types.js';

/**
 * The expired-key sweep (EXPIRED_KEY_SWEEP, default on): a key that expires with a balance and a refund
 * address is paid there, through the same Lightning refund as POST /v1/wallet/refund (lightning-refund.ts).
 *
 * Durable and once across processes: each key with a refund address and an expiry has one job in the money
 * store's job queue (core/store/job-queue.ts, the batch watcher's mechanism), due at the key's expiry and
 * written whenever its refund address is set (`schedule`). Every process runs the sweep; a job claim
 * (SWEEP_CLAIM_MS, a minute) lasts longer than a refund takes, so one process works on a key at a time, and a
 * process that dies mid-refund leaves the job to be claimed again when the claim runs out. The refund itself is idempotent where it
 * matters: it holds everything available first, and a hold or melt a crash left open keeps the balance held
 * until the wallet's recovery pass decides it, so a second pass finds nothing to pay twice (a key with money
 * still held is looked at again later, not dropped).
 *
 * Outcomes: paid → audited (method SWEEP, status 200) and the job removed; nothing to pay (no balance, or less
 * than one sat plus the fee reserve), address cleared, key deleted or no longer expiring → removed (the first
 * two audited with their status); another payout of the account undecided (a hold still open, or
 * `payout_in_progress`) → looked at again at the next pass, attempts unchanged; any other failure → audited and
 * retried with exponential backoff from EXPIRED_KEY_SWEEP_MS: up to six hours for the address's side (unreachable,
 * refused), up to 16 passes for the mint's or the store's (`mint_unavailable`, `service_unavailable`,
 * `store_unavailable`).
 */

export interface SweepJob {
  /** `sweep:<key id>`: one job per key. */
  id: string;
  keyId: string;
  /** Failed attempts so far (the backoff's exponent). */
  attempts: number;
}

export interface RefundSweepOptions {
  jobs: JobQueue<SweepJob>;
  money: Money;
  addresses: LightningAddresses;
  log: Logger;
  /** How often due jobs are claimed, and the first retry delay (EXPIRED_KEY_SWEEP_MS). */
  everyMs: number;
  audit?: AuditTrail | undefined;
  /** Called after each paid sweep (tests, metrics). */
  onPaid?: (keyId: string, r: LightningRefundResult) => void;
  now?: () => number;
}

const MAX_BACKOFF_MS = 6 * 3_600_000;
/**
 * The mint (or the store) away is the operator's side and short-lived next to a user's unreachable address: those
 * retries double up to 16 passes (16 min at the default EXPIRED_KEY_SWEEP_MS), not six hours, so a key that expired
 * during an outage is paid soon after the mint is back.
 */
const TRANSIENT = new Set(['mint_unavailable', 'service_unavailable', 'store_unavailable']);
export const TRANSIENT_BACKOFF_PASSES = 16;
/**
 * How long a claimed job stays invisible to the other processes: longer than a refund takes (LNURL requests,
 * melt quote, melt, each bounded by its timeout), short enough that a job whose process was killed mid-refund
 * is claimed again within a minute. A refund still running when its claim runs out is safe: the second process
 * finds the hold (or is refused `payout_in_progress`) and looks again at its next pass.
 */
export const SWEEP_CLAIM_MS = 60_000;
/** Codes after which a retry cannot help: the job ends. */
const FINAL = new Set([
  'refund_below_fee_reserve',
  'payment_required',
  'invalid_api_key',
  'child_key_forbidden',
]);

export const sweepJobId = (keyId: string): string => `sweep:${keyId}`;

export class RefundSweep implements RefundSweepApi {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private readonly now: () => number;

  constructor(private readonly opts: RefundSweepOptions) {
    this.now = opts.now ?? Date.now;
  }

  /**
   * A key's refund address was set: its job is due at its expiry (replacing any earlier one). A key that never
   * expires, a child key or a cleared address needs none (a job left from before ends itself when it runs).
   */
  async schedule(key: KeyMeta): Promise<void> {
    const expiry = keyExpiryMs(key);
    if (key.isChild || key.refundAddress === null || expiry === null) return;
    await this.opts.jobs.put({ id: sweepJobId(key.keyId), keyId: key.keyId, attempts: 0 }, expiry);
  }

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.tick()
        .catch((err: unknown) => this.opts.log.warn({ err }, 'expired-key sweep pass failed'))
        .finally(() => {
          this.running = undefined;
        });
    }, this.opts.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /**
   * One pass: claims the due jobs one at a time and works on each (also called by tests). Returns how many were
   * claimed. One at a time: a job is claimed when its turn comes, so its claim is not spent waiting behind the
   * others' refunds, and a process killed mid-pass strands one job for SWEEP_CLAIM_MS, not all it had claimed.
   */
  async tick(max = 20): Promise<number> {
    // Due as of the pass's start: a job put back for a later look during the pass waits for the next one.
    const at = this.now();
    let claimed = 0;
    while (claimed < max) {
      const [job] = await this.opts.jobs.claim(at, SWEEP_CLAIM_MS, 1);
      if (job === undefined) break;
      claimed++;
      try {
        await this.handle(job);
      } catch (err) {
        // The store was away: left claimed, tried again when the claim runs out.
        this.opts.log.warn({ err, keyId: job.keyId }, 'expired-key sweep step failed');
      }
    }
    return claimed;
  }

  private async handle(job: SweepJob): Promise<void> {
    const { jobs, money } = this.opts;
    const ref = await money.ledger.findKeyById(job.keyId);
    const info = ref === null ? null : await money.ledger.getKeyInfo(ref);
    if (ref === null || info === null || info.key.isChild || info.key.refundAddress === null) {
      await jobs.remove(job.id);
      return;
    }
    const expiry = keyExpiryMs(info.key);
    const now = this.now();
    if (expiry === null) {
      await jobs.remove(job.id);
      return;
    }
    if (expiry > now) {
      await jobs.put({ ...job, attempts: 0 }, expiry);
      return;
    }
    if (info.account.reservedMsat > 0) {
      // A hold or call of the key is still open (a refund a crash left to recovery): look again later.
      await jobs.put(job, now + this.opts.everyMs);
      return;
    }
    if (info.availableMsat < 1000) {
      await jobs.remove(job.id);
      return;
    }
    try {
      const r = await refundToLightning(money, this.opts.addresses, {
        credential: ref,
        address: info.key.refundAddress,
      });
      this.audit(ref, job, 200, r.amountMsat + r.feeMsat);
      this.opts.log.info(
        { keyId: job.keyId, amountMsat: r.amountMsat, feeMsat: r.feeMsat },
        'expired key swept to its refund address',
      );
      this.opts.onPaid?.(job.keyId, r);
      await jobs.remove(job.id);
    } catch (err) {
      const code = isGatewayError(err) ? err.code : 'internal_error';
      this.audit(ref, job, isGatewayError(err) ? err.status : 500, 0);
      if (code === 'payout_in_progress') {
        // Another payout of the account (its holder's own refund, placed since the check above) is undecided:
        // not a failure of this sweep. Looked at again at the next pass, as for a hold still open, with no
        // backoff (which would grow to hours while that payout is decided in seconds).
        await jobs.put(job, now + this.opts.everyMs);
        return;
      }
      if (FINAL.has(code)) {
        this.opts.log.info({ keyId: job.keyId, code }, 'expired key not swept: nothing a retry can pay');
        await jobs.remove(job.id);
        return;
      }
      const attempts = job.attempts + 1;
      const cap = TRANSIENT.has(code) ? this.opts.everyMs * TRANSIENT_BACKOFF_PASSES : MAX_BACKOFF_MS;
      const delay = Math.min(cap, MAX_BACKOFF_MS, this.opts.everyMs * 2 ** Math.min(attempts - 1, 20));
      this.opts.log.warn({ keyId: job.keyId, code, attempts, retryInMs: delay }, 'expired-key sweep failed');
      await jobs.put({ ...job, attempts }, now + delay);
    }
  }

  /** The sweep's record: what left the key (amount + fee) when paid, the error's status otherwise. */
  private audit(ref: KeyRef, job: SweepJob, status: number, costMsat: number): void {
    this.opts.audit?.record({
      atMs: this.now(),
      requestId: `${job.id}:${job.attempts}`,
      subject: { credential: ref },
      endpoint: '/v1/wallet/refund',
      method: 'SWEEP',
      ip: '',
      userAgent: undefined,
      costMsat,
      status,
    });
  }
}

/**
 * The refund services of the composition root: the Lightning address resolver (always), and with a store, a
 * ledger and a wallet the sweep's job queue, started when EXPIRED_KEY_SWEEP is on (jobs are scheduled either
 * way, so turning the sweep on later pays the keys that expired meanwhile).
 */
export function startRefundServices(
  services: {
    config: Config;
    log: Logger;
    ledger?: Ledger | undefined;
    wallet?: WalletService | undefined;
    audit?: AuditTrail | undefined;
  },
  store: StoreConnection | undefined,
): { addresses: LightningAddresses; sweep: RefundSweep | undefined; close(): Promise<void> } {
  const { config, ledger, wallet } = services;
  const addresses = new LightningAddresses({
    allowPrivate: config.refunds.allowPrivateAddresses,
    timeoutMs: config.refunds.timeoutMs,
  });
  if (store === undefined || ledger === undefined || wallet === undefined) {
    return { addresses, sweep: undefined, close: () => addresses.close() };
  }
  const jobs =
    store.kind === 'redis'
      ? new RedisJobQueue<SweepJob>(store.redis, store.prefix, 'refund-sweep')
      : new SqliteJobQueue<SweepJob>(store.db, 'refund_sweep_jobs');
  const sweep = new RefundSweep({
    jobs,
    money: { ledger, wallet },
    addresses,
    log: services.log,
    everyMs: config.refunds.sweepMs,
    audit: services.audit,
  });
  if (config.refunds.sweep) sweep.start();
  return {
    addresses,
    sweep,
    async close() {
      await sweep.stop();
      await addresses.close();
    },
  };
}
