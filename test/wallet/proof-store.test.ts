import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoreConnection } from '../../core/store/connection.js';
import type { JournalEntry, ProofStore, StoredProof } from '../../core/wallet/store/proof-store.js';
import { openProofStore } from '../../core/wallet/wallet.js';
import { dropStore, type StoreKind, testStore } from '../support/dev-mint.js';
import { journalEntry } from './support/journal.js';

/**
 * One conformance suite for both proof stores: what the wallet relies on (atomic counters, exclusive
 * reservations, settle/rollback, claims, migrations) must hold identically on SQLite and Redis.
 */

const MINT = 'http://127.0.0.1:9';

function proof(i: number, amount: number): StoredProof {
  return { y: `02${String(i).padStart(64, '0')}`, id: '01ab', amount, secret: `s${i}`, C: `c${i}` };
}

const entry = (id: string, kind: JournalEntry['kind'] = 'send') => journalEntry(id, kind, MINT);

describe.each<StoreKind>(['sqlite', 'redis'])('proof store conformance (%s)', (kind) => {
  let conn: StoreConnection;
  let store: ProofStore;

  beforeEach(async () => {
    conn = testStore(kind);
    store = openProofStore(conn);
    await store.init();
    await store.init(); // idempotent
    // seed the pool with proofs of 1, 2, 4, …, 512
    const seedOp = entry('recv:seed', 'receive');
    await store.claimOp(seedOp);
    await store.settleOp(seedOp, {
      spentYs: [],
      add: Array.from({ length: 10 }, (_, i) => proof(i, 2 ** i)),
    });
  });
  afterEach(async () => {
    await dropStore(conn);
  });

  it('reserves counters atomically under concurrency', async () => {
    const starts = await Promise.all(Array.from({ length: 20 }, () => store.reserveCounters('ks', 3)));
    expect(new Set(starts).size).toBe(20);
    expect(Math.max(...starts)).toBe(57);
    await store.advanceCounter('ks', 10);
    expect((await store.counters()).ks).toBe(60);
    await store.advanceCounter('ks', 100);
    expect((await store.counters()).ks).toBe(100);
  });

  it('keeps meta values set-if-absent', async () => {
    expect(await store.metaSetIfAbsent('seed', 'a')).toBe('a');
    expect(await store.metaSetIfAbsent('seed', 'b')).toBe('a');
  });

  it('reserves largest-first, covers target + input fee, and never hands one proof to two ops', async () => {
    const picked = await store.reserveProofs(entry('send:a'), 600, 1000);
    expect(picked?.map((p) => p.amount)).toEqual([512, 256]);
    const op = await store.getOp('send:a');
    expect(op?.inputTotal).toBe(768);
    expect(op?.inputYs).toHaveLength(2);
    expect(op?.counters).toEqual([]);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.reserveProofs(entry(`send:${i}`), 100, 0)),
    );
    const ys = results.flatMap((r) => r ?? []).map((p) => p.y);
    expect(new Set(ys).size).toBe(ys.length);
    expect(await store.reserveProofs(entry('send:big'), 100_000, 0)).toBeNull();
    expect(await store.getOp('send:big')).toBeNull();
  });

  it('settles (removes spent, adds new, releases the rest) and rolls back atomically', async () => {
    const e = entry('send:x');
    const picked = (await store.reserveProofs(e, 3, 0)) ?? [];
    expect(picked.map((p) => p.amount)).toEqual([512]);
    const held = (await store.getOp('send:x')) as JournalEntry;
    await store.settleOp(held, { spentYs: picked.map((p) => p.y), add: [proof(100, 509)] });
    const all = await store.listProofs();
    expect(all.reduce((s, p) => s + p.amount, 0)).toBe(1023 - 512 + 509);
    expect(all.every((p) => p.reservedBy === null && p.mint === MINT && p.unit === 'sat')).toBe(true);
    expect(await store.getOp('send:x')).toBeNull();

    await store.reserveProofs(entry('send:y'), 300, 0);
    expect((await store.listProofs()).filter((p) => p.reservedBy === 'send:y').length).toBeGreaterThan(0);
    await store.settleOp((await store.getOp('send:y')) as JournalEntry, { spentYs: [], add: [] });
    expect((await store.listProofs()).every((p) => p.reservedBy === null)).toBe(true);
  });

  it('claims a receive once, stores its receipt once, and journals survive a round trip', async () => {
    const e = {
      ...entry('recv:t', 'receive' as const),
      tokenHash: 't',
      counters: [{ keysetId: 'k', start: 4, count: 2 }],
    };
    expect(await store.claimOp(e)).toBeNull();
    expect((await store.claimOp(e))?.id).toBe('recv:t');
    await store.putOp({ ...e, submitted: true });
    expect(await store.listOps()).toEqual([{ ...e, submitted: true }]);
    const receipt = {
      tokenHash: 't',
      mint: MINT,
      unit: 'sat' as const,
      faceMsat: 5000,
      amountMsat: 4000,
      feeMsat: 1000,
      receivedAt: 1,
    };
    await store.settleOp(e, { spentYs: [], add: [proof(200, 4)], receipt });
    expect(await store.getReceipt('t')).toEqual(receipt);
    expect(await store.listOps()).toEqual([]);
    await store.deleteOp('nothing');
  });

  it('moves an entry to another id only while it is there: a move and a delete at once, exactly one finds it', async () => {
    for (let round = 0; round < 20; round++) {
      const e = entry(`payout:h${round}`, 'payout' as const);
      expect(await store.claimOp(e)).toBeNull();
      const moved = { ...e, id: `payout-reclaim:h${round}` };
      const [m, d] = await Promise.all([store.moveOp(e.id, moved), store.deleteOp(e.id)]);
      expect(m !== d).toBe(true);
      expect(await store.getOp(e.id)).toBeNull();
      expect(await store.getOp(moved.id)).toEqual(m ? moved : null);
      await store.deleteOp(moved.id);
    }
    // Gone: nothing moved, nothing written.
    expect(await store.moveOp('payout:none', entry('payout-reclaim:none', 'payout' as const))).toBe(false);
    expect(await store.getOp('payout-reclaim:none')).toBeNull();
  });
});
