import type { WalletContext } from './context.js';
import { isStale } from './journal.js';
import type { JournalEntry, OwnerBeat } from './store/proof-store.js';

/**
 * Whose journal entry is it, and may this process decide it? Every entry names the process instance that wrote
 * it (`JournalEntry.owner`: an id new at every start, the instance's stable name, its start time), and every
 * instance records a heartbeat in the store. An entry belongs to its owner while the owner lives: deciding it
 * against the mint while the owner's melt or swap is still on its way there would roll back what the mint then
 * performs (a refund paid twice). So a pass decides an entry only when:
 *
 * - its owner is gone: no heartbeat, or one older than `ownerDeadAfterMs`;
 * - it is this instance's predecessor's: same name, earlier start (a restarted gateway finishes at once what
 *   the crashed one left, e.g. a stuck swap a client retries);
 * - it is this process's own and stale (`isStale`: abandoned or `claimStaleAfterMs` old, its operation gave up on
 *   it, and no call of this process still at work on it);
 * - it has no owner (written by a tool or an older version): stale by the same rule.
 *
 * A live neighbour's entry is left alone, whatever its age: that neighbour decides it in its own passes.
 */

export type Whose = 'mine' | 'gone' | 'predecessor' | 'live' | 'unowned';

export function whoseEntry(
  ctx: WalletContext,
  entry: JournalEntry,
  beats: ReadonlyMap<string, OwnerBeat>,
  now: number,
): Whose {
  const owner = entry.owner;
  if (owner === undefined) return 'unowned';
  const self = ctx.owner;
  if (self !== undefined && owner.id === self.id) return 'mine';
  const beat = beats.get(owner.id);
  if (beat === undefined || now - beat.beatAt > ctx.ownerDeadAfterMs) return 'gone';
  if (self !== undefined && owner.name === self.name && owner.startedAt < self.startedAt)
    return 'predecessor';
  return 'live';
}

/** Whether a pass of this process may decide `entry` now (see the module comment). */
export function mayDecide(
  ctx: WalletContext,
  entry: JournalEntry,
  beats: ReadonlyMap<string, OwnerBeat>,
  now: number,
): boolean {
  const whose = whoseEntry(ctx, entry, beats, now);
  if (whose === 'gone' || whose === 'predecessor') return true;
  if (whose === 'live') return false;
  return isStale(ctx, entry, now);
}

/** The store's heartbeats by instance id. */
export async function ownerBeats(ctx: WalletContext): Promise<Map<string, OwnerBeat>> {
  return new Map((await ctx.store.owners()).map((b) => [b.id, b]));
}

/** Records this instance's heartbeat now (nothing for a wallet without an owner). */
export async function beat(ctx: WalletContext): Promise<void> {
  if (ctx.owner) await ctx.store.beat({ ...ctx.owner, beatAt: Date.now() });
}
