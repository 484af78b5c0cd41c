import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bolt11AmountMsat } from '../../core/account/operator-withdrawal.js';
import { type PaidGateway, type PaidStore, startPaidGateway } from '../support/paid-gateway.js';
import { call, errorCode } from './http.js';
import { assertDocumented } from './response-schema.js';

/**
 * The operator payout pays only the surplus (proofs held − user balances), on both stores, over the dev mint's
 * fake Lightning. A fresh node: one key funded with 20 sats (proofs 20,000 msats, owed 20,000), 4 paid calls at
 * 3 sats (owed 8,000) — surplus 12,000 msats. A 12,001-msat invoice is refused with 400
 * `payout_exceeds_surplus` and nothing is paid; 5,000 msats are paid; the preview (what the console's
 * confirmation shows) gives the same figures.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the assertions
type Json = Record<string, any>;

const PASSWORD = 'payout-pw';
const headers = { cookie: `admin_password=${PASSWORD}` };

describe('bolt11AmountMsat', () => {
  it('reads the amount of the human-readable part (BOLT 11 multipliers), null without one', () => {
    expect(bolt11AmountMsat('lnbc2500u1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsy')).toBe(250_000_000n);
    expect(bolt11AmountMsat('lnbc20m1pvjluezhp58yjmdan79s6qqdhdzgynm4zwqd5d7xmw5fk98klys')).toBe(
      2_000_000_000n,
    );
    expect(bolt11AmountMsat('lnbcrt120010p1qqqqqq')).toBe(12_001n);
    expect(bolt11AmountMsat('lntb1n1qqqq')).toBe(100n);
    expect(bolt11AmountMsat('lnbc1pvjluezpp5qqqsyqcyq5rqwz')).toBe(null);
    for (const bad of [
      'not-an-invoice',
      'lnbc',
      'lnbc10p1qqqqb',
      'lnbc01u1qqqq',
      'lnbc11p1qqqq',
      'lnbc1x1qqqq',
    ]) {
      expect(bolt11AmountMsat(bad), bad).toBeUndefined();
    }
  });
});

describe.each<PaidStore>(['sqlite', 'redis'])('admin payout against the operator surplus on %s', (store) => {
  let h: PaidGateway;
  const admin = (path: string, body: unknown) => call<Json>(h.gateway.url, 'POST', path, { body, headers });
  const held = async () => (await h.wallet.balances()).reduce((s, l) => s + l.amountMsat, 0);

  beforeAll(async () => {
    h = await startPaidGateway({
      store,
      env: { ADMIN_PASSWORD: PASSWORD, FIXED_PRICING: 'true', FIXED_COST_PER_REQUEST: '3' },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('refuses more than the surplus (400 payout_exceeds_surplus, nothing paid); pays within it', async () => {
    const { apiKey } = await h.fundKey(20);
    for (let i = 0; i < 4; i++) {
      await h.openai(apiKey).chat.completions.create({
        model: 'mock-gpt',
        messages: [{ role: 'user', content: 'hi' }],
      });
    }
    expect(await held()).toBe(20_000);
    expect(await h.ledger.totalUserBalancesMsat()).toBe(8_000);

    const tooMuch = h.mint.invoice(12_001);
    const preview = await admin('/admin/api/actions/payout/preview', { invoice: tooMuch });
    expect(preview.status).toBe(200);
    assertDocumented('POST', '/admin/api/actions/payout/preview', 200, preview.body);
    expect(preview.body).toEqual({
      amount_msat: 12_001,
      proofs_msat: 20_000,
      user_balances_msat: 8_000,
      surplus_msat: 12_000,
      allowed: false,
    });
    const refused = await admin('/admin/api/actions/payout', { confirm: true, invoice: tooMuch });
    expect(refused.status).toBe(400);
    assertDocumented('POST', '/admin/api/actions/payout', 400, refused.body);
    expect(errorCode(refused)).toBe('payout_exceeds_surplus');
    expect(refused.body.error.details).toEqual({
      amount_msat: 12_001,
      surplus_msat: 12_000,
      proofs_msat: 20_000,
      user_balances_msat: 8_000,
    });
    expect(refused.body.error.message).toContain('12001 msats');
    expect(await held()).toBe(20_000);

    const exactly = await admin('/admin/api/actions/payout/preview', { invoice: h.mint.invoice(12_000) });
    expect(exactly.body).toMatchObject({ amount_msat: 12_000, allowed: true });

    // No amount in the invoice: refused before anything is asked of the mint.
    const amountless = await admin('/admin/api/actions/payout', {
      confirm: true,
      invoice: 'lnbcrt1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq',
    });
    expect(amountless.status).toBe(400);
    expect(errorCode(amountless)).toBe('invalid_request');
    for (const invoice of ['not-an-invoice', 'lnbcrt1']) {
      const r = await admin('/admin/api/actions/payout/preview', { invoice });
      expect(r.status, invoice).toBe(400);
      assertDocumented('POST', '/admin/api/actions/payout/preview', 400, r.body);
    }
    expect(await held()).toBe(20_000);

    const paid = await admin('/admin/api/actions/payout', { confirm: true, invoice: h.mint.invoice(5_000) });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ amount_msat: 5_000, mint: h.mint.url });
    const fee = paid.body.fee_msat as number;
    expect(fee).toBeGreaterThanOrEqual(0);
    expect(await held()).toBe(15_000 - fee);
    const after = await admin('/admin/api/actions/payout/preview', { invoice: h.mint.invoice(1_000) });
    expect(after.body).toEqual({
      amount_msat: 1_000,
      proofs_msat: 15_000 - fee,
      user_balances_msat: 8_000,
      surplus_msat: 7_000 - fee,
      allowed: true,
    });
    // The users' money is untouched: the key still spends its balance.
    expect(await h.available(apiKey)).toBe(8_000);
    const anon = await call(h.gateway.url, 'POST', '/admin/api/actions/payout/preview', {
      body: { invoice: h.mint.invoice(1_000) },
    });
    expect(anon.status).toBe(401);
    await h.auditOk();
  });
});
