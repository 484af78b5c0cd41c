import { randomUUID } from 'node:crypto';
import { lazyLru } from '../lru.js';
import { RenewingMap } from '../renewing-map.js';
import { type Finished, FinishedCalls } from './finished-calls.js';
import { resolveCredential } from './keys.js';
import { ownerOf, PROCESS_ID } from './owner.js';
import { RecentIds } from './recent-ids.js';
import { modelAllowed } from './rules.js';
import type {
  AbortResult,
  AdmitInput,
  AdmitRefusal,
  AdmitResult,
  ChildKeysInput,
  ChildKeysResult,
  CommitRef,
  CommitResult,
  ConservationReport,
  CountRequestInput,
  CountRequestResult,
  Credential,
  CreditInput,
  CreditResult,
  DepositKeyInput,
  DepositKeyResult,
  HoldInput,
  HoldRef,
  HoldResult,
  KeyChangeResult,
  KeyInfo,
  KeyLookup,
  KeyMeta,
  KeyRef,
  KeyTarget,
  KeyUpdate,
  LeaseCall,
  LeaseInput,
  LeaseRecall,
  LeaseResult,
  Ledger,
  OtherLease,
  Page,
  RateLimits,
  RecallKind,
  ReleaseInput,
  ReleaseResult,
  SettleInput,
  SettleResult,
  TransactionPage,
} from './types.js';

/**
 * The in-memory side of credit leases (docs/ledger.md, "Credit leases"): a `Ledger` that wraps a store's
 * ledger and admits and settles calls against a slice of each key's balance leased with `Ledger.lease`.
 *
 * - admit: when the key's lease covers the call's whole bound (and a requests/min slot, the hour's tokens,
 *   a concurrency slot and the model allow-list say yes), the call is admitted in memory with no store round
 *   trip. Otherwise the lease is opened or renewed (one step) and tried again; if it still cannot cover the
 *   call, the lease is shrunk to what its open calls need and the call takes the exact per-call path
 *   (`admit` of the store), so a nearly empty key is admitted exactly as without leases and spends its last
 *   msat.
 * - settle / release of a call admitted in memory: computed in memory (charge = min(cost, reserved + what the
 *   lease still has free)), queued, and reported in the next step. Steps run at most every `flushMs` while
 *   calls are queued, when the lease runs low, at half the TTL while calls are open, and before any read
 *   or money change of the account through this object (read-your-writes in this process).
 * - A lease is returned after `idleMs` without calls, and at `close()`.
 * - One step per lease at a time; admissions wait while a step is in flight (so the slots and money the step
 *   returns are never also spent locally). A failed step is resent unchanged (same seq: the store answers a
 *   step it already applied from its record, so a report is never charged twice).
 *
 * What a killed process loses: the calls settled in memory and not yet reported (≤ one flush interval), and
 * nothing else — its lease expires after `ttlMs` or is released by releaseOrphans.
 */

export interface LeaseOptions {
  /** Report queued calls at most this often (ms). */
  flushMs: number;
  /** Return a key's lease this long after its last call (ms). */
  idleMs: number;
  /** Lease expiry without a step (ms). */
  ttlMs: number;
  /** Clock, for tests. */
  now?: () => number;
  /** Called when a background step fails (the step is resent at the next tick). */
  onError?: (err: unknown) => void;
  /**
   * Longest wait for other processes to answer a recall (ms). Default: `idleMs`. A call still refused for money
   * after a wait that ran out answers `balance_in_transit` (retry later), never `payment_required`.
   */
  recallWaitMs?: number;
  /**
   * How often a recall in progress reads the store for answers besides the signal (`answered`): a backstop for a
   * lost notification or a process that does not signal. Default: 100 ms with `answered`, else
   * min(20, flushMs / 2) ms.
   */
  recallPollMs?: number;
  /**
   * How often a process that holds a lease reads the store for recalls of other processes (one store read).
   * With `notify` the process is on the store's signals, whose `recall` wakes it at once (`wake()`): the read is
   * then only the backstop for a lost notification, and the signals' own poll (1 s on Redis) wakes it too.
   * Default: 250 ms with `notify`, else min(flushMs, 50) ms.
   */
  recallTickMs?: number;
  /** This process's id in lease ids (tests run several "processes" in one). Default: PROCESS_ID. */
  processId?: string;
  /**
   * Called after this process recalled other processes' leases: tells them at once (core/store/signals.ts,
   * `recall`), and their `wake()` answers without waiting for the next recall poll.
   */
  notify?: () => void;
  /**
   * Called after this process answered a recall (its leases of the account stepped: reported, given back or
   * closed): tells every process at once (core/store/signals.ts, `recall-answer`), and the recalling process's
   * `recallAnswered()` reads the answers without waiting for its next poll.
   */
  answered?: () => void;
}

/** What a recall came to (see recallOthers). */
interface RecallOutcome {
  /** Whether other processes held leases of the account at the recall. */
  any: boolean;
  /** Their leases that were neither stepped after the recall nor gone when the wait ran out. */
  unanswered: OtherLease[];
}

export const DEFAULT_LEASE_OPTIONS: LeaseOptions = { flushMs: 50, idleMs: 1000, ttlMs: 10_000 };

/** Slice wanted: this many times the largest bound seen recently (at least). */
const SLICE_CALLS = 16;
/** Calls reported per step at most (bounds the script's arguments and the step's time). */
const MAX_BATCH = 256;
/** Requests/min slots wanted per step. */
const SLOT_BATCH = 64;
/** Recalls are polled overlapping this much (clock differences between processes, late writes). */
const RECALL_SLACK_MS = 1000;
/** Recalls are polled at least this often while this process holds a lease (one store read). */
const RECALL_POLL_MS = 50;
/**
 * The same poll when the store's signals wake this process for each recall: a backstop, 4 reads a second
 * instead of 20, still well inside a recall's default wait (LEASE_IDLE_MS, 1 s). Measured at 1,000 paid calls
 * a second on Redis (bench/profile/scavenges.sh -p paid, three rounds): 200–204 → 193–194 KB promoted by each
 * scavenge (docs/benchmarks.md, "The recall poll").
 */
