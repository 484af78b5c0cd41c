import { randomBytes, randomUUID } from 'node:crypto';

/**
 * Which process owns a reservation or a withdrawal hold. Every id this process gives the ledger carries its
 * process id (`<prefix>~<processId>~<uuid>`), and the process records a heartbeat in the store
 * (`Ledger.heartbeat`). When a process dies (kill -9, OOM, power), its heartbeat stops, and any live or
 * restarted process releases what it held within ORPHAN_RELEASE_MS (`Ledger.releaseOrphans`), long before the
 * reservation expiry (the backstop) would.
 */

/** This OS process's id in the store: 12 hex chars, new at every start. */
export const PROCESS_ID = randomBytes(6).toString('hex');

/** A reservation or hold id owned by this process, e.g. `r~3fa2b9c01d7e~<uuid>`. */
export function ownedId(prefix: string): string {
  return `${prefix}~${PROCESS_ID}~${randomUUID()}`;
}

/** The owner process id of an id made by `ownedId`, or undefined. */
export function ownerOf(id: string): string | undefined {
  const m = /^[^~]*~([0-9a-f]{12})~/.exec(id);
  return m?.[1];
}

/**
 * How a heartbeat pass reports `Ledger.releaseOrphans`: a warning only when reservations or holds were released
 * (a process died holding money); stopped processes that held nothing (a clean stop, a restart) are an info line.
 */
export function orphanReport(r: {
  processes: number;
  released: number;
}): { level: 'warn' | 'info'; msg: string } | undefined {
  if (r.released > 0) return { level: 'warn', msg: 'released what stopped processes held' };
  if (r.processes > 0) return { level: 'info', msg: 'forgot stopped processes (they held nothing)' };
  return undefined;
}
