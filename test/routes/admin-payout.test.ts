import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PaidGateway, type PaidStore, startPaidGateway } from '../support/paid-gateway.js';
import { call, errorCode, expectAnswer } from './http.js';
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
/** BOLT 11's first example: a valid invoice without an amount. */
const AMOUNTLESS =
  'lnbc1pvjluezpp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpl2pkx2ctnv5sxxmmwwd5kgetjypeh2ursdae8g6twvus8g6rfwvs8qun0dfjkxaq8rkx3yf5tcsyz3d73gafnh3cax9rn449d9p5uxz9ezhhypd0elx87sjle52x86fux2ypatgddc6k63n7erqz25le42c4u4ecky03ylcqca784w';
const headers = { cookie: `admin_password=${PASSWORD}` };

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
    // Whitespace around a pasted invoice is not part of it.
    const padded = await admin('/admin/api/actions/payout/preview', {
      invoice: ` ${h.mint.invoice(12_000)}\n`,
    });
    expect(padded.body).toMatchObject({ amount_msat: 12_000, allowed: true });

    // No amount in the invoice (the BOLT 11 "donation" example): refused before anything is asked of the mint.
    const amountless = await admin('/admin/api/actions/payout', { confirm: true, invoice: AMOUNTLESS });
    expect(amountless.status).toBe(400);
    expect(errorCode(amountless)).toBe('invalid_request');
    // Not a valid BOLT11 invoice (garbage, a bad checksum, mixed case): 400 from the preview, nothing paid.
    const valid = h.mint.invoice(1_000);
    const badChecksum = `${valid.slice(0, -1)}${valid.endsWith('q') ? 'p' : 'q'}`;
    const mixedCase = `LNBCRT${valid.slice(6)}`;
    for (const invoice of ['not-an-invoice', 'lnbcrt1', badChecksum, mixedCase]) {
      const r = await admin('/admin/api/actions/payout/preview', { invoice });
      expect(r.status, invoice).toBe(400);
      assertDocumented('POST', '/admin/api/actions/payout/preview', 400, r.body);
    }
    expect(await held()).toBe(20_000);

    const paid = await admin('/admin/api/actions/payout', { confirm: true, invoice: h.mint.invoice(5_000) });
    expectAnswer(paid, 200, { amount_msat: 5_000, mint: h.mint.url });
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