const RECALL_BACKSTOP_MS = 250;
/** How many finished and exactly admitted request ids a process remembers, to refuse their repeats. */
const RECENT_IDS = 10_000;
/** How many keys without a lease record a process remembers the last call of (the cold rule). */
const COLD_KEYS = 20_000;

/**
 * Caps for calls admitted in memory while a renewal step is in flight. The step cannot leave the lease less
 * than it asked for up to what the lease held, so calls within these caps are covered whatever it answers:
 * - money: it asks for at least what the slice has left after the reported calls, and the store grants
 *   `min(want, left + free)`, never below `left`;
 * - requests/min: the slots granted this minute and not used go back, then `min(wantRequests, what the key has
 *   left)` is granted, never below `min(wantRequests, the unused)`: `usedCap` = the used slots it reports plus
 *   that;
 * - concurrency: the store grants `max(open, min(wantConcurrent, limit − the key's other open calls))`, and
 *   the others leave at least the slots this lease held: `openCap` = `min(conslots, wantConcurrent)`.
 * Only for the step's first `flushMs` (`until`): a step that takes longer meets a store in trouble (a failover,
 * a lost connection whose commands are resent), and the store may release the lease for its TTL before the calls
 * admitted meanwhile are reported, which then are charged only from what is free (an undercharge). Past that,
 * admissions wait for the answer as before, so a slow store adds at most one flush interval of such calls.
 */
interface Flight {
  usedCap: number;
  openCap: number;
  until: number;
}

interface Pending {
  seq: number;
  calls: LeaseCall[];
  callsMsat: number;
  used: number;
  close: boolean;
}

interface KeyLease {
  credential: Credential;
  accountId: string;
  keyHash: string;
  limits: RateLimits;
  id: string | null;
  seq: number;
  granted: number;
  /** Charges settled in memory and not yet confirmed by a step. */
  unreportedMsat: number;
  queue: LeaseCall[];
  /** What each queued call was charged in memory (parallel to `queue`). */
  queueCharges: number[];
  /** In-memory reservations of open calls (msat by request id). */
  open: RenewingMap<string, number>;
  /** Balance after the last step. */
  balance: number;
  openMsat: number;
  slots: number;
  slotWindow: number;
  usedSlots: number;
  counted: number;
  tokensLeft: number;
  localTokens: number;
  otherOpen: number;
  /** Concurrency slots of the key this lease holds in the store (calls it may have open in memory). */
  conslots: number;
  /** Most calls open at once since the last step (slot sizing). */
  peakOpen: number;
  key: KeyMeta | null;
  busy: Promise<void> | null;
  pending: Pending | null;
  /**
   * While a renewal step is in flight (one that keeps or grows the slice: not a close, not a shrink, not a
   * resend), calls are still admitted in memory within what that step cannot take away (see tryLocal); null
   * otherwise, and then admissions wait for the step.
   */
  flight: Flight | null;
  lastCall: number;
  lastStep: number;
  /** Calls admitted in memory since the last step (slice sizing). */
  sinceStep: number;
  /** Callers waiting in admit's slow path, and the slice's growth factor (slice sizing). */
  waiting: number;
  scale: number;
  /** The renewal callers in admit's slow path share (see renew). */
  renewal: Promise<LeaseResult | null> | null;
  /** Largest bound seen (slice sizing). */
  maxBound: number;
  /** Until then this key goes the exact per-call way (lease refused or too small). */
  exactUntil: number;
  /** When the store releases the lease unless a step renews it (the step's clock + ttl). */
  expiresAt: number;
}

export class LeasingLedger implements Ledger {
  readonly kind: Ledger['kind'];
  private readonly leases = new Map<string, KeyLease>();
  /** requestId → its lease, for calls admitted in memory. */
  private readonly calls = new RenewingMap<string, KeyLease>();
  /**
   * Results of calls finished in memory, for idempotent repeats (core/ledger/finished-calls.ts: columns in a
   * ring, no object per call), and ids admitted the exact way (a repeat must not be admitted again in memory):
   * the last RECENT_IDS of each. Both are full in steady state, so each add drops the oldest: the ring deletes
   * it by name in O(1), where a Map or Set dropping its first key rescans the holes earlier deletes left at its
   * front (≈ 6.5 µs per add at 10,000 entries, measured).
   */
  private readonly finished = new FinishedCalls(RECENT_IDS);
  private readonly exactIds = new RecentIds(RECENT_IDS);
  /**
   * Keys without a lease record: when each was last called (admit's cold rule). Bounded: a key dropped from it
   * is cold, which is what it would be by then unless more than COLD_KEYS other keys were called since.
   */
  private readonly coldCalls = lazyLru<string, number>(COLD_KEYS);
  /**
   * Open calls admitted the exact way, with their reservations (bounded): an overrun at settle first returns
   * this process's free slices of the account to the store, so the call draws on them as it would without
   * leases (see settle).
   */
  private readonly exactOpen = new RenewingMap<string, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly recallTimer: NodeJS.Timeout;
  private readonly now: () => number;
  private closed = false;
  /** Recalls: polled from `recallsFrom` (overlapping by RECALL_SLACK_MS); those already answered. */
  private recallsFrom: number;
  private polling = false;
  private pollAgain = false;
  private readonly answered = new Map<string, number>();
  /** Recalls of this process waiting for answers: woken by `recallAnswered()` (another process answered). */
  private readonly waiting = new Set<() => void>();

