import { describe, expect, it } from 'vitest';
import { ledgerOverriding, refusedWhile } from '../support/fakes.js';
import { type PaidGateway, paidGatewayPerSuite } from '../support/paid-gateway.js';

/**
 * Closing a key when the store refuses the delete AFTER the balance was paid out (core/account/close-key.ts),
 * on SQLite and Redis: the token made is handed out in the answer (`deleted: false`) exactly once and redeems
 * for the balance, which is 0 afterwards; the operator's key stays disabled (its child too), the owner's is
 * enabled again; deleting again deletes the key and pays nothing a second time (the operator wallet gave the
 * refund's value once). The ledger is real; only its `deleteKey` is made to fail, through the ledger factory.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
type Json = Record<string, any>;

const ADMIN = { cookie: 'admin_password=close-key-pw' };

/**
 * 60 s, not the suite's 30 s. Some runs of this file on this machine (2026-11-30; six in a row, then none) had the
 * Redis half 15-20 s per case instead of 0.3 s: every Redis command of the gateway about 0.42 s after the one
 * before, the test process's loop polling without sleeping meanwhile. Any instrumentation made it vanish, and it
 * came and went without a code change (it was seen at commits that also ran fast). Under CI's load the slow mode
 * crossed 30 s. The cause is not found; the session note has the measurements.
 */
const SLOW_MODE_MS = 60_000;

describe.each(['sqlite', 'redis'] as const)('a delete that fails after the pay-out on %s', (store) => {
  /** How many of the next deletes the store refuses (as a store away at that step would). */
  let failDeletes = 0;
  let deleteCalls = 0;
  const h: PaidGateway = paidGatewayPerSuite({
    store,
    env: {
      ADMIN_PASSWORD: 'close-key-pw',
      FIXED_PRICING: 'true',
      FIXED_COST_PER_REQUEST: '1',
      CHILD_KEY_COST_MSATS: '0',
    },
    money: {
      createLedger: ledgerOverriding((real) => {
        const deleteKey = refusedWhile(() => failDeletes > 0 && failDeletes-- > 0, real.deleteKey.bind(real));
        return {
          deleteKey: (target) => {
            deleteCalls++;
            return deleteKey(target);
          },
        };
      }),
    },
  });

  async function req(
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<{ status: number; json: Json }> {
    const r = await fetch(`${h.gateway.url}${path}`, {
      method,
      headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: r.status, json: (await r.json()) as Json };
  }
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const chat = (key: string) =>
    req('POST', '/v1/chat/completions', bearer(key), {
      model: 'mock-gpt',
      messages: [{ role: 'user', content: 'hi' }],
    });
  /** msats the operator wallet holds, over all mints and units. */
  const held = async () => (await h.wallet.balances()).reduce((s, b) => s + b.amountMsat, 0);

  it(
    'operator: the token is handed out once, balance 0, the key and its child stay disabled; the retry pays nothing',
    async () => {
      const { apiKey, keyId } = await h.fundKey(12);
      expect((await chat(apiKey)).status).toBe(200);
      const sub = await req('POST', '/v1/balance/child-key', bearer(apiKey), { count: 1 });
      expect(sub.status, JSON.stringify(sub.json)).toBe(201);
      const child = sub.json.api_keys[0] as string;
      expect(await h.available(apiKey)).toBe(11_000);
      const heldBefore = await held();

      failDeletes = 1;
      deleteCalls = 0;
      const first = await req('DELETE', `/admin/api/keys/${keyId}?refund=true`, ADMIN);
      expect(first.status, JSON.stringify(first.json)).toBe(200);
      expect(first.json).toMatchObject({
        key_id: keyId,
        deleted: false,
        left_msats: 0,
        refund: { amount: 11, unit: 'sat', balance: 0, mint: h.mint.url },
      });
      expect(deleteCalls).toBe(1);
      // The token is the balance, once: it redeems for 11 sats and the operator wallet gave exactly that.
      expect(await h.redeem(first.json.refund.cashu_token)).toBe(11);
      expect(await held()).toBe(heldBefore - 11_000);
      // Nothing of the pay-out is left open in the wallet's journal.
      expect((await h.wallet.recover()).examined).toBe(0);
      const info = await h.ledger.getKeyInfo({ apiKey });
      expect(info?.key.disabled).toBe(true);
      expect(info?.account).toMatchObject({ balanceMsat: 0, reservedMsat: 0, withdrawnMsat: 11_000 });
      for (const k of [apiKey, child]) {
        const refused = await chat(k);
        expect(refused.status).toBe(401);
        expect(refused.json.error.code).toBe('key_disabled');
      }
      const refunds = (await h.ledger.listTransactions({ apiKey }))!.transactions.filter(
        (t) => t.type === 'refund',
      );
      expect(refunds.map((t) => t.amountMsat)).toEqual([-11_000]);

      // Again: deleted this time, nothing paid a second time.
      const again = await req('DELETE', `/admin/api/keys/${keyId}?refund=true`, ADMIN);
      expect(again.status, JSON.stringify(again.json)).toBe(200);
      expect(again.json).toMatchObject({ key_id: keyId, deleted: true, refund: null, left_msats: 0 });
      expect(await held()).toBe(heldBefore - 11_000);
      for (const k of [apiKey, child]) {
        const gone = await chat(k);
        expect(gone.status).toBe(401);
        expect(gone.json.error.code).toBe('invalid_api_key');
      }
      expect((await req('DELETE', `/admin/api/keys/${keyId}?refund=true`, ADMIN)).status).toBe(404);
    },
    SLOW_MODE_MS,
  );

  it(
    "owner: the token is handed out once and the key is enabled again with 0; the owner's retry deletes it, paying nothing",
    async () => {
      const { apiKey } = await h.fundKey(9);
      const heldBefore = await held();
      failDeletes = 1;
      const first = await req('DELETE', '/v1/wallet/', bearer(apiKey));
      expect(first.status, JSON.stringify(first.json)).toBe(200);
      expect(first.json).toMatchObject({ deleted: false, left_msats: 0, refund: { amount: 9, balance: 0 } });
      expect(await h.redeem(first.json.refund.cashu_token)).toBe(9);
      expect(await held()).toBe(heldBefore - 9_000);
      // Enabled again for its owner, with nothing left: a call is refused for want of money, not as disabled.
      const info = await h.ledger.getKeyInfo({ apiKey });
      expect(info?.key.disabled).toBe(false);
      expect(info?.account).toMatchObject({ balanceMsat: 0, reservedMsat: 0 });
      const broke = await chat(apiKey);
      expect(broke.status).toBe(402);
      expect(broke.json.error.code).toBe('payment_required');

      const again = await req('DELETE', '/v1/wallet/', bearer(apiKey));
      expect(again.status, JSON.stringify(again.json)).toBe(200);
      expect(again.json).toMatchObject({ deleted: true, refund: null, left_msats: 0 });
      expect(await held()).toBe(heldBefore - 9_000);
      expect((await chat(apiKey)).json.error.code).toBe('invalid_api_key');
    },
    SLOW_MODE_MS,
  );
});
