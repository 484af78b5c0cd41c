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

/** A 1-msat receipt under `tokenHash` (what a receive stores with its proofs). */
const receiptOf = (tokenHash: string) => ({
  tokenHash,
  mint: MINT,
  unit: 'sat' as const,
  faceMsat: 1,
  amountMsat: 1,
  feeMsat: 0,
  receivedAt: 1,
});

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
    // Settled as the entry now stands (submitted): a settle decided on the earlier, unsubmitted view would not apply.
    expect(await store.settleOp(e, { spentYs: [], add: [proof(200, 4)], receipt })).toBe(false);
    expect(await store.getReceipt('t')).toBeNull();
    await store.settleOp({ ...e, submitted: true }, { spentYs: [], add: [proof(200, 4)], receipt });
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

  it('settles an entry once: two settles at once, exactly one applies; a gone entry changes nothing', async () => {
    for (let round = 0; round < 10; round++) {
      const e = entry(`send:race${round}`);
      const picked = (await store.reserveProofs(e, 1, 0)) ?? [];
      const held = (await store.getOp(e.id)) as JournalEntry;
      const next = entry(`payout:race${round}`, 'payout' as const);
      // One decides "spent, here is the change", the other "rolled back": only one of them happens.
      const [s1, s2] = await Promise.all([
        store.settleOp(held, { spentYs: picked.map((p) => p.y), add: [proof(300 + round, 1)], next }),
        store.settleOp(held, { spentYs: [], add: [] }),
      ]);
      expect(s1 !== s2).toBe(true);
      const ys = new Set((await store.listProofs()).map((p) => p.y));
      expect(ys.has(picked[0]!.y)).toBe(s2);
      expect(ys.has(proof(300 + round, 1).y)).toBe(s1);
      expect((await store.getOp(next.id)) !== null).toBe(s1);
      expect((await store.listProofs()).every((p) => p.reservedBy === null)).toBe(true);
    }
    const total = (await store.listProofs()).reduce((s, p) => s + p.amount, 0);
    const receipt = receiptOf('gone');
    const gone = entry('recv:gone', 'receive');
    expect(
      await store.settleOp(gone, {
        spentYs: [proof(0, 1).y],
        add: [proof(400, 8)],
        receipt,
        next: entry('payout:x', 'payout'),
      }),
    ).toBe(false);
    expect((await store.listProofs()).reduce((s, p) => s + p.amount, 0)).toBe(total);
    expect(await store.getReceipt('gone')).toBeNull();
    expect(await store.getOp('payout:x')).toBeNull();
  });

  it("applyIfGone: a gone entry still gets the mint's facts (spent out, outputs in, receipt), nothing else", async () => {
    // Another op holds the 512 reserved; the 256 is available: both were spent at the mint by the gone op.
    const other = entry('send:other');
    const held = (await store.reserveProofs(other, 300, 0)) ?? [];
    expect(held.map((p) => p.amount)).toEqual([512]);
    const receipt = receiptOf('facts');
    const gone = entry('send:gone');
    const applied = await store.settleOp(gone, {
      spentYs: [proof(9, 512).y, proof(8, 256).y],
      add: [proof(500, 700)],
      receipt,
      next: entry('payout:gone', 'payout'),
      applyIfGone: true,
    });
    expect(applied).toBe(false);
    const all = await store.listProofs();
    expect(all.reduce((s, p) => s + p.amount, 0)).toBe(1023 - 512 - 256 + 700);
    expect(all.some((p) => p.y === proof(9, 512).y || p.y === proof(8, 256).y)).toBe(false);
    expect(await store.getReceipt('facts')).toEqual(receipt);
    expect(await store.getOp('payout:gone')).toBeNull();
    // The other op's entry is untouched (its reservation is not released by someone else's settle).
    expect(await store.getOp('send:other')).not.toBeNull();
  });

  it('updates an entry only while it is there; a rollback read before the entry was submitted does not apply after', async () => {
    const e = entry('send:upd');
    await store.reserveProofs(e, 1, 0);
    const held = (await store.getOp(e.id)) as JournalEntry;
    expect(await store.updateOp({ ...held, submitted: true })).toBe(true);
    expect((await store.getOp(e.id))?.submitted).toBe(true);
    // A pass that read the entry before it was submitted decided "roll back": it does not apply now.
    expect(await store.settleOp(held, { spentYs: [], add: [] })).toBe(false);
    expect((await store.listProofs()).some((p) => p.reservedBy === e.id)).toBe(true);
    expect(await store.settleOp({ ...held, submitted: true }, { spentYs: [], add: [] })).toBe(true);
    expect(await store.updateOp({ ...held, submitted: true, abandoned: true })).toBe(false);
    expect(await store.getOp(e.id)).toBeNull();
  });
});
