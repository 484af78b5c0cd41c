import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditRecovered, creditToken } from '../../core/account/credit-token.js';
import { createLedger } from '../../core/ledger/index.js';
import type { Ledger } from '../../core/ledger/types.js';
import type { StoreConnection } from '../../core/store/connection.js';
import type { WalletService } from '../../core/wallet/types.js';
import { createWallet } from '../../core/wallet/wallet.js';
import { crashRigPerSuite } from '../support/crash-rig.js';
import { captureLog, type StoreKind, testWallet } from '../support/dev-mint.js';
import { runChild } from '../wallet/crash-recovery-suite.js';

/**
 * A token redeemed at the mint by a process that died before crediting it (killed right after the swap) is credited
 * by the next recovery pass where its caller meant to (the intent journalled with the receive: the token's own
 * identity, a new key from the deposit, or an existing key's account), not only when the client presents the token
 * again. The client's later retry with the same token is then a replay: nothing credited twice, the same key. Before
 * this, the value stayed with the operator until the client came back (docs/reliability.md; the chaos run's "paid
 * token redeemed but never credited"). Real child process, real dev mint, real ledger, both stores.
 */

/** Everything the wallet's journal holds, as text. */
async function journalText(conn: StoreConnection): Promise<string> {
  if (conn.kind === 'sqlite') return JSON.stringify(conn.db.prepare('SELECT * FROM wallet_ops').all());
  const r = conn.redis;
  const keys = await r.keys(`${conn.prefix}:*`);
  const hashes = await Promise.all(
    keys.map(async (k) => ((await r.type(k)) === 'hash' ? r.hgetall(k) : null)),
  );
  return JSON.stringify(hashes);
}

for (const kind of ['sqlite', 'redis'] as StoreKind[]) {
  describe(`a receive killed before its credit, on ${kind}`, () => {
    const { mint, conn, childEnv } = crashRigPerSuite(kind, 'credit-crash-');
    let ledger: Ledger;
    let wallet: WalletService;

    beforeAll(async () => {
      ledger = await createLedger(conn);
      wallet = await testWallet(conn, [mint.url]);
    });

    afterAll(async () => {
      await wallet.close();
    });

    /** The child runs the money step for `token` toward `target` and is killed right after the mint's swap. */
    async function killedCredit(token: string, target: string): Promise<void> {
      const child = await runChild(
        { ...childEnv, CRASH_OP: 'credit', CRASH_ARG: target, WALLET_TEST_CRASH_AT: 'after-swap' },
        token,
      );
      expect(child.signal).toBe('SIGKILL');
      expect(child.out).not.toContain('survived');
    }

    /** A key the pass did not make: `sats` credited through the live wallet. */
    async function newKey(sats: number): Promise<string> {
      const made = await creditToken({ ledger, wallet }, await mint.mintTokens(sats, 'sat'), {
        kind: 'new-key',
      });
      return made.apiKey!;
    }

    /**
     * `steps` with a new process's wallet, built as the gateway builds it (core/services.ts): receipts credited on
     * recovery. The wallet is closed after them; then the ledger's conservation and the wallet's solvency hold.
     */
    async function withNextProcess(steps: (next: WalletService) => Promise<void>): Promise<void> {
      const next = await createWallet({
        conn,
        mints: [mint.url],
        log: captureLog().log,
        mintTimeoutMs: 90_000,
        receipts: (receipt, intent) => creditRecovered(ledger, receipt, intent),
      });
      try {
        await steps(next);
      } finally {
        await next.close();
      }
      const audit = await ledger.checkConservation();
      expect(audit.breaches).toEqual([]);
      const solvency = await wallet.checkSolvency(() => ledger.totalUserBalancesMsat());
      expect(solvency.solvent).toBe(true);
    }

    it('a bearer token (its own identity): credited by the pass; the client’s retry is a replay', async () => {
      const token = await mint.mintTokens(400, 'sat');
      const tokenHash = wallet.tokenHash(token);
      await killedCredit(token, 'token');
      expect(await ledger.getKeyInfo({ tokenHash })).toBeNull();

      await withNextProcess(async (next) => {
        const report = await next.recover();
        expect(report).toMatchObject({ receivesCompleted: 1, receiptsCredited: 1, deferred: 0 });
        const info = await ledger.getKeyInfo({ tokenHash });
        const receipt = await next.receive(token);
        expect(info?.availableMsat).toBe(receipt.amountMsat);
        // The client presents its token again: the same receipt, nothing credited twice.
        const again = await creditToken({ ledger, wallet: next }, token, { kind: 'token' });
        expect(again.creditedMsat).toBe(0);
        expect((await ledger.getKeyInfo({ tokenHash }))?.availableMsat).toBe(receipt.amountMsat);
        expect((await next.recover()).examined).toBe(0);
      });
    });

    it('a key creation (POST /v1/wallet/create): the key made by the pass; the client’s retry gets the same key', async () => {
      const token = await mint.mintTokens(500, 'sat');
      await killedCredit(token, 'new-key');
      await withNextProcess(async (next) => {
        expect(await next.recover()).toMatchObject({ receivesCompleted: 1, receiptsCredited: 1 });
        const retry = await creditToken({ ledger, wallet: next }, token, { kind: 'new-key' });
        expect(retry.creditedMsat).toBe(0);
        expect(retry.balanceMsat).toBe(retry.receipt.amountMsat);
        const info = await ledger.getKeyInfo({ apiKey: retry.apiKey! });
        expect(info?.account.depositedMsat).toBe(retry.receipt.amountMsat);
        // The same key again on a further retry.
        const third = await creditToken({ ledger, wallet: next }, token, { kind: 'new-key' });
        expect(third.apiKey).toBe(retry.apiKey);
      });
    });

    it('a top-up of an existing key: its account credited by the pass (named without the API key)', async () => {
      const apiKey = await newKey(100);
      const before = (await ledger.getKeyInfo({ apiKey }))!.availableMsat;
      const token = await mint.mintTokens(300, 'sat');
      await killedCredit(token, `account:${apiKey}`);
      expect((await ledger.getKeyInfo({ apiKey }))!.availableMsat).toBe(before);
      // The journal names the account by its store identity, never by the key.
      await withNextProcess(async (next) => {
        expect(await next.recover()).toMatchObject({ receivesCompleted: 1, receiptsCredited: 1 });
        const receipt = await next.receive(token);
        expect((await ledger.getKeyInfo({ apiKey }))!.availableMsat).toBe(before + receipt.amountMsat);
        const retry = await creditToken({ ledger, wallet: next }, token, {
          kind: 'account',
          credential: { apiKey },
        });
        expect(retry.creditedMsat).toBe(0);
        expect((await ledger.getKeyInfo({ apiKey }))!.availableMsat).toBe(before + receipt.amountMsat);
      });
    });

    it('the intent journalled with a receive holds no secret (no API key, no token)', async () => {
      const apiKey = await newKey(50);
      const token = await mint.mintTokens(60, 'sat');
      await killedCredit(token, `account:${apiKey}`);
      const raw = await journalText(conn);
      expect(raw).toContain('creditIntent');
      expect(raw).not.toContain(apiKey);
      expect(raw).not.toContain(token);
      await withNextProcess(async (next) => {
        expect(await next.recover()).toMatchObject({ receiptsCredited: 1 });
      });
    });
  });
}