  constructor(
    readonly inner: Ledger,
    private readonly opts: LeaseOptions = DEFAULT_LEASE_OPTIONS,
  ) {
    this.kind = inner.kind;
    this.now = opts.now ?? Date.now;
    this.recallsFrom = this.now();
    this.timer = setInterval(() => this.tick(), opts.flushMs);
    this.timer.unref();
    this.recallTimer = setInterval(
      () => this.recallTick(),
      opts.recallTickMs ?? (opts.notify ? RECALL_BACKSTOP_MS : Math.min(opts.flushMs, RECALL_POLL_MS)),
    );
    this.recallTimer.unref();
  }

  // ------------------------------------------------------------------------------------------ hot path

  /** Straight to the store: its requests/min counter already includes the slots this process leased. */
  countRequest(input: CountRequestInput): Promise<CountRequestResult> {
    return this.inner.countRequest(input);
  }

  async admit(input: AdmitInput): Promise<AdmitResult> {
    const c = resolveCredential(input.credential);
    if (!c || this.closed) return this.inner.admit(input);
    if (
      this.calls.has(input.requestId) ||
      this.finished.has(input.requestId) ||
      this.exactIds.has(input.requestId)
    )
      return { ok: false, code: 'duplicate_request' };
    const now = input.now ?? this.now();
    let l = this.leases.get(c.keyHash);
    if (!l) {
      // A cold key (no lease record, no call for idleMs or ever) goes the exact way: opening a lease, reporting
      // the call and returning the lease would cost three store steps for one call where the exact path costs
      // two (admit, settle). Only its call's time is kept (`coldCalls`), not a lease record: a process serving
      // many keys each called now and then would otherwise hold, walk every tick and collect one per key.
      // Its next call within idleMs opens a lease.
      const last = this.coldCalls.get(c.keyHash);
      if (
        last === undefined ||
        now - last >= this.opts.idleMs ||
        input.exactPath === true ||
        !this.leasable(input)
      ) {
        this.coldCalls.set(c.keyHash, now);
        return this.exact(c.accountId, c.keyHash, input);
      }
      this.coldCalls.delete(c.keyHash);
      l = this.newLease(input.credential, c.accountId, c.keyHash, input.limits);
      l.lastCall = last;
      this.leases.set(c.keyHash, l);
    }
    l.limits = input.limits;
    l.maxBound = Math.max(l.maxBound, input.maxMsat);
    // A key whose lease record outlived its lease (returned, refused or never opened) is cold again as above.
    const cold = !l.id && !l.busy && l.open.size === 0 && now - l.lastCall >= this.opts.idleMs;
    l.lastCall = now;
    if (input.exactPath === true || cold || now < l.exactUntil || !this.leasable(input))
      return this.exact(l.accountId, l.keyHash, input);
    const fast = this.tryLocal(l, input, now);
    if (fast) return fast;
    // Open or renew the lease and try again. Under contention (other callers waiting on the same lease,
    // calls settled while a step was in flight) a renewal's headroom may be used before this caller runs:
    // retry while the store still has free money; go the exact way once it has not.
    let tight = false;
    l.waiting++;
    try {
      for (let attempt = 0; attempt < 6; attempt++) {
        await this.settled(l);
        const local = this.tryLocal(l, input, this.now());
        if (local) return local;
        if (tight || attempt === 5 || this.now() < l.exactUntil) break;
        // A lease is opened only when it covers this call's whole bound; else the exact path is as good.
        const r = await this.renew(l, l.id ? 0 : input.maxMsat);
        if (r && !r.ok) {
          // The store refuses a lease for this key now (no money for one, a limit, a limited child…): the
          // exact path gives the precise answer.
          l.exactUntil = now + (r.code === 'lease_unsupported' ? 60_000 : this.opts.idleMs);
          return this.exact(l.accountId, l.keyHash, input);
        }
        if (
          r &&
          (!r.open ||
            r.availableMsat < input.maxMsat ||
            r.requestSlots === 0 ||
            r.concurrentSlots <= l.open.size)
        )
          tight = true;
      }
    } finally {
      l.waiting--;
    }
    // Money (or requests) are tight: the exact path for a while, which reserves what is left and gives the
    // precise refusal.
    if (tight) l.exactUntil = now + this.opts.idleMs;
    return this.exact(l.accountId, l.keyHash, input);
  }

  /**
   * The exact per-call admission, after giving back what this process's lease holds beyond its open calls
   * (money and requests/min slots), so the lease never makes the exact path refuse what the key still has.
   */
  private async exact(accountId: string, keyHash: string, input: AdmitInput): Promise<AdmitResult> {
    let recalls = 0;
    let recalledAny = false;
    let triedAfterGone = false;
    /** Leases of other processes that did not answer a recall within its wait (they may hold the money). */
    let inTransit: OtherLease[] = [];
    for (let attempt = 0; ; attempt++) {
      // The key's lease record as it is now: another call of the key may have opened a lease meanwhile.
      const l = this.leases.get(keyHash);
      if (l && (l.id || l.pending || l.queue.length > 0)) await this.step(l, l.open.size === 0, 0, true);
      const r = await this.inner.admit(input);
      if (r.ok) {
        this.exactIds.add(input.requestId);
        this.exactOpen.set(input.requestId, r.reservedMsat);
        if (this.exactOpen.size > 100_000) this.exactOpen.delete(this.exactOpen.firstKey()!);
        return r;
      }
      if (r.code !== 'payment_required' && r.code !== 'rate_limit_exceeded') return r;
      // A recall's wait ran out and the store still refuses: the money may be in those leases. Not a 402.
      if (inTransit.length > 0) return r.code === 'payment_required' ? this.inTransit(r, inTransit) : r;
      // The money (or requests/min slots) may sit in other processes' leases: recall them and try again
      // when their holders have given them back (or the wait ran out). Up to 3 times: a holder's renewal in
      // flight at the recall can take the money once more before it answers.
      if (recalls < 3) {
        recalls++;
        const recall = await this.recallOthers(accountId, 'money');
        inTransit = recall.unanswered;
        if (recall.any) {
          recalledAny = true;
          continue;
        }
        // No lease left, but an earlier recall found some: a holder may have given its slice back after the
        // admit above was refused (a step of its own, made after the recall but before it read it, counted as
        // its answer). Admit once more before refusing, or the refusal names a balance that is no longer the key's.
        if (recalledAny && !triedAfterGone) {
          triedAfterGone = true;
          continue;
        }
      }
      // A renewal of another caller may have taken the rest again meanwhile: give it back, once more.
      if (attempt > recalls || !this.leases.get(keyHash)?.id) return r;
    }
  }

