import { type CheckedLease, decodeLeaseAnswer, encodeLeaseAnswer } from '../lease-rules.js';
import { expiredAt, HOUR_MS, keyFree, MINUTE_MS, toMeta } from '../rules.js';
import type { LeaseResult } from '../types.js';
import type { AccountRow, ResRow, SqliteStore } from './sqlite-store.js';

/** Lease state kept in a lease reservation's `note` column (calls have none, holds keep their kind there). */
interface LeaseNote {
  /** requests-per-minute window and the slots granted in it */
  rw: number;
  rs: number;
  /** last applied step seq */
  b: number;
  /** concurrency slots held (absent in older records: 1) */
  c?: number;
}

/** Concurrency slots a lease record holds in its key's open count (core/ledger/redis/lease-7.lua: `c`). */
export function leaseSlots(note: string | null): number {
  if (!note) return 1;
  return (JSON.parse(note) as LeaseNote).c ?? 1;
}

/**
 * The SQLite lease step, inside the caller's BEGIN IMMEDIATE transaction: the same rules, in the same order,
 * as core/ledger/redis/lease-7.lua (read its header for the semantics); the conformance suite keeps them equal.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: mirrors lease-7.lua rule for rule, in the same order, so the two read side by side; the conformance suite keeps them equal
export function sqliteLeaseStep(
  s: SqliteStore,
  l: CheckedLease,
  accountId: string,
  keyHash: string,
  close: boolean,
  sweep: (a: AccountRow) => void,
): LeaseResult {
  const { now } = l;
  const a = s.account(accountId);
  if (!a) return { ok: false, code: 'invalid_api_key' };
  sweep(a);
  let r: ResRow | undefined = s.reservation(a.id, l.leaseId);
  let note: LeaseNote | null = null;
  if (r) {
    if (r.kind !== 'call' || r.key_hash !== keyHash) {
      throw new Error('lease id already names another record');
    }
    note = r.note ? (JSON.parse(r.note) as LeaseNote) : null;
    if (note && l.seq <= note.b) {
      const k0 = s.key(keyHash, a.id);
      return decodeLeaseAnswer(r.result!, a.id, l.leaseId, true, k0 && !k0.deleted ? toMeta(k0) : null);
    }
  }
  const k = s.key(keyHash, a.id);
  const bad = !k || k.deleted || a.deleted;
  // Disabled by the operator: never opened; an open lease is closed by this step (its calls still reported).
  const off = !bad && (k.disabled || a.disabled === 1);
  const exp = bad ? null : expiredAt(k, now);
  const rw = Math.floor(now / MINUTE_MS);
  const tw = Math.floor(now / HOUR_MS);
  const { requestsPerMinute: rpm, tokensPerHour: tph, concurrent: conc } = l.limits;
  if (!r && l.calls.length === 0) {
    if (bad) return { ok: false, code: 'invalid_api_key' };
    if (off) return { ok: false, code: 'key_disabled' };
    if (exp !== null) return { ok: false, code: 'key_expired', expiredAtMs: exp };
    if (k.isChild && k.balanceLimit !== null) return { ok: false, code: 'lease_unsupported' };
    const rc = k.rpmWindow === rw ? k.rpmCount : 0;
    if (rc >= rpm) {
      return {
        ok: false,
        code: 'rate_limit_exceeded',
        rateLimit: { type: 'requests_per_minute', limit: rpm, remaining: 0, resetUnix: (rw + 1) * 60 },
      };
    }
    const tc = k.tphWindow === tw ? k.tphCount : 0;
    if (tc >= tph) {
      return {
        ok: false,
        code: 'rate_limit_exceeded',
        rateLimit: { type: 'tokens_per_hour', limit: tph, remaining: 0, resetUnix: (tw + 1) * 3600 },
      };
    }
    if (k.open >= conc) {
      return {
        ok: false,
        code: 'rate_limit_exceeded',
        rateLimit: {
          type: 'concurrent_requests',
          limit: conc,
          remaining: 0,
          resetUnix: Math.ceil(now / 1000),
        },
      };
    }
    const free0 = Math.max(0, a.balance - a.reserved);
    if (Math.min(l.want, free0) < l.min) {
      return {
        ok: false,
        code: 'payment_required',
        balance: free0,
        required: l.min,
        shortfall: l.min - free0,
      };
    }
  }
  if (!k) throw new Error('lease: the key of an open lease is missing');

  const isOpen = r !== undefined && r.status === 'open';
  let held = isOpen ? r!.amount : 0;
  const heldC = isOpen ? (note?.c ?? 1) : 0;
  let free = Math.max(0, a.balance - a.reserved);
  // A limited child never opens a lease; this only keeps a late report within its limit like settle would.
  free = Math.min(free, keyFree(k, now));
  const charged: number[] = [];
  for (const c of l.calls) {
    const charge = Math.min(c.costMsat, held + free);
    const fromHeld = Math.min(charge, held);
    held -= fromHeld;
    free -= charge - fromHeld;
    a.reserved -= fromHeld;
    a.balance -= charge;
    a.spent += charge;
    a.requests += 1;
    k.reserved -= fromHeld;
    k.totalSpent += charge;
    k.totalRequests += 1;
    k.periodSpent += charge;
    k.lastUsed = c.atMs;
    const ctw = Math.floor(c.atMs / HOUR_MS);
    if (k.tphWindow !== ctw) {
      k.tphWindow = ctw;
      k.tphCount = 0;
    }
    k.tphCount += c.tokens;
    s.addTx(a, 'usage', -charge, c.description, c.atMs, k.hash, c.model, c.estimated);
    if (c.auditRecord !== undefined) s.addAudit(a.id, k.hash, c.auditRecord, charge);
    charged.push(charge);
  }

  const shut =
    close ||
    bad ||
    off ||
    exp !== null ||
    (r !== undefined && !isOpen) ||
    (r === undefined && l.calls.length > 0);
  let grant = 0;
  let slots = 0;
  let conslots = 0;
  if (k.rpmWindow !== rw) {
    k.rpmWindow = rw;
    k.rpmCount = 0;
  }
  // Slots granted in this same minute and not used go back.
  if (isOpen && note && note.rw === rw) {
    const unused = note.rs - l.usedRequests;
    if (unused > 0) k.rpmCount = Math.max(0, k.rpmCount - unused);
  }
  if (shut) {
    if (isOpen) {
      a.reserved -= held;
      k.reserved -= held;
      k.open -= heldC;
    }
  } else {
    grant = Math.min(l.want, held + free);
    a.reserved += grant - held;
    k.reserved += grant - held;
    slots = Math.max(0, Math.min(l.wantRequests, rpm - k.rpmCount));
    k.rpmCount += slots;
    // Concurrency slots: what is wanted within what the key's other open calls leave, never below the calls
    // open under the lease.
    const others = k.open - heldC;
    conslots = Math.max(l.openCalls, Math.min(l.wantConcurrent, conc - others), 0);
    k.open = others + conslots;
  }
  k.lastUsed = Math.max(k.lastUsed ?? 0, now);
  const tc = k.tphWindow === tw ? k.tphCount : 0;
  const answer = encodeLeaseAnswer({
    open: !shut,
    grantedMsat: grant,
    availableMsat: Math.max(0, a.balance - a.reserved),
    balanceMsat: a.balance,
    requestSlots: slots,
    requestWindow: rw,
    requestsCounted: k.rpmCount,
    tokensLeft: Math.max(0, tph - tc),
    otherOpen: k.open - conslots,
    concurrentSlots: conslots,
    chargedMsat: charged,
  });
  const newNote = JSON.stringify({ rw, rs: slots, b: l.seq, c: conslots } satisfies LeaseNote);
  if (!r) {
    r = {
      account_id: a.id,
      request_id: l.leaseId,
      key_hash: k.hash,
      kind: 'call',
      amount: grant,
      status: shut ? 'released' : 'open',
      expires_at: now + l.ttlMs,
      client_ip: null,
      note: newNote,
      result: answer,
      finished_at: shut ? now : null,
    };
    s.insertReservation(r);
  } else {
    const status = shut ? (r.status === 'expired' ? 'expired' : 'released') : 'open';
    s.updateLease(
      a.id,
      l.leaseId,
      shut ? r.amount : grant,
      status,
      now + l.ttlMs,
      newNote,
      answer,
      shut ? now : null,
    );
  }
  s.saveAccount(a);
  s.saveKeyCounters(k);
  return decodeLeaseAnswer(answer, a.id, l.leaseId, false, bad ? null : toMeta(k));
}
