import { GatewayError } from '../errors.js';
import { checkAuditRecord, checkId, checkLimits, checkMsat } from './rules.js';
import type { KeyMeta, LeaseCall, LeaseGrant, LeaseInput, RateLimits } from './types.js';

/**
 * Input checks and the answer format shared by both stores' lease step (core/ledger/types.ts `lease`,
 * docs/ledger.md "Credit leases"). The answer is kept as one string on the lease record so a replayed step
 * (same seq) answers exactly what the first one did.
 */

export interface CheckedLease {
  leaseId: string;
  seq: number;
  want: number;
  min: number;
  wantRequests: number;
  usedRequests: number;
  ttlMs: number;
  limits: RateLimits;
  calls: CheckedCall[];
  /** Concurrency slots wanted, and the floor (calls open under the lease). */
  wantConcurrent: number;
  openCalls: number;
  now: number;
}

export interface CheckedCall extends LeaseCall {
  tokens: number;
  /** The audit record's JSON ('' = none). */
  auditJson: string;
}

/** One reported call, checked; built field by field (no spread: a lease step reports hundreds of calls). */
function checkCall(c: LeaseCall): CheckedCall {
  const promptTokens = checkMsat('promptTokens', c.promptTokens);
  const completionTokens = checkMsat('completionTokens', c.completionTokens);
  return {
    requestId: checkId('requestId', c.requestId),
    costMsat: checkMsat('costMsat', c.costMsat),
    promptTokens,
    completionTokens,
    model: c.model,
    description: c.description,
    estimated: c.estimated,
    auditRecord: c.auditRecord,
    auditJson: checkAuditRecord(c.auditRecord),
    atMs: checkMsat('atMs', c.atMs),
    tokens: promptTokens + completionTokens,
  };
}

export function checkLease(input: LeaseInput): CheckedLease {
  const min = checkMsat('minMsat', input.minMsat);
  const want = input.close ? 0 : checkMsat('wantMsat', input.wantMsat);
  if (!input.close && min > want)
    throw new GatewayError('invalid_request', { message: 'minMsat must be ≤ wantMsat' });
  return {
    leaseId: checkId('leaseId', input.leaseId),
    seq: checkMsat('seq', input.seq, 1),
    want,
    min,
    wantRequests: input.close ? 0 : checkMsat('wantRequests', input.wantRequests),
    usedRequests: checkMsat('usedRequests', input.usedRequests),
    ttlMs: checkMsat('ttlMs', input.ttlMs, 1),
    limits: checkLimits(input.limits),
    calls: input.calls.map(checkCall),
    wantConcurrent: checkMsat('wantConcurrent', input.wantConcurrent ?? 1),
    openCalls: checkMsat('openCalls', input.openCalls ?? (input.wantConcurrent === undefined ? 1 : 0)),
    now: input.now ?? Date.now(),
  };
}

/** 'open,granted,available,balance,slots,window,counted,tokensLeft,otherOpen,concurrentSlots|c1;c2;…' */
export function encodeLeaseAnswer(
  g: Omit<LeaseGrant, 'ok' | 'accountId' | 'leaseId' | 'replay' | 'key'>,
): string {
  return `${[
    g.open ? 1 : 0,
    g.grantedMsat,
    g.availableMsat,
    g.balanceMsat,
    g.requestSlots,
    g.requestWindow,
    g.requestsCounted,
    g.tokensLeft,
    g.otherOpen,
    g.concurrentSlots,
  ].join(',')}|${g.chargedMsat.join(';')}`;
}

export function decodeLeaseAnswer(
  answer: string,
  accountId: string,
  leaseId: string,
  replay: boolean,
  key: KeyMeta | null,
): LeaseGrant {
  const [head, charged] = answer.split('|');
  const n = head!.split(',').map(Number);
  return {
    ok: true,
    accountId,
    leaseId,
    replay,
    open: n[0] === 1,
    grantedMsat: n[1]!,
    availableMsat: n[2]!,
    balanceMsat: n[3]!,
    requestSlots: n[4]!,
    requestWindow: n[5]!,
    requestsCounted: n[6]!,
    tokensLeft: n[7]!,
    otherOpen: n[8]!,
    concurrentSlots: n[9] ?? (n[0] === 1 ? 1 : 0),
    chargedMsat: charged ? charged.split(';').map(Number) : [],
    key,
  };
}