  /** The refusal for money while other processes' leases that may hold it have not answered a recall. */
  private inTransit(r: AdmitRefusal & { code: 'payment_required' }, leases: OtherLease[]): AdmitRefusal {
    const now = this.now();
    const heldUntilMs = Math.max(...leases.map((o) => o.expiresAtMs));
    // A live holder answers at its next recall poll or step; a dead one's lease is gone when it expires. A retry
    // recalls again, so one more wait (at least a second) is the honest estimate, capped by the expiry.
    const retryAfterMs = Math.max(1000, Math.min(heldUntilMs - now, this.recallWaitMs));
    return {
      ok: false,
      code: 'balance_in_transit',
      retryAfterMs,
      heldUntilMs,
      balance: r.balance,
      required: r.required,
      shortfall: r.shortfall,
    };
  }

  private get recallWaitMs(): number {
    return this.opts.recallWaitMs ?? this.opts.idleMs;
  }

  /**
   * Cross-process recall (docs/ledger.md, "Recall"): when other processes hold leases of the account, asks
   * them to report their calls (and, for `money`, to give their slices back) and waits, at most
   * `recallWaitMs`, until each of those leases was stepped after the recall (its expiry moved beyond
   * recall time + ttl) or is gone. The wait reads the store when a holder signals its answer
   * (`recallAnswered`), and every `recallPollMs` besides. Answers whether there were any, and those that
   * had not answered when the wait ran out.
   */
  private async recallOthers(accountId: string, kind: RecallKind): Promise<RecallOutcome> {
    const t0 = this.now();
    let others = await this.inner.otherLeases(accountId, this.processId, t0);
    if (others.length === 0) return { any: false, unanswered: [] };
    // The recall's time is taken just before it is written: holders poll recalls from their last poll's
    // time minus an overlap, so a recall stamped well before it reaches the store could be missed.
    const at = this.now();
    await this.inner.recallLeases(accountId, kind, at);
    this.opts.notify?.();
    const fresh = at + this.opts.ttlMs;
    const deadline = at + this.recallWaitMs;
    const poll =
      this.opts.recallPollMs ?? (this.opts.answered ? 100 : Math.max(2, Math.min(20, this.opts.flushMs / 2)));
    let unanswered = others.filter((o) => o.expiresAtMs <= fresh);
    // Bounded by the clock and by a count (a test's frozen clock must not make it spin; signals wake it early).
    for (let n = 2 * Math.ceil(this.recallWaitMs / poll) + 8; n > 0 && unanswered.length > 0; n--) {
      const left = deadline - this.now();
      if (left <= 0) break;
      await this.nap(Math.min(poll, left));
      others = await this.inner.otherLeases(accountId, this.processId, this.now());
      unanswered = others.filter((o) => o.expiresAtMs <= fresh);
    }
    return { any: true, unanswered };
  }

