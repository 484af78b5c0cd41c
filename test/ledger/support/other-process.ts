import { rmSync } from 'node:fs';
import type { Ledger, RateLimits } from '../../../core/ledger/types.js';
import type { StoreConnection } from '../../../core/store/connection.js';

/**
 * What the cross-process lease tests share: the lease steps of "another process" that holds `msat` of a key
 * and steps only when told, and the clean-up of the store connections and folders a test file opened.
 */

/** The steps of lease `leaseId` on `apiKey`: step `seq` keeps `msat` leased, or gives it all back (`close`). */
export function leaseSteps(
  ledger: Ledger,
  apiKey: string,
  leaseId: string,
  opts: { msat: number; ttlMs: number; limits: RateLimits },
) {
  return (seq: number, close: boolean) =>
    ledger.lease({
      credential: { apiKey },
      leaseId,
      seq,
      wantMsat: close ? 0 : opts.msat,
      minMsat: close ? 0 : opts.msat,
      wantRequests: 0,
      usedRequests: 0,
      ttlMs: opts.ttlMs,
      limits: opts.limits,
      calls: [],
      close,
    });
}

/** Deletes what the tests wrote under each Redis connection's prefix, closes every connection, removes `dirs`. */
export async function dropConnections(conns: StoreConnection[], dirs: string[]): Promise<void> {
  for (const c of conns) {
    if (c.kind === 'redis') {
      const keys = await c.redis.keys(`${c.prefix}:*`);
      for (const k of keys) await c.redis.del(k);
    }
    await c.close();
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
