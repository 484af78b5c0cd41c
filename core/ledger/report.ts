import type { ConservationBreach, ConservationReport, Page } from './types.js';

/** Page bounds for history reads: limit 1–1000 (default 50), offset ≥ 0. */
export function pageOf(p: Page = {}): { limit: number; offset: number } {
  const limit = Math.min(1000, Math.max(1, Math.floor(p.limit ?? 50)));
  const offset = Math.max(0, Math.floor(p.offset ?? 0));
  return { limit, offset };
}

export interface ConservationInput {
  accountId: string;
  balanceMsat: number;
  reservedMsat: number;
  depositedMsat: number;
  spentMsat: number;
  withdrawnMsat: number;
  feesMsat: number;
  requests: number;
  /** Sum of the account's open reservation records (must equal reservedMsat). */
  openReservedMsat: number;
}

/** The invariant checks both stores apply to their per-account snapshots. */
export function conservationReport(list: ConservationInput[]): ConservationReport {
  const breaches: ConservationBreach[] = [];
  const totals = {
    balanceMsat: 0,
    reservedMsat: 0,
    depositedMsat: 0,
    spentMsat: 0,
    withdrawnMsat: 0,
    feesMsat: 0,
    requests: 0,
  };
  for (const a of list) {
    const id = a.accountId;
    const outflow = a.balanceMsat + a.spentMsat + a.withdrawnMsat + a.feesMsat;
    if (a.depositedMsat !== outflow) {
      breaches.push({
        accountId: id,
        rule: 'conservation',
        detail: `deposited ${a.depositedMsat} ≠ balance+spent+withdrawn+fees ${outflow}`,
      });
    }
    if (a.reservedMsat < 0)
      breaches.push({ accountId: id, rule: 'reserved_negative', detail: `reserved ${a.reservedMsat}` });
    if (a.balanceMsat - a.reservedMsat < 0) {
      breaches.push({
        accountId: id,
        rule: 'overspent',
        detail: `balance ${a.balanceMsat} < reserved ${a.reservedMsat}`,
      });
    }
    if (a.openReservedMsat !== a.reservedMsat) {
      breaches.push({
        accountId: id,
        rule: 'reservations_mismatch',
        detail: `reserved ${a.reservedMsat} ≠ open reservations ${a.openReservedMsat}`,
      });
    }
    for (const f of ['spentMsat', 'withdrawnMsat', 'feesMsat', 'depositedMsat'] as const) {
      if (a[f] < 0) breaches.push({ accountId: id, rule: 'negative_total', detail: `${f} ${a[f]}` });
    }
    totals.balanceMsat += a.balanceMsat;
    totals.reservedMsat += a.reservedMsat;
    totals.depositedMsat += a.depositedMsat;
    totals.spentMsat += a.spentMsat;
    totals.withdrawnMsat += a.withdrawnMsat;
    totals.feesMsat += a.feesMsat;
    totals.requests += a.requests;
  }
  const out = totals.balanceMsat + totals.spentMsat + totals.withdrawnMsat + totals.feesMsat;
  if (totals.depositedMsat !== out) {
    breaches.push({
      accountId: null,
      rule: 'conservation',
      detail: `total deposited ${totals.depositedMsat} ≠ ${out}`,
    });
  }
  return { ok: breaches.length === 0, accounts: list.length, totals, breaches };
}