  /** Sleeps `ms`, or less when another process signals a recall answered. */
  private nap(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.waiting.add(wake);
    });
  }

  /** Another process answered a recall (core/store/signals.ts, `recall-answer`): recalls waiting here look now. */
  recallAnswered(): void {
    for (const wake of [...this.waiting]) wake();
  }

  /**
   * Whether a call may be held in this process's lease at all. Not when its id names another process (that
   * process settles it, and releaseOrphans must release it if that process dies), nor when its reservation
   * must expire before the lease would (a lease is released only as a whole, `ttlMs` after its last step).
   */
  private leasable(input: AdmitInput): boolean {
    const owner = ownerOf(input.requestId);
    return (owner === undefined || owner === this.processId) && input.expiresInMs >= this.opts.ttlMs;
  }

  private get processId(): string {
    return this.opts.processId ?? PROCESS_ID;
  }

  async settle(input: SettleInput): Promise<SettleResult> {
    const l = this.calls.get(input.requestId);
    if (!l) {
      const done = this.finished.get(input.requestId);
      if (done) return done.ok && done.status === 'settled' ? { ...done, replay: true } : alreadyReleased;
      const reserved = this.exactOpen.get(input.requestId);
      this.exactOpen.delete(input.requestId);
      // An exact call's overrun may draw on the account's free balance: give back what this process's leases
      // hold beyond their open calls first, so a slice taken after the call was admitted does not hide it.
      if (reserved !== undefined && input.costMsat > reserved) await this.returnSlices(input.accountId);
      return this.inner.settle(input);
    }
    const reserved = l.open.get(input.requestId)!;
    const free = Math.max(0, l.granted - l.unreportedMsat - l.openMsat);
    const charge = Math.min(input.costMsat, reserved + free);
    this.closeCall(l, input.requestId, reserved);
    l.unreportedMsat += charge;
    const tokens = input.promptTokens + input.completionTokens;
    l.localTokens += tokens;
    l.queue.push({
      requestId: input.requestId,
      costMsat: input.costMsat,
      promptTokens: input.promptTokens,
      completionTokens: input.completionTokens,
      model: input.model,
      description: input.description,
      estimated: input.estimated,
      // Its audit record is written by the step that reports (charges) it.
      ...(input.auditRecord !== undefined ? { auditRecord: input.auditRecord } : {}),
      atMs: input.now ?? this.now(),
    });
    l.queueCharges.push(charge);
    const r: Finished = {
      ok: true,
      status: 'settled',
      replay: false,
      chargedMsat: charge,
      releasedMsat: Math.max(0, reserved - charge),
      overrunMsat: input.costMsat - charge,
      // What the balance will be once this call is reported (calls of other processes aside).
      balanceMsat: l.balance - l.unreportedMsat,
      transactionId: `lease:${input.requestId}`,
    };
    this.remember(input.requestId, r);
    if (l.granted - l.unreportedMsat - l.openMsat < l.maxBound || l.queue.length >= MAX_BATCH) this.kick(l);
    return r;
  }

  async release(input: ReleaseInput): Promise<ReleaseResult> {
    const l = this.calls.get(input.requestId);
    if (!l) {
      const done = this.finished.get(input.requestId);
      if (done) return done.ok && done.status === 'released' ? { ...done, replay: true } : alreadySettled;
      this.exactOpen.delete(input.requestId);
      return this.inner.release(input);
    }
    const reserved = l.open.get(input.requestId)!;
    this.closeCall(l, input.requestId, reserved);
    const r: Finished = { ok: true, status: 'released', replay: false, releasedMsat: reserved };
    this.remember(input.requestId, r);
    return r;
  }

  lease(input: LeaseInput): Promise<LeaseResult> {
    return this.inner.lease(input);
  }
  otherLeases(accountId: string, processId: string, now?: number): Promise<OtherLease[]> {
    return this.inner.otherLeases(accountId, processId, now);
  }
  recallLeases(accountId: string, kind: RecallKind, now?: number): Promise<void> {
    return this.inner.recallLeases(accountId, kind, now);
  }
  recalledSince(sinceMs: number): Promise<LeaseRecall[]> {
    return this.inner.recalledSince(sinceMs);
  }

  // ------------------------------------------------------------------------ reads and money changes

  async getKeyInfo(credential: KeyLookup, now?: number): Promise<KeyInfo | null> {
    await this.returnAccount(credential);
    return this.inner.getKeyInfo(credential, now);
  }
  async listTransactions(credential: KeyLookup, page?: Page): Promise<TransactionPage | null> {
    await this.returnAccount(credential);
    return this.inner.listTransactions(credential, page);
  }
  /**
   * Reports the queued calls (their charges and audit records) of the account's leases here — without returning
   * the leases — and asks other processes holding leases of it to report theirs; without an account, every
   * lease of this process.
   */
  async reportCalls(accountId?: string): Promise<void> {
    if (accountId === undefined) return this.flushAll(false);
    const mine = [...this.leases.values()].filter((l) => l.accountId === accountId);
    await Promise.all(mine.map((l) => this.flushLease(l, false)));
    await this.recallOthers(accountId, 'report');
  }
  findKeyById(keyId: string): Promise<KeyRef | null> {
    return this.inner.findKeyById(keyId);
  }
  async holdWithdrawal(input: HoldInput): Promise<HoldResult> {
    await this.returnAccount(input.credential, 'money');
    return this.inner.holdWithdrawal(input);
  }
  async createChildKeys(input: ChildKeysInput): Promise<ChildKeysResult> {
    await this.returnAccount(input.parent);
    return this.inner.createChildKeys(input);
  }
  async updateKey(target: KeyTarget, update: KeyUpdate): Promise<KeyChangeResult> {
    if (update.disabled !== true) {
      await this.returnAccount(target.credential);
      return this.inner.updateKey(target, update);
    }
    // Disabling: the store refuses the key first, then every lease of the account is stepped — here and, through
    // a recall, in every other process — before this answers. A step of a disabled key's lease closes it (its
    // calls reported), so no process admits the key from a slice any more once the operator has the answer.
    // Holders that did not answer within the wait are named in the answer: they apply it at their next step, at
    // the latest when their lease expires.
    const r = await this.inner.updateKey(target, update);
    if (!r.ok) return r;
    const { unanswered } = await this.returnAccount(target.credential, 'money');
    if (unanswered.length === 0) return r;
    return {
      ...r,
      pendingLeases: {
        count: unanswered.length,
        appliedByMs: Math.max(...unanswered.map((o) => o.expiresAtMs)),
      },
    };
  }
  async deleteKey(target: KeyTarget): Promise<KeyChangeResult> {
    await this.returnAccount(target.credential);
    return this.inner.deleteKey(target);
  }
  async checkConservation(): Promise<ConservationReport> {
    await this.flushAll(false);
    return this.inner.checkConservation();
  }
  async totalUserBalancesMsat(): Promise<number> {
    await this.flushAll(false);
    return this.inner.totalUserBalancesMsat();
  }

  createKeyFromDeposit(input: DepositKeyInput): Promise<DepositKeyResult> {
    return this.inner.createKeyFromDeposit(input);
  }
  credit(input: CreditInput): Promise<CreditResult> {
    return this.inner.credit(input);
  }
  commitWithdrawal(ref: CommitRef): Promise<CommitResult> {
    return this.inner.commitWithdrawal(ref);
  }
  abortWithdrawal(ref: HoldRef): Promise<AbortResult> {
    return this.inner.abortWithdrawal(ref);
  }
  sweepExpired(now?: number, max?: number): Promise<number> {
    return this.inner.sweepExpired(now, max);
  }
  heartbeat(processId: string, now?: number): Promise<void> {
    return this.inner.heartbeat(processId, now);
  }
  releaseOrphans(deadAfterMs: number, now?: number): Promise<{ processes: number; released: number }> {
    return this.inner.releaseOrphans(deadAfterMs, now);
  }

  /** Reports every queued call and returns every lease (open calls keep theirs until they finish). */
  async flushAll(returnLeases = true): Promise<void> {
    await Promise.all([...this.leases.values()].map((l) => this.flushLease(l, returnLeases)));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    clearInterval(this.recallTimer);
    await this.flushAll(true);
    await this.inner.close();
  }

  /** Test and metrics view: what this process holds. */
  stats(): { leases: number; records: number; grantedMsat: number; queuedCalls: number; openCalls: number } {
    let grantedMsat = 0;
    let queuedCalls = 0;
    let openCalls = 0;
    for (const l of this.leases.values()) {
      grantedMsat += l.granted;
      queuedCalls += l.queue.length + (l.pending?.calls.length ?? 0);
      openCalls += l.open.size;
    }
    return {
      leases: [...this.leases.values()].filter((l) => l.id).length,
      /** Lease records held: keys with a lease, or with one being opened or returned (cold keys have none). */
      records: this.leases.size,
      grantedMsat,
      queuedCalls,
      openCalls,
    };
  }

  // ---------------------------------------------------------------------------------------- internals

  private newLease(credential: Credential, accountId: string, keyHash: string, limits: RateLimits): KeyLease {
    return {
      credential,
      accountId,
      keyHash,
      limits,
      id: null,
      seq: 0,
      granted: 0,
      unreportedMsat: 0,
      queue: [],
      queueCharges: [],
      open: new RenewingMap(),
      balance: 0,
      openMsat: 0,
      slots: 0,
      slotWindow: -1,
      usedSlots: 0,
      counted: 0,
      tokensLeft: 0,
      localTokens: 0,
      otherOpen: 0,
      conslots: 0,
      peakOpen: 0,
      key: null,
      busy: null,
      pending: null,
      flight: null,
      lastCall: 0,
      lastStep: 0,
      maxBound: 0,
      sinceStep: 0,
      waiting: 0,
      scale: 1,
      renewal: null,
      exactUntil: 0,
      expiresAt: 0,
    };
  }

  /** The in-memory admission, or null when the lease cannot take this call now. */
  private tryLocal(l: KeyLease, input: AdmitInput, now: number): AdmitResult | null {
    const k = l.key;
    // A step whose answer never came (l.pending, resent unchanged by the next step) may have been applied: the
    // store may have shrunk the slice and the concurrency slots this lease still counts on. Nothing is admitted
    // in memory until that step is answered. Nor while a close or a shrink is in flight. A renewal in flight
    // (l.flight) admits within its caps: it cannot take those away (Flight).
    if (!l.id || !k) return null;
    const f = l.flight;
    if (
      f === null
        ? l.busy !== null || l.pending !== null
        : now > f.until || l.usedSlots >= f.usedCap || l.open.size >= f.openCap
    )
      return null;
    // Never spend a slice the store may already have released: a lease not renewed for 3/4 of its TTL (a
    // stalled event loop, an unreachable store) is renewed before the next call is admitted in memory.
    if (now >= l.expiresAt - this.opts.ttlMs / 4) return null;
    if (Math.floor(now / 60_000) !== l.slotWindow || l.usedSlots >= l.slots) return null;
    if (l.tokensLeft - l.localTokens <= 0) return null;
    // Concurrency is leased too: the calls open here stay within the slots the store counts for this lease.
    if (l.open.size >= l.conslots) return null;
    if (
      (k.expiresAtMs !== null && k.expiresAtMs <= now) ||
      (k.validityDateMs !== null && k.validityDateMs <= now)
    )
      return null;
    if (!modelAllowed({ allowedModels: k.allowedModels }, input.model)) {
      return { ok: false, code: 'model_not_allowed', model: input.model };
    }
    const free = l.granted - l.unreportedMsat - l.openMsat;
    if (free < input.maxMsat) return null;
    if (this.calls.has(input.requestId) || this.finished.has(input.requestId)) {
      return { ok: false, code: 'duplicate_request' };
    }
    l.open.set(input.requestId, input.maxMsat);
    l.openMsat += input.maxMsat;
    l.peakOpen = Math.max(l.peakOpen, l.open.size);
    l.usedSlots += 1;
    l.sinceStep += 1;
    this.calls.set(input.requestId, l);
    const counted = l.counted - l.slots + l.usedSlots;
    const limit = input.limits.requestsPerMinute;
    return {
      ok: true,
      accountId: l.accountId,
      requestId: input.requestId,
      reservedMsat: input.maxMsat,
      availableMsat: free - input.maxMsat,
      key: k,
      rateLimit: {
        type: 'requests_per_minute',
        limit,
        remaining: Math.max(0, limit - counted),
        resetUnix: (l.slotWindow + 1) * 60,
      },
    };
  }

  private closeCall(l: KeyLease, requestId: string, reserved: number): void {
    l.open.delete(requestId);
    l.openMsat -= reserved;
    this.calls.delete(requestId);
    l.lastCall = this.now();
  }

  private remember(requestId: string, r: Finished): void {
    this.finished.set(requestId, r);
  }

  private async settled(l: KeyLease): Promise<void> {
    while (l.busy) await l.busy;
  }

  /**
   * One renewal for every caller that needs one now: callers that find the lease short while a renewal is
   * in flight join it instead of queueing a step each (which would serialize them on the store).
   */
  private renew(l: KeyLease, minMsat: number): Promise<LeaseResult | null> {
    if (!l.renewal) {
      l.renewal = this.step(l, false, minMsat).finally(() => {
        l.renewal = null;
      });
    }
    return l.renewal;
  }

  /** Starts a background step for `l` unless one runs. */
  private kick(l: KeyLease): void {
    if (l.busy || !l.id) return;
    this.step(l, false, 0).catch((err) => this.opts.onError?.(err));
  }

  /**
   * One lease step: resends a failed one unchanged, else reports the queue and opens/renews/shrinks/closes.
   * Resolves to the store's answer (null when there was nothing to do).
   */
  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: one lease step between taking and releasing `busy`: building the store request and applying its answer read and write the same lease fields, and no other step may run between them
  private async step(
    l: KeyLease,
    close: boolean,
    minMsat: number,
    shrink = false,
  ): Promise<LeaseResult | null> {
    // Inline (no await when idle): between the check and taking `busy` no other step may start.
    while (l.busy) await l.busy;
    if (!l.id && !l.pending && l.queue.length === 0 && (close || shrink)) return null;
    // Callers ask to close a lease with no call open, but a step in flight made this one wait: continuations
    // queued before its own (another call's answer read from the store in the same chunk) may have admitted
    // calls in memory since. A lease is never closed under open calls: the store would count their
    // concurrency slots (and money) free while they run. It keeps them instead (only theirs when shrinking).
    if (close && l.open.size > 0) close = false;
    let done!: () => void;
    l.busy = new Promise<void>((r) => {
      done = r;
    });
    try {
      const now = this.now();
      const resend = l.pending !== null;
      if (!l.pending) {
        // At most MAX_BATCH calls per step; callsMsat is what the store takes from the lease for them.
        const calls = l.queue.splice(0, MAX_BATCH);
        const callsMsat = l.queueCharges.splice(0, MAX_BATCH).reduce((a, b) => a + b, 0);
        l.pending = {
          seq: l.seq + 1,
          calls,
          callsMsat,
          used: l.usedSlots,
          close: close && l.queue.length === 0,
        };
      }
      const p = l.pending;
      // Owned by this process (as `ownedId('l')`), so otherLeases and releaseOrphans see whose it is.
      if (!l.id) l.id = `l~${this.processId}~${randomUUID()}`;
      const committed = l.openMsat; // open calls keep their reservations through the step
      // Slice and slots adapt to the key's concurrency and rate: room for twice the calls open now and
      // twice the calls admitted since the last step, plus SLICE_CALLS (the store caps it by the balance).
      // Geometric growth: a lease whose slots or money ran out since its last step doubles its slice (up
      // to ×1024), one that used under a quarter halves it, so a hot key converges to few steps per flush.
      const ranOut = l.usedSlots >= l.slots || l.granted - l.unreportedMsat - l.openMsat < l.maxBound;
      if (l.id && ranOut) l.scale = Math.min(1024, l.scale * 2);
      else if (l.usedSlots * 4 < l.slots) l.scale = Math.max(1, l.scale / 2);
      const demand = (2 * l.open.size + 2 * l.sinceStep + l.waiting + SLICE_CALLS) * l.scale;
      const target = Math.max(demand * l.maxBound, committed + l.maxBound);
      // At most a quarter of the key's requests/min per step: other processes and the exact path keep a share.
      const slots = Math.max(
        1,
        Math.min(Math.max(SLOT_BATCH, demand), Math.floor(l.limits.requestsPerMinute / 4)),
      );
      // On the exact path (money tight here or recalled) the lease only keeps what its open calls hold.
      const exact = shrink || now < l.exactUntil;
      const want = p.close ? 0 : exact ? committed : Math.max(target, l.granted - p.callsMsat);
      const wantRequests = p.close || exact ? 0 : slots;
      // Concurrency slots: the open calls' own plus room for twice the peak since the last step, the waiting
      // callers and a little more (≤ SLICE_CALLS and ≤ ¼ of the limit, so other processes keep a share);
      // on the exact path only their own, so exact admissions and other processes get the rest.
      const wantConcurrent = exact
        ? l.open.size
        : Math.min(
            l.limits.concurrent,
            Math.max(
              l.open.size + 1,
              2 * l.peakOpen + l.waiting + Math.min(SLICE_CALLS, Math.floor(l.limits.concurrent / 4)),
            ),
          );
      // A renewal of an open lease goes on admitting in memory while it is in flight (Flight).
      if (!resend && !p.close && !exact && p.seq > 1)
        l.flight = {
          usedCap: p.used + Math.max(0, Math.min(wantRequests, l.slots - p.used)),
          openCap: Math.min(l.conslots, wantConcurrent),
          until: now + this.opts.flushMs,
        };
      const r = await this.inner.lease({
        credential: l.credential,
        leaseId: l.id,
        seq: p.seq,
        wantMsat: want,
        minMsat: p.seq === 1 ? Math.min(minMsat, want) : 0,
        wantRequests,
        usedRequests: p.used,
        wantConcurrent,
        openCalls: l.open.size,
        ttlMs: this.opts.ttlMs,
        limits: l.limits,
        calls: p.calls,
        close: p.close,
        now,
      });
      l.pending = null;
      l.seq = p.seq;
      l.lastStep = now;
      l.sinceStep = 0;
      l.peakOpen = l.open.size;
      if (!r.ok) {
        // Opening refused: nothing is held.
        l.id = null;
        l.seq = 0;
        return r;
      }
      l.unreportedMsat -= p.callsMsat;
      // What remains are the slots of calls admitted while the step was in flight (Flight).
      l.usedSlots -= p.used;
      l.localTokens = 0;
      l.key = r.key;
      l.tokensLeft = r.tokensLeft;
      l.balance = r.balanceMsat;
      l.otherOpen = r.otherOpen;
      l.conslots = r.concurrentSlots;
      if (r.open) {
        l.expiresAt = now + this.opts.ttlMs;
        l.granted = r.grantedMsat;
        l.slots = r.requestSlots;
        // Slots of calls admitted in flight count against this grant in the same minute (the store took the
        // step's unused slots back and granted at least as many); a new minute's grant starts unused.
        if (r.requestWindow !== l.slotWindow) l.usedSlots = 0;
        l.slotWindow = r.requestWindow;
        l.counted = r.requestsCounted;
      } else {
        l.id = null;
        l.seq = 0;
        l.granted = 0;
        l.slots = 0;
        l.usedSlots = 0;
      }
      return r;
    } finally {
      l.flight = null;
      l.busy = null;
      done();
    }
  }

  private async flushLease(l: KeyLease, returnLease: boolean): Promise<void> {
    for (;;) {
      await this.settled(l);
      const work = l.queue.length > 0 || l.pending !== null;
      const close = returnLease && l.open.size === 0 && l.id !== null;
      if (!work && !close) break;
      await this.step(l, close, 0);
    }
    if (!l.id && l.open.size === 0 && l.queue.length === 0) this.leases.delete(l.keyHash);
  }

  /** Shrinks this process's leases of the account to what their open calls hold (queued calls reported). */
  private async returnSlices(accountId: string): Promise<void> {
    const mine = [...this.leases.values()].filter((l) => l.accountId === accountId && l.id);
    await Promise.all(mine.map((l) => this.step(l, l.open.size === 0, 0, true)));
  }

  private async returnAccount(credential: KeyLookup, kind: RecallKind = 'report'): Promise<RecallOutcome> {
    const c = resolveCredential(credential);
    if (!c) return { any: false, unanswered: [] };
    const mine = [...this.leases.values()].filter((l) => l.accountId === c.accountId);
    await Promise.all(
      mine.map(async (l) => {
        await this.flushLease(l, true);
        // A money change (a withdrawal) may need the slice a lease with open calls still holds: keep only what
        // those calls reserve, and stay on the exact path a while so the slice is not taken again at once.
        if (kind === 'money' && l.id) {
          l.exactUntil = Math.max(l.exactUntil, this.now() + this.opts.idleMs);
          await this.step(l, l.open.size === 0, 0, true);
        }
      }),
    );
    // Calls answered by other processes: their holders report them first (money changes get the slices back).
    return this.recallOthers(c.accountId, kind);
  }

  /** Polls the recalls of other processes (only while this process holds a lease) and answers them. */
  private async pollRecalls(now: number): Promise<void> {
    const recalls = await this.inner.recalledSince(this.recallsFrom);
    let stepped = false;
    for (const r of recalls) {
      const id = `${r.kind}:${r.accountId}`;
      if ((this.answered.get(id) ?? -1) >= r.atMs) continue;
      for (const l of this.leases.values()) {
        if (l.accountId !== r.accountId || (!l.id && !l.pending && l.queue.length === 0)) continue;
        if (r.kind === 'money') {
          // Stay on the exact path a while, so the slice is not taken again at once.
          l.exactUntil = Math.max(l.exactUntil, now + this.opts.idleMs);
          await this.step(l, l.open.size === 0, 0, true);
        } else {
          await this.step(l, false, 0);
        }
        stepped = true;
      }
      // Answered only once its steps went through: a failed step leaves the recall to the next poll.
      this.answered.set(id, r.atMs);
    }
    this.recallsFrom = now - RECALL_SLACK_MS;
    // The recalling process reads the answers now instead of at its next poll.
    if (stepped) this.opts.answered?.();
    for (const [id, at] of this.answered) if (at < now - 2 * RECALL_SLACK_MS) this.answered.delete(id);
  }

  /** Answers recalls now (another process signalled one) instead of at the next poll. */
  wake(): void {
    // A poll already reading may have read before the recall was written: poll once more after it.
    if (this.polling) this.pollAgain = true;
    this.recallTick();
  }

  private recallTick(): void {
    if (this.polling || this.closed) return;
    this.pollAgain = false;
    let holding = false;
    for (const l of this.leases.values()) {
      if (l.id !== null || l.queue.length > 0) {
        holding = true;
        break;
      }
    }
    if (!holding) return;
    this.polling = true;
    this.pollRecalls(this.now())
      .catch((err) => this.opts.onError?.(err))
      .finally(() => {
        this.polling = false;
        if (this.pollAgain) this.recallTick();
      });
  }

  private tick(): void {
    const now = this.now();
    for (const l of this.leases.values()) {
      if (l.busy) continue;
      const idle = l.open.size === 0 && now - l.lastCall >= this.opts.idleMs;
      if (!l.id) {
        // Calls settled after the store closed the lease under them (a disabled or deleted key) are reported
        // too: the step records them (charged from the free balance, as settle would) and closes at once.
        if (l.pending || l.queue.length > 0) this.step(l, false, 0).catch((err) => this.opts.onError?.(err));
        else if (idle && now >= l.exactUntil) this.leases.delete(l.keyHash);
        continue;
      }
      if (idle) {
        this.flushLease(l, true).catch((err) => this.opts.onError?.(err));
      } else if (l.queue.length > 0 || l.pending || now - l.lastStep >= this.opts.ttlMs / 2) {
        this.step(l, false, 0).catch((err) => this.opts.onError?.(err));
      }
    }
  }
}

const alreadyReleased = { ok: false, code: 'already_released' } as const;
const alreadySettled = { ok: false, code: 'already_settled' } as const;
