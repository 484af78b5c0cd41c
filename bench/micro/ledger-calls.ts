import type { Ledger, SettleInput } from '../../core/ledger/types.js';

/**
 * The ledger calls the micro-benches time, written once: one paid call's admission (5,000 msat bound, limits far
 * above any bench) and its settlement (1,234 msat), each throwing on a refusal so that a bench never counts a
 * refused call as a fast one.
 */

export const LIMITS = { requestsPerMinute: 1e12, tokensPerHour: 1e12, concurrent: 1e9 };

/** Admits one call on the key; returns its account id. */
export async function benchAdmit(ledger: Ledger, apiKey: string, requestId: string): Promise<string> {
  const a = await ledger.admit({
    credential: { apiKey },
    requestId,
    model: 'm',
    maxMsat: 5000,
    minMsat: 100,
    expiresInMs: 60_000,
    limits: LIMITS,
  });
  if (!a.ok) throw new Error(a.code);
  return a.accountId;
}

/** Settles an admitted call at 1,234 msat (`over`: other fields, an audit record say). */
export async function benchSettle(
  ledger: Ledger,
  accountId: string,
  requestId: string,
  over: Partial<SettleInput> = {},
): Promise<void> {
  const s = await ledger.settle({
    accountId,
    requestId,
    costMsat: 1234,
    promptTokens: 10,
    completionTokens: 20,
    model: 'm',
    description: 'bench',
    estimated: false,
    ...over,
  });
  if (!s.ok) throw new Error(s.code);
}

/** One paid call's two ledger steps. */
export async function benchAdmitSettle(ledger: Ledger, apiKey: string, requestId: string): Promise<void> {
  await benchSettle(ledger, await benchAdmit(ledger, apiKey, requestId), requestId);
}
