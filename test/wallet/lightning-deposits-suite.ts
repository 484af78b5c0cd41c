import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { depositIdHash, LightningDeposits, openDepositStore } from '../../core/account/lightning-deposits.js';
import { createLedger } from '../../core/ledger/index.js';
import type { Ledger } from '../../core/ledger/types.js';
import type { StoreConnection } from '../../core/store/connection.js';
import type { WalletService } from '../../core/wallet/types.js';
import {
  captureLog,
  type DevMint,
  dropStore,
  startTestMint,
  testStore,
  testWallet,
} from '../support/dev-mint.js';
import { until } from '../support/until.js';

/**
 * Lightning deposits the server finishes (the service part; the HTTP side is
 * test/routes/lightning.test.ts, a real kill is lightning-deposits-crash-suite.ts): quotes persisted in the
 * store, a watcher that mints and credits without the client, once across several instances on one store
 * (processes), NUT-17 pushes and the polling fallback (a mint without NUT-17, a dropped socket, an outage that
 * closes the socket), expiry, a mint outage that only delays, and a deposit minted but not yet credited when its
 * process died.
 */

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function lightningDepositsSuite(kind: 'sqlite' | 'redis'): void {
  describe(`Lightning deposits finished by the server (${kind} store)`, () => {
    let mint: DevMint;
    let plain: DevMint | undefined;
    let conn: StoreConnection;
    let ledger: Ledger;
    let wallet: WalletService;
    /** An initialised instance over this suite's store and ledger (no watcher pass, 20 ms backoff by default). */
    const started = async (opts: Partial<ConstructorParameters<typeof LightningDeposits>[0]> = {}) => {
      const d = new LightningDeposits({
        conn,
        ledger,
        wallet,
        log: captureLog().log,
        backoffMs: 20,
        pollMs: 0,
        ...opts,
      });
      await d.init();
      return d;
    };
    const instance = (): Promise<LightningDeposits> => started();
    /**
     * The watcher's passes or the mint's NUT-17 push (subscribed when the record was created, racing the pass)
     * finish a paid deposit, whichever comes first; returns how many the passes finished (0 when the push won).
     */
    const finishedByPassOrPush = async (d: LightningDeposits, id: string): Promise<number> => {
      const store = openDepositStore(conn);
      let passes = 0;
      await until('the deposit finished', async () => {
        passes += await d.watchOnce();
        const status = (await store.get(depositIdHash(id)))?.status;
        return status === 'issued' || status === 'expired';
      });
      return passes;
    };
    const balanceOf = async (apiKey: string): Promise<number> =>
      (await ledger.getKeyInfo({ apiKey }))?.account.balanceMsat ?? -1;

    beforeAll(async () => {
      mint = await startTestMint({ mintQuotePayment: 'manual' });
      conn = testStore(kind);
      ledger = await createLedger(conn, {});
      wallet = await testWallet(conn, [mint.url]);
    });
    afterEach(async () => {
      expect((await ledger.checkConservation()).breaches).toEqual([]);
      const solvency = await wallet.checkSolvency(() => ledger.totalUserBalancesMsat());
      expect(solvency.solvent).toBe(true);
    });
    afterAll(async () => {
      await wallet.close();
      await ledger.close();
      await dropStore(conn);
      await mint.close();
      await plain?.close();
    });

    it('the client never polls: the watcher mints and creates the key; 20 concurrent reads yield one key', async () => {
      const d = await instance();
      const { id, record } = await d.create({ kind: 'create', amountSats: 2100, name: 'ln' });
      expect(id).toMatch(/^lnd_[A-Za-z0-9_-]{32}$/);
      expect(id).not.toContain(record.quote);
      expect(record).toMatchObject({ status: 'pending', amountSats: 2100 });
      expect(await d.watchOnce()).toBe(0);
      expect((await d.status(id))?.status).toBe('pending');
      mint.payMintQuote(record.quote);
      d.start(20);
      const store = openDepositStore(conn);
      await until(
        'the deposit issued',
        async () => (await store.get(depositIdHash(id)))?.status === 'issued',
      );
      await d.stop();
      expect((await store.get(depositIdHash(id)))?.status).toBe('issued');
      const views = await Promise.all(Array.from({ length: 20 }, () => d.status(id)));
      const keys = new Set(views.map((v) => v?.apiKey));
      expect(keys.size).toBe(1);
      const apiKey = views[0]?.apiKey as string;
      expect(apiKey).toMatch(/^sk-/);
      expect(views[0]).toMatchObject({ status: 'issued', amountSats: 2100, creditedMsat: 2_100_000 });
      expect(await balanceOf(apiKey)).toBe(2_100_000);
      expect(await d.status('lnd_unknown')).toBeNull();
      // The key is read back from the stored outcome: no mint call (the mint may be down by then).
      mint.setOutage(500);
      try {
        expect((await d.status(id))?.apiKey).toBe(apiKey);
      } finally {
        mint.setOutage(null);
      }
      // A late writer holding the old 'pending' record cannot take the final state back.
      const stale = { ...record, attempts: 9 };
      await store.put(stale);
      expect((await store.get(depositIdHash(id)))?.status).toBe('issued');
      expect(await store.listDue(Date.now() + 3_600_000, 100)).not.toContainEqual(
        expect.objectContaining({ idHash: depositIdHash(id) }),
      );
    });

    it('a top-up whose key was deleted before it was paid is parked on the deposit identity (refundable), once', async () => {
      const d = await instance();
      const made = await d.create({ kind: 'create', amountSats: 10 });
      mint.payMintQuote(made.record.quote);
      const apiKey = (await d.status(made.id))?.apiKey as string;
      const top = await d.create({ kind: 'topup', amountSats: 55, topupApiKey: apiKey });
      expect((await ledger.deleteKey({ credential: { apiKey } })).ok).toBe(true);
      mint.payMintQuote(top.record.quote);
      expect(await finishedByPassOrPush(d, top.id)).toBeLessThanOrEqual(1);
      expect(await d.status(top.id)).toMatchObject({ status: 'issued', creditedMsat: 55_000 });
      // The minted proofs' receipt (idempotent) names the identity the value was parked on.
      const receipt = await wallet.mintLightningQuote(top.record.quote, 55);
      expect((await ledger.getKeyInfo({ tokenHash: receipt.tokenHash }))?.account.balanceMsat).toBe(55_000);
      expect(await d.watchOnce()).toBe(0);
      expect((await ledger.getKeyInfo({ tokenHash: receipt.tokenHash }))?.account.balanceMsat).toBe(55_000);
    });

    it('top-up of an existing key is credited exactly once, by two instances racing', async () => {
      const a = await instance();
      const b = await instance();
      const made = await a.create({ kind: 'create', amountSats: 10 });
      mint.payMintQuote(made.record.quote);
      const apiKey = (await a.status(made.id))?.apiKey as string;
      expect(await balanceOf(apiKey)).toBe(10_000);
      const top = await a.create({ kind: 'topup', amountSats: 333, topupApiKey: apiKey });
      mint.payMintQuote(top.record.quote);
      // Two processes' watchers and the client's read, all at once.
      await Promise.all([a.watchOnce(), b.watchOnce(), b.status(top.id)]);
      await until('the top-up issued', async () => (await a.status(top.id))?.status === 'issued');
      const v = await b.status(top.id);
      expect(v).toMatchObject({ status: 'issued', creditedMsat: 333_000 });
      expect(v?.apiKey).toBeUndefined();
      expect(await balanceOf(apiKey)).toBe(343_000);
      await a.watchOnce();
      expect(await balanceOf(apiKey)).toBe(343_000);
    });

    it('NUT-17: the mint pushes the payment and the deposit is credited at once, with polling off', async () => {
      // pollMs of ten minutes and no watcher pass: only the mint's WebSocket push can finish this deposit.
      const d = await started({ pollMs: 600_000, backoffMs: undefined });
      try {
        const made = await d.create({ kind: 'create', amountSats: 5 });
        mint.payMintQuote(made.record.quote);
        const apiKey = (await d.status(made.id))?.apiKey as string;
        const top = await d.create({ kind: 'topup', amountSats: 444, topupApiKey: apiKey });
        const store = openDepositStore(conn);
        // Subscribed and told UNPAID: nothing happens (a negative over a window: nothing marks "it would have").
        await sleep(300);
        expect((await store.get(depositIdHash(top.id)))?.status).toBe('pending');
        expect(await balanceOf(apiKey)).toBe(5_000);
        mint.payMintQuote(top.record.quote);
        await until(
          'the pushed top-up issued',
          async () => (await store.get(depositIdHash(top.id)))?.status === 'issued',
        );
        expect(await store.get(depositIdHash(top.id))).toMatchObject({
          status: 'issued',
          creditedMsat: 444_000,
        });
        expect(await balanceOf(apiKey)).toBe(449_000);
      } finally {
        await d.stop();
      }
    });

    it('a mint without NUT-17: the watcher polls and finishes the deposit', async () => {
      // Kept open until afterAll: its proofs stay in this store, and the solvency check asks it.
      plain = await startTestMint({ mintQuotePayment: 'manual', nut17: false });
      const w = await testWallet(conn, [plain.url]);
      const d = new LightningDeposits({ conn, ledger, wallet: w, log: captureLog().log, pollMs: 50 });
      await d.init();
      try {
        const info = (await (await fetch(`${plain.url}/v1/info`)).json()) as {
          nuts: Record<string, unknown>;
        };
        expect(info.nuts['17']).toBeUndefined();
        expect(
          await w.watchLightningQuotes?.(
            ['x'],
            () => undefined,
            () => undefined,
          ),
        ).toBeNull();
        const { id, record } = await d.create({ kind: 'create', amountSats: 1234 });
        d.start(20);
        const store = openDepositStore(conn);
        expect((await store.get(depositIdHash(id)))?.status).toBe('pending');
        plain.payMintQuote(record.quote);
        await until(
          'the polled deposit issued',
          async () => (await store.get(depositIdHash(id)))?.status === 'issued',
        );
        expect(await store.get(depositIdHash(id))).toMatchObject({
          status: 'issued',
          creditedMsat: 1_234_000,
        });
        const v = await d.status(id);
        expect(await balanceOf(v?.apiKey as string)).toBe(1_234_000);
      } finally {
        await d.stop();
        await w.close();
      }
    });

    it.each(['dropped', 'outage'] as const)(
      'NUT-17 socket %s after subscribing: no push arrives, the polling fallback finishes the deposit',
      async (how) => {
        const d = await started({ pollMs: 100 });
        const store = openDepositStore(conn);
        const statusOf = async (id: string) => (await store.get(depositIdHash(id)))?.status;
        try {
          // A probe proves the push channel is live: no watcher pass runs, only the push can issue it.
          const probe = await d.create({ kind: 'create', amountSats: 3 });
          mint.payMintQuote(probe.record.quote);
          await until('the probe issued', async () => (await statusOf(probe.id)) === 'issued');
          expect(await statusOf(probe.id)).toBe('issued');
          const apiKey = (await d.status(probe.id))?.apiKey as string;
          const top = await d.create({ kind: 'topup', amountSats: 212, topupApiKey: apiKey });
          if (how === 'dropped') mint.dropWebSockets();
          else mint.setOutage(503);
          mint.payMintQuote(top.record.quote);
          // The socket is gone: nothing pushes the payment (and no watcher runs yet). A negative over a window.
          await sleep(300);
          expect(await statusOf(top.id)).toBe('pending');
          expect(await balanceOf(apiKey)).toBe(3_000);
          d.start(20);
          if (how === 'outage') {
            // Polls fail while the mint is down (backoff); nothing is credited, nothing lost.
            await until(
              'two failed polls',
              async () => ((await store.get(depositIdHash(top.id)))?.attempts ?? 0) >= 2,
            );
            expect(await store.get(depositIdHash(top.id))).toMatchObject({ status: 'pending' });
            expect(((await store.get(depositIdHash(top.id)))?.attempts ?? 0) >= 2).toBe(true);
            mint.setOutage(null);
          }
          await until('the top-up issued', async () => (await statusOf(top.id)) === 'issued');
          expect(await store.get(depositIdHash(top.id))).toMatchObject({
            status: 'issued',
            creditedMsat: 212_000,
          });
          expect(await balanceOf(apiKey)).toBe(215_000);
        } finally {
          mint.setOutage(null);
          await d.stop();
        }
      },
    );

    it('minted but not credited when the process died: a new instance credits it once', async () => {
      const a = await instance();
      const { id, record } = await a.create({ kind: 'create', amountSats: 64 });
      mint.payMintQuote(record.quote);
      // The dead process got as far as the mint (proofs stored, receipt kept), not the ledger.
      const receipt = await wallet.mintLightningQuote(record.quote, 64);
      expect(receipt.amountMsat).toBe(64_000);
      const restarted = await instance();
      // The dead process's subscription (`a` still runs here) may push it first: once either way.
      expect(await finishedByPassOrPush(restarted, id)).toBeLessThanOrEqual(1);
      const v = await restarted.status(id);
      expect(v).toMatchObject({ status: 'issued', creditedMsat: 64_000 });
      expect(await balanceOf(v?.apiKey as string)).toBe(64_000);
    });

    it('a mint that is down during the watch delays the deposit (backoff) and loses nothing', async () => {
      const d = await instance();
      const { id, record } = await d.create({ kind: 'create', amountSats: 5 });
      mint.payMintQuote(record.quote);
      mint.setOutage(503);
      let nextAttemptAt = 0;
      try {
        expect(await d.watchOnce()).toBe(0);
        const stuck = await openDepositStore(conn).get(depositIdHash(id));
        expect(stuck).toMatchObject({ status: 'pending', attempts: 1 });
        expect((stuck?.nextAttemptAt ?? 0) - Date.now()).toBeLessThanOrEqual(20);
        nextAttemptAt = stuck?.nextAttemptAt ?? 0;
      } finally {
        mint.setOutage(null);
      }
      await until('the backoff over', () => Date.now() > nextAttemptAt, 1_000, 5);
      // Once the mint is back, the next pass or the mint's NUT-17 push (subscribed by the failed pass,
      // racing this one) finishes it — whichever comes first, exactly once.
      expect(await finishedByPassOrPush(d, id)).toBeLessThanOrEqual(1);
      const v = await d.status(id);
      expect(v?.status).toBe('issued');
      expect(await balanceOf(v?.apiKey as string)).toBe(5_000);
    });

    it('an unpaid quote past its expiry becomes expired and is never credited', async () => {
      const short = await startTestMint({ mintQuotePayment: 'manual', mintQuoteTtlS: 2 });
      const w = await testWallet(conn, [short.url]);
      try {
        const d = new LightningDeposits({ conn, ledger, wallet: w, log: captureLog().log, pollMs: 0 });
        await d.init();
        const { id, record } = await d.create({ kind: 'create', amountSats: 8 });
        // The mint's expiry is in whole seconds: a 2 s quote is at least 1 s away.
        expect((record.expiresAt ?? 0) - Date.now()).toBeGreaterThan(900);
        expect(await d.watchOnce()).toBe(0);
        // The quote's expiry is a known instant: this waits exactly until it has passed.
        await sleep(Math.max(0, (record.expiresAt ?? 0) - Date.now()) + 50);
        expect(await d.watchOnce()).toBe(1);
        expect(await d.status(id)).toMatchObject({ status: 'expired' });
        expect(await d.watchOnce()).toBe(0);
      } finally {
        await w.close();
        await short.close();
      }
    });
  });
}
